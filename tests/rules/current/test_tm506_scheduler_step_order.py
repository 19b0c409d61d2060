"""TM506: `scheduler.step()` before the optimizer moves to the end of the loop (unsafe)."""
import textwrap

import pytest

from current_support import execute, migrate


LOOP = """
import torch
from torch.optim import lr_scheduler
param = torch.nn.Parameter(torch.zeros(1))
optimizer = torch.optim.SGD([param], lr=1.0)
scheduler = lr_scheduler.{make}
seen = []

def train(epoch):
    param.grad = torch.zeros(1)
    optimizer.step()

for epoch in range(7):
    scheduler.step()
    seen.append(optimizer.param_groups[0]['lr'])
    train(epoch)
"""


@pytest.mark.parametrize("make", ["StepLR(optimizer, step_size=2, gamma=0.5)", "MultiStepLR(optimizer, [1, 4], 0.1)",
                                  "ExponentialLR(optimizer, 0.9)", "LambdaLR(optimizer, lambda e: 1.0 / (e + 1))",
                                  "CosineAnnealingLR(optimizer, 4)"])
def test_scheduler_fix_restores_the_legacy_schedule(make):
    source = LOOP.format(make=make)
    assert migrate(source).text == source  # unsafe: not applied by default
    outcome = migrate(source, unsafe=True)
    assert outcome.text.rstrip().endswith("train(epoch)\n    scheduler.step()")
    done = execute(outcome.text)
    # Legacy 0.4: epoch e trained with lr(e), the schedule's value at last_epoch = e (the constructor ran
    # step(0) and reset last_epoch to -1; the step() at the top of epoch e set lr(e)).
    legacy = []
    for epoch in range(7):
        reference = execute(source.split("seen = []")[0])
        for _ in range(epoch):
            reference["scheduler"].step()
        legacy.append(reference["optimizer"].param_groups[0]["lr"])
    assert done["seen"] == pytest.approx(legacy)
    assert execute(source)["seen"] != pytest.approx(legacy)


def test_scheduler_with_continue_is_only_reported():
    source = """
    for epoch in range(10):
        scheduler.step()
        if skip(epoch):
            continue
        for x in loader:
            optimizer.step()
    """
    outcome = migrate(source, unsafe=True)
    assert outcome.text == textwrap.dedent(source)
    assert [(f.code, f.fixable) for f in outcome.findings] == [("TM506", False)]
