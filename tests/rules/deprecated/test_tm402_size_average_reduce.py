"""TM402: `size_average=`/`reduce=` become the `reduction=` torch itself maps them to."""
import itertools
import warnings

import pytest
import torch

from codemods.torchapi.deprecations import LOSS_PARAMETERS, legacy_reduction

from deprecated_support import PRELUDE, migrate, resolve, run, same


def test_legacy_pair_mapping_is_torch_own():
    from torch.nn._reduction import legacy_get_string
    for size_average, reduce in itertools.product([None, True, False], repeat=2):
        assert legacy_reduction(size_average, reduce) == legacy_get_string(size_average, reduce,
                                                                                       emit_warning=False)


@pytest.mark.parametrize("size_average,reduce", [pair for pair in itertools.product(["None", "True", "False", None],
                                                                                  repeat=2) if pair != (None, None)])
@pytest.mark.parametrize("template", [
    "logp = F.log_softmax(torch.randn(5, 4), 1)\nt = torch.tensor([0, 1, 2, 3, 0])\n"
    "result = F.nll_loss(logp, t{args})",
    "result = nn.MSELoss({args0})(a, b)",
    "result = F.binary_cross_entropy(torch.sigmoid(a), torch.rand(3, 3), torch.rand(3){args})",
    "result = nn.KLDivLoss({args0})(F.log_softmax(a, 1), F.softmax(b, 1))",
])
def test_reduction_gives_the_legacy_loss(template, size_average, reduce):
    pairs = [(k, v) for k, v in (("size_average", size_average), ("reduce", reduce)) if v is not None]
    args = ", ".join(f"{k}={v}" for k, v in pairs)
    source = template.format(args=", " + args, args0=args)
    outcome = migrate(PRELUDE + source)
    assert "size_average" not in outcome.text and "reduce=" not in outcome.text
    torch.manual_seed(0)
    legacy = run(source)
    torch.manual_seed(0)
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message=".*size_average")  # the migrated call no longer warns
        exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(legacy, namespace["result"])


def test_positional_legacy_arguments_become_keywords():
    source = ("logp = F.log_softmax(torch.randn(5, 4), 1)\nt = torch.tensor([0, 1, 2, -1, 0])\n"
              "result = (nn.NLLLoss(None, False, -1)(logp, t), F.nll_loss(logp, t, None, True, -1, False),"
              " F.mse_loss(a, b, False), nn.CrossEntropyLoss(torch.ones(4), False, reduction='none')(logp, t.abs()))")
    outcome = migrate(PRELUDE + source)
    assert "nn.NLLLoss(None, ignore_index=-1, reduction='sum')" in outcome.text
    assert "F.nll_loss(logp, t, None, ignore_index=-1, reduction='none')" in outcome.text
    assert "F.mse_loss(a, b, reduction='sum')" in outcome.text
    assert "nn.CrossEntropyLoss(torch.ones(4), reduction='sum')" in outcome.text  # the pair overrides
    namespace = {}
    exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(run(source), namespace["result"])


def test_computed_size_average_is_unsafe_and_computed_reduce_only_reported():
    outcome = migrate("import torch.nn as nn\nc = nn.L1Loss(size_average=avg)\nd = nn.L1Loss(reduce=r)\n")
    assert [(f.code, f.fixable) for f in outcome.findings] == [("TM402", True), ("TM402", False)]
    assert not any(f.applied for f in outcome.findings)


def test_every_loss_in_the_table_accepts_its_parameters_on_this_torch():
    import inspect
    for qualified, params in LOSS_PARAMETERS.items():
        signature = list(inspect.signature(resolve(qualified)).parameters)
        if qualified.startswith("torch.nn.") and qualified[9:10].isupper():
            signature = list(inspect.signature(resolve(qualified).__init__).parameters)[1:]
        assert signature[:len(params)] == list(params), qualified
