"""lr_scheduler.step() at the top of the epoch shifts the schedule since 1.1; stepping last restores it.

Legacy (0.4) epoch e trained with the closed-form lr(e): the constructor called step(0) and reset
last_epoch to -1, and the step() at the top of epoch e set lr(e).
"""
import warnings

import torch
from torch.optim import lr_scheduler

warnings.simplefilter("ignore")  # "Detected call of `lr_scheduler.step()` before `optimizer.step()`"


def lrs(make, order):
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=1.0)
    scheduler = make(optimizer)
    seen = []
    for epoch in range(6):
        if order == "first":
            scheduler.step()
        seen.append(round(optimizer.param_groups[0]["lr"], 8))
        param.grad = torch.zeros(1)
        optimizer.step()
        if order == "last":
            scheduler.step()
    return seen


step = lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5)  # noqa: E731
legacy = [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]  # closed form lr(e) = 0.5 ** (e // 2)
assert lrs(step, "first") == [1.0, 0.5, 0.5, 0.25, 0.25, 0.125]  # one epoch early
assert lrs(step, "last") == legacy
