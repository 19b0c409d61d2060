"""TM511: `.view()` of non-contiguous results."""
import ast
import textwrap
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import codemods
from codemods import torchapi
from codemods.engine import run_rules

from current_support import codes, execute, migrate


def _imagenet_accuracy_source():
    """``accuracy()`` exactly as samples/imagenet_style.py has it (pytorch/examples 0.3-era)."""
    sample = Path(__file__).parents[3] / "samples" / "imagenet_style.py"
    text = sample.read_text()
    function = next(node for node in ast.parse(text.replace("async=True", "non_blocking=True")).body
                    if isinstance(node, ast.FunctionDef) and node.name == "accuracy")
    return "import torch\n" + ast.get_source_segment(text, function) + "\n"


def test_view_accuracy_raises_before_and_matches_contiguous_numbers_after():
    source = _imagenet_accuracy_source()
    torch.manual_seed(0)
    output, target = torch.randn(16, 10), torch.randint(0, 10, (16,))
    target[:4] = output[:4].argmax(1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        execute(source)["accuracy"](output, target, topk=(1, 5))
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM511"]
    assert "correct[:k].reshape(-1).float().sum(0)" in outcome.text
    assert "target.view(1, -1)" in outcome.text
    got = execute(outcome.text)["accuracy"](output, target, topk=(1, 5))
    # The legacy computation: comparison results were contiguous.
    correct = output.topk(5, 1, True, True)[1].t().eq(target.view(1, -1)).contiguous()
    expected = [correct[:k].view(-1).float().sum(0) * (100.0 / 16) for k in (1, 5)]
    assert [g.item() for g in got] == [e.item() for e in expected]
    assert got[0].item() >= 25.0


def test_view_sample_script_gets_the_fix_with_every_rule():
    text = (Path(__file__).parents[3] / "samples" / "imagenet_style.py").read_text()
    outcome = run_rules(text, codemods.all_rules())
    assert [f.line for f in outcome.findings if f.code == "TM511"] == [326]
    assert outcome.text.count(".reshape(") == 1 and "input.view(" not in outcome.text.replace(".reshape(", "")


@pytest.mark.parametrize("source,expected", [
    ("import torch\ndef f(x):\n    h = torch.transpose(x, 0, 1)\n    return (h > 0).view(-1)\n",
     "(h > 0).reshape(-1)"),
    ("def f(x):\n    y = x.t().float() * 2\n    z = y[1:]\n    return z.view(-1).sum()\n", "z.reshape(-1)"),
    ("def f(x):\n    y = x.T.abs()\n    return y.view(-1).mean()\n", "y.reshape(-1)"),
    ("def f(x, w):\n    s = x.permute(0, 2, 1).mul(w)\n    return s.view_as(w)\n", "s.reshape_as(w)"),
    ("import torch.nn.functional as F\ndef f(x):\n    return F.relu(x.transpose(1, 2)).view(x.size(0), -1)\n",
     "F.relu(x.transpose(1, 2)).reshape(x.size(0), -1)"),
    ("def f(x):\n    if x.dim() > 2:\n        x = x.transpose(1, 2)\n    return (x + 1).view(-1)\n", "(x + 1).reshape(-1)"),
    ("def f(x):\n    e = x.expand(4, 3)\n    return e[:2].view(-1).tolist()\n", "e[:2].reshape(-1)"),
    ("pred = out.topk(5, 1)[1].t()\nc = pred.eq(y)\nprint(c[:5].view(-1).sum())\n", "c[:5].reshape(-1)"),
])
def test_view_spellings_are_fixed(source, expected):
    outcome = migrate(source)
    assert codes(outcome) == ["TM511"] and codes(outcome, applied=True) == ["TM511"]
    assert expected in outcome.text
    assert migrate(outcome.text).text == outcome.text


@pytest.mark.parametrize("source", [
    "def f(x):\n    c = x.t() * 2\n    flat = c.view(-1)\n    flat.add_(1)\n    return c\n",
    "def f(x):\n    c = x.t() * 2\n    c.view(-1).zero_()\n    return c\n",
    "def f(x):\n    c = x.t() * 2\n    c.view(-1)[0] = 1\n    return c\n",
    "def f(x):\n    c = x.t() * 2\n    flat = c.view(-1)\n    flat += 1\n    return c\n",
    "import torch.nn as nn\ndef f(x):\n    c = x.t() * 2\n    nn.init.normal_(c.view(-1))\n    return c\n",
    "import torch\ndef f(x):\n    c = x.t() * 2\n    torch.add(x.view(-1), 1, out=c.view(-1))\n",
    "def f(self, x):\n    self.flat = (x.t() * 2).view(-1)\n",
])
def test_view_written_in_place_is_only_reported(source):
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source)
    assert codes(outcome) == ["TM511"] and codes(outcome, applied=True) == []
    assert outcome.findings[0].hint


