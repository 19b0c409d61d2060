"""TM303: `.data` reads become `.detach()` or the value itself.

Rewrites are checked for their text and, with real torch, for computing what the legacy code computed
(the legacy `.data` forms still run on torch 2.x, so old and new run side by side)."""
import numpy as np
import pytest
import torch

import codemods
from data_support import execute, migrate


@pytest.mark.parametrize("source", [
    "import numpy as np\narr = np.zeros(3)\nbuf = arr.data\n",
    "import argparse\nargs = argparse.ArgumentParser().parse_args()\ncorpus = Corpus(args.data)\n",
    "from torchvision import datasets\nds = datasets.MNIST('.')\nn = ds.data.size(0)\n",
    "import torch.utils.data\nloader = torch.utils.data.DataLoader(ds)\n",
    "class D:\n    def __len__(self):\n        return len(self.data)\n",
    "train_set = load()\nx = train_set.data[0]\ny = opt.data\n",
    "def fill(t):\n    t.zero_()\n\n\nfill(h.data)\n",
    "h.data = h.data.cuda()\n",
])
def test_data_attributes_that_are_not_tensor_reads_are_left_alone(source):
    outcome = migrate(source, rules=codemods.all_rules())
    assert ".data" in outcome.text
    assert not [f for f in outcome.findings if f.code.startswith("TM3")]


def test_detach_reads_give_the_same_values_and_report_hidden_in_place_changes():
    source = """
    import torch
    w = torch.randn(3, requires_grad=True)
    y = (w * 2).sigmoid()
    values = y.data.cpu().numpy()
    alias = y.data
    """
    outcome = migrate(source)
    assert "y.detach().cpu().numpy()" in outcome.text and "alias = y.detach()" in outcome.text
    torch.manual_seed(0)
    legacy = execute(source)
    torch.manual_seed(0)
    migrated = execute(outcome.text)
    assert np.array_equal(legacy["values"], migrated["values"])
    # `.data` hides an in-place change from autograd (silently wrong gradient); `.detach()` reports it.
    legacy["alias"].zero_()
    legacy["y"].sum().backward()  # no error: sigmoid's saved output was zeroed behind autograd's back
    migrated["alias"].zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        migrated["y"].sum().backward()


def test_plain_reads_where_no_graph_can_follow():
    outcome = migrate("""
    import torch
    import torch.nn as nn
    x, out = torch.randn(3), net(torch.randn(3))
    n = x.data.size(0)
    s = x.data.shape
    mask = (x.data > 0).float()
    z = x.data.new(3).zero_()
    g = p.grad.data
    nn.init.orthogonal_(m.weight.data)
    top = out.data.topk(5)[1]
    vals = out.data.topk(5)[0]
    """)
    text = outcome.text
    for expected in ("n = x.size(0)", "s = x.shape", "mask = (x > 0).float()", "z = x.new(3).zero_()",
                     "g = p.grad\n", "nn.init.orthogonal_(m.weight)", "top = out.topk(5)[1]",
                     "vals = out.detach().topk(5)[0]"):
        assert expected in text


def test_grad_reads_keep_detach_when_the_file_builds_higher_order_graphs():
    outcome = migrate("loss.backward(create_graph=True)\ng = p.grad.data\n")
    assert "g = p.grad.detach()" in outcome.text
