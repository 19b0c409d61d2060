"""TM408: removed keywords. The legacy calls fail on this torch; the migrated ones build the same dataset and
the same learning-rate schedule."""
import pytest
import torch

from deprecated_support import execute, migrate, rule

TM408 = [rule("TM408")]

DATASET = """
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
x, y = torch.randn(5, 3), torch.randint(0, 2, (5,))
train = TensorDataset(data_tensor=x, target_tensor=y)
swapped = TensorDataset(target_tensor=y, data_tensor=x)
batches = [b for b in DataLoader(train, batch_size=2)]
result = ([train[i] for i in range(len(train))], [swapped[i] for i in range(len(swapped))], batches)
"""


def test_tensor_dataset_keywords_become_the_pairs_0_3_stored():
    with pytest.raises(TypeError, match="data_tensor"):
        execute(DATASET)
    outcome = migrate(DATASET, TM408)
    assert "TensorDataset(x, y)" in outcome.text and outcome.text.count("TensorDataset(x, y)") == 2
    pairs, swapped, batches = execute(outcome.text)["result"]
    x, y = execute(DATASET.split("train =")[0])["x"], execute(DATASET.split("train =")[0])["y"]
    assert len(pairs) == 5
    for i, (data, target) in enumerate(pairs):  # 0.3: dataset[i] == (data_tensor[i], target_tensor[i])
        assert torch.equal(data, x[i]) and torch.equal(target, y[i])
        assert torch.equal(swapped[i][0], x[i])
    assert torch.equal(batches[0][0], x[:2]) and torch.equal(batches[0][1], y[:2])


def test_module_alias_and_spacing_seen_in_tutorials():
    source = "import torch.utils.data as Data\nds = Data.TensorDataset(data_tensor= xs, target_tensor= ys)\n"
    assert migrate(source, TM408).text == "import torch.utils.data as Data\nds = Data.TensorDataset(xs, ys)\n"


@pytest.mark.parametrize("source", [
    "from torch.utils.data import TensorDataset\nds = TensorDataset(x, target_tensor=y)\n",
    "from torch.utils.data import TensorDataset\nds = TensorDataset(target_tensor=y)\n",
    "from torch.utils.data import TensorDataset\nds = TensorDataset(**kw, data_tensor=x)\n",
])
def test_mixed_calls_are_reported_and_left(source):
    """A call that already passes something positionally: which value 0.3 meant where is for a human."""
    outcome = migrate(source, TM408)
    assert outcome.text == source and [(f.code, f.fixable) for f in outcome.findings] == [("TM408", False)]


SCHEDULE = """
import torch
from torch.optim import lr_scheduler
w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=1.0)
sched = lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.1, verbose={flag})
plateau = lr_scheduler.ReduceLROnPlateau(opt, 'min', patience=0, verbose={flag})
rates = []
for epoch in range(5):
    opt.step()
    sched.step()
    plateau.step(1.0)
    rates.append(opt.param_groups[0]['lr'])
result = rates
"""


@pytest.mark.parametrize("flag,unsafe", [("False", False), ("True", True), ("args.verbose", True)])
def test_scheduler_verbose_goes_and_the_schedule_is_the_same(flag, unsafe):
    source = SCHEDULE.format(flag=flag)
    outcome = migrate(source, TM408)
    assert [(f.code, f.unsafe, f.applied) for f in outcome.findings] == [("TM408", unsafe, not unsafe)] * 2
    fixed = migrate(source, TM408, unsafe=True).text
    assert "verbose" not in fixed
    with pytest.raises(TypeError, match="verbose"):
        execute(source.replace("args.verbose", "True"))
    expected = execute(SCHEDULE.replace(", verbose={flag}", ""))["result"]
    assert execute(fixed)["result"] == expected
    assert expected[0] == 0.1 and expected[-1] < expected[1] < expected[0]  # both schedulers acted


PLATEAU = """
import torch
from torch.optim.lr_scheduler import ReduceLROnPlateau
w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=1.0)
sched = ReduceLROnPlateau(opt, 'min', 0.5, 0, {verbose}, 0.5, 'abs')
rates = []
for loss in [1.0, 0.8, 0.6, 0.5, 0.45]:
    opt.step()
    sched.step(loss)
    rates.append(opt.param_groups[0]['lr'])
result = rates
"""


def test_plateau_fifth_positional_verbose_goes_and_the_rest_keep_their_legacy_meaning():
    """0.4-1.x: (optimizer, mode, factor, patience, verbose, threshold, threshold_mode). On this torch the
    legacy call shifts: the bool becomes the threshold, 0.5 the threshold_mode (an error here; with fewer
    arguments a silent change of threshold)."""
    legacy = PLATEAU.format(verbose="False")
    with pytest.raises((TypeError, ValueError)):
        execute(legacy)
    outcome = migrate(legacy, TM408)
    assert "ReduceLROnPlateau(opt, 'min', 0.5, 0, threshold=0.5, threshold_mode='abs')" in outcome.text
    # what 1.x computed: an improvement counts only when it beats the best by 0.5 (absolute); with the
    # default threshold the falling losses would keep the rate at 1.0
    expected = execute(PLATEAU.replace(", {verbose}, 0.5, 'abs'", ", threshold=0.5, threshold_mode='abs'"))
    assert execute(outcome.text)["result"] == expected["result"] == [1.0, 0.5, 0.25, 0.125, 0.125]
    assert "threshold=0.5" in migrate(PLATEAU.format(verbose="True"), TM408, unsafe=True).text
    flagged = migrate(PLATEAU.format(verbose="args.verbose"), TM408, unsafe=True)
    assert flagged.text == PLATEAU.format(verbose="args.verbose") and not flagged.findings[0].fixable