@pytest.mark.parametrize("source", [
    "def f(x):\n    x = x.t()\ndef g(x):\n    return (x * 2).view(-1)\n",  # another function's transpose
    "def f(x):\n    return x.t().contiguous().mul(2).view(-1)\n",
    "def f(x):\n    y = x.t()\n    y = y.contiguous() * 2\n    return y.view(-1)\n",
    "def f(x):\n    y = x.narrow(1, 0, 2) + 1\n    return y.view(-1)\n",
    "def f(x):\n    y = x.t()\n    return y.matmul(x).view(-1)\n",
    "import torch\ndef f(x):\n    return x.t().view(torch.int32)\n",
    "def f(x):\n    x = x.transpose(0, 1)\n    out = self.rnn(x)\n    return out.view(-1, 10)\n",
])
def test_view_near_misses_are_left_alone(source):
    outcome = migrate(source)
    assert outcome.text == source and outcome.findings == []


BINARY = ("eq", "ne", "gt", "lt", "ge", "le", "add", "sub", "mul", "div", "pow", "remainder", "fmod")
LAYOUT_ARGS = {"where": (0.0,), "clamp": (-0.5, 0.5), "reshape": (4, 6), "flatten": (1,), "reshape_as": "self", "type_as": "self",
               "type": (torch.float64,), "to": (torch.float64,), "unsqueeze": (0,), "select": (2, 0),
               **{name: "self" for name in BINARY}}


def _apply(name, x):
    args = LAYOUT_ARGS.get(name, ())
    args = (x,) if args == "self" else args
    if name == "where":
        return torch.where(x > 0, x, *args)
    if hasattr(torch.Tensor, name):
        return getattr(x, name)(*args)
    return getattr(torch.nn.functional, name)(x, *args)


@pytest.mark.parametrize("name", sorted(torchapi.ELEMENTWISE | torchapi.LAYOUT_ALIASES - {"view", "view_as", "cuda"}))
def test_view_layout_table_matches_torch(name):
    """Every elementwise/alias entry keeps a transposed input's layout on this torch."""
    x = torch.randn(2, 3, 4).permute(2, 0, 1)
    result = _apply(name, x)
    assert result.dim() >= 2 and not result.is_contiguous(), name


@pytest.mark.parametrize("name", sorted(torchapi.ELEMENTWISE - {"clone", "where"}))
def test_view_elementwise_of_expanded_or_narrowed_is_contiguous(name):
    """Why ``.expand()``/``.narrow()`` only matter to views of them, not to elementwise results."""
    for strided in (torch.randn(1, 4).expand(3, 4), torch.randn(3, 6).narrow(1, 1, 4)):
        args = LAYOUT_ARGS.get(name, ())
        args = (strided.contiguous(),) if args == "self" else args
        function = getattr(torch.Tensor, name, None) or getattr(torch.nn.functional, name)
        assert function(strided, *args).is_contiguous(), name


@settings(max_examples=40, deadline=None)
@given(st.permutations([0, 1, 2]), st.sampled_from([(-1,), (6, -1), (2, 3, 4), (24,), (4, 6)]))
def test_view_reshape_is_the_view_where_one_is_possible(order, shape):
    """Why the fix is safe: where `.view()` works, `.reshape()` returns that same view."""
    x = torch.arange(24.0).reshape(2, 3, 4).permute(*order)
    try:
        viewed = x.view(*shape)
    except RuntimeError:
        reshaped = x.reshape(*shape)
        assert reshaped.is_contiguous() and torch.equal(reshaped, x.contiguous().view(*shape))
        return
    reshaped = x.reshape(*shape)
    assert reshaped.data_ptr() == viewed.data_ptr() and reshaped.stride() == viewed.stride()
