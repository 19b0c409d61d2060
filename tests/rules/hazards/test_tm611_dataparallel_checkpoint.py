"""TM611: a DataParallel model's state dict loaded into a bare model (or the reverse) raises "Missing key(s)" on
current torch (with strict=False it loads nothing); both described fixes load it."""
import pytest
import torch
import torch.nn as nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

from hazard_support import CASES, check, load, located


def test_mismatched_wrappings_fail_to_load():
    module = load(CASES / "checkpoint_bad.py")
    for hazard in module.HAZARDS:
        with pytest.raises(RuntimeError, match="Missing key"):
            hazard()
    saved, loaded = module.not_strict()  # strict=False: no error, and nothing loaded
    assert not torch.equal(saved.fc.weight, loaded.fc.weight)


def test_described_fixes_load_the_weights(tmp_path):
    wrapped = nn.DataParallel(nn.Linear(3, 2))
    torch.save(wrapped.state_dict(), tmp_path / "dp.pth")
    assert all(key.startswith("module.") for key in torch.load(tmp_path / "dp.pth"))
    state = torch.load(tmp_path / "dp.pth")
    consume_prefix_in_state_dict_if_present(state, "module.")
    bare = nn.Linear(3, 2)
    bare.load_state_dict(state)
    assert torch.equal(bare.weight, wrapped.module.weight)
    torch.save(wrapped.module.state_dict(), tmp_path / "module.pth")
    nn.Linear(3, 2).load_state_dict(torch.load(tmp_path / "module.pth"))


def test_message_names_the_save_and_the_fix():
    finding = next(f for f in check((CASES / "checkpoint_bad.py").read_text()).findings if f.code == "TM611")
    assert finding.line == 27 and "saved at line 25" in finding.message and "`model`" in finding.message
    assert "model.module.state_dict()" in finding.hint and "consume_prefix_in_state_dict_if_present" in finding.hint


@pytest.mark.parametrize("source", [
    # the path is not the same expression
    "import torch\nimport torch.nn as nn\nm = nn.DataParallel(Net())\ntorch.save(m.state_dict(), a)\n"
    "n = Net()\nn.load_state_dict(torch.load(b))\n",
    # the keys differ
    "import torch\nimport torch.nn as nn\nm = nn.DataParallel(Net())\ntorch.save({'model': m.state_dict()}, p)\n"
    "n = Net()\nn.load_state_dict(torch.load(p)['ema'])\n",
    # how the loader was built is not shown
    "import torch\nimport torch.nn as nn\nm = nn.DataParallel(Net())\ntorch.save(m.state_dict(), p)\n"
    "def evaluate(net):\n    net.load_state_dict(torch.load(p))\n",
    # the state dict is edited before loading
    "import torch\nimport torch.nn as nn\nm = nn.DataParallel(Net())\ntorch.save(m.state_dict(), p)\n"
    "sd = torch.load(p)\nsd.pop('module.extra')\nn = Net()\nn.load_state_dict(sd)\n",
])
def test_unproven_pairs_are_left_alone(source):
    assert located(check(source)) == []


def test_a_trainer_attribute_and_a_separate_evaluation_are_matched():
    source = """import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.model = nn.DataParallel(Net())

    def save(self):
        torch.save(self.model.state_dict(), 'ckpt.pth')


def evaluate():
    net = Net()
    net.load_state_dict(torch.load('ckpt.pth'))
"""
    assert located(check(source)) == [("TM611", 15)]
    assert located(check(source.replace("self.model.state_dict()", "self.model.module.state_dict()"))) == []
