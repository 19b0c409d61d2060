"""TM101: `Variable(x)` becomes `x`, `x.detach()` or exact `requires_grad` code; the spellings of real 0.3 code."""
import textwrap

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import codemods
from variable_support import HEADER, codes, execute, idempotent, legacy, migrate, rewrite_line


# -- TM101: when is the argument free of history? -------------------------------------------------
@pytest.mark.parametrize("before,after", [
    # loader elements, however they are unpacked
    ("for data, target in train_loader:\n    out = net(Variable(data))\n",
     "for data, target in train_loader:\n    out = net(data)\n"),
    ("for i, (x, y) in enumerate(tqdm(self.val_loader)):\n    out = net(Variable(x), Variable(y))\n",
     "for i, (x, y) in enumerate(tqdm(self.val_loader)):\n    out = net(x, y)\n"),
    ("for i, data in enumerate(trainloader, 0):\n    inputs, labels = data\n    out = net(Variable(inputs))\n",
     "for i, data in enumerate(trainloader, 0):\n    inputs, labels = data\n    out = net(inputs)\n"),
    ("for batch in loader:\n    x = batch[0].cuda().float()\n    y = net(Variable(x))\n",
     "for batch in loader:\n    x = batch[0].cuda().float()\n    y = net(x)\n"),
    ("dataiter = iter(testloader)\nimages, labels = dataiter.next()\nout = net(Variable(images))\n",
     "dataiter = iter(testloader)\nimages, labels = dataiter.next()\nout = net(images)\n"),
    ("x, y = next(iter(loader))\nout = net(Variable(x))\n", "x, y = next(iter(loader))\nout = net(x)\n"),
    ("loader = DataLoader(ds)\nfor x in loader:\n    out = net(Variable(x))\n",
     "loader = DataLoader(ds)\nfor x in loader:\n    out = net(x)\n"),
    # factories, legacy constructors and their aliases, `.new`
    ("z = Variable(torch.randn(4, 100))\n", "z = torch.randn(4, 100)\n"),
    ("z = Variable(torch.cuda.FloatTensor(4, 100).normal_(0, 1))\n",
     "z = torch.cuda.FloatTensor(4, 100).normal_(0, 1)\n"),
    ("Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\nz = Variable(Tensor(4, 100).normal_())\n",
     "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\nz = Tensor(4, 100).normal_()\n"),
    ("h = Variable(weight.new(2, 4, 8).zero_())\n", "h = weight.new(2, 4, 8).zero_()\n"),
    ("h = Variable(torch.zeros(3) + 1).cuda()\n", "h = (torch.zeros(3) + 1).cuda()\n"),
    ("lst = [Variable(t) for t in torch.zeros(3, 2)]\n", "lst = [t for t in torch.zeros(3, 2)]\n"),
    # names whose every binding is data (a cycle through the name adds nothing)
    ("x = torch.zeros(3)\nfor i in range(3):\n    x = x * 2 + i\nv = Variable(x)\n",
     "x = torch.zeros(3)\nfor i in range(3):\n    x = x * 2 + i\nv = x\n"),
    # `.data` and `.detach()` are cuts already
    ("out = netD(Variable(fake.data))\n", "out = netD(fake.detach())\n"),
    ("out = netD(Variable(fake.detach()))\n", "out = netD(fake.detach())\n"),
    ("c = Variable(x.data.clone())\n", "c = x.data.clone()\n"),
    ("def f(self, x, h0=Variable(torch.zeros(1))):\n    return x\n",
     "def f(self, x, h0=torch.zeros(1)):\n    return x\n"),
    # a function of the file whose every return is data (the char-RNN tutorial's lineToTensor)
    ("def lineToTensor(line):\n    tensor = torch.zeros(len(line), 1, 57)\n    for li, letter in enumerate(line):\n"
     "        tensor[li][0][ord(letter) % 57] = 1\n    return tensor\n\nx = Variable(lineToTensor('ab'))\n",
     "def lineToTensor(line):\n    tensor = torch.zeros(len(line), 1, 57)\n    for li, letter in enumerate(line):\n"
     "        tensor[li][0][ord(letter) % 57] = 1\n    return tensor\n\nx = lineToTensor('ab')\n"),
    # a plain top-level assignment hides earlier bindings, parameters included (pytorch/examples reinforce.py)
    ("def select_action(state):\n    state = torch.from_numpy(state).float().unsqueeze(0)\n"
     "    probs = policy(Variable(state))\n",
     "def select_action(state):\n    state = torch.from_numpy(state).float().unsqueeze(0)\n    probs = policy(state)\n"),
    ("def f(x):\n    x = model(x)\n    x = torch.zeros(2)\n    return Variable(x)\n",
     "def f(x):\n    x = model(x)\n    x = torch.zeros(2)\n    return x\n"),
])
def test_wrapper_goes_when_the_argument_has_no_history(before, after):
    assert rewrite_line(before) == after


@pytest.mark.parametrize("before,after", [
    ("y = Variable(model(x))\n", "y = model(x).detach()\n"),
    ("y = Variable(self.hidden)\n", "y = self.hidden.detach()\n"),
    ("def f(x):\n    return Variable(x)\n", "def f(x):\n    return x.detach()\n"),
    ("def f(data, target):\n    return net(Variable(data))\n", "def f(data, target):\n    return net(data.detach())\n"),
    ("for p in model.parameters():\n    z = Variable(p)\n", "for p in model.parameters():\n    z = p.detach()\n"),
    ("q = Variable(a + w).cuda()\n", "q = (a + w).detach().cuda()\n"),
    ("q = Variable(-x).sum()\n", "q = (-x).detach().sum()\n"),
    ("h = torch.zeros(1)\nfor x in loader:\n    h = rnn(x, h)\n    y = Variable(h)\n",
     "h = torch.zeros(1)\nfor x in loader:\n    h = rnn(x, h)\n    y = h.detach()\n"),
    ("out = model(x)\nfirst = Variable(out[0])\n", "out = model(x)\nfirst = out[0].detach()\n"),
    ("w = torch.load('w.pt')\nv = Variable(w)\n", "w = torch.load('w.pt')\nv = w.detach()\n"),
    ("x = torch.zeros(3)\ndef f():\n    global x\n    x = model(x)\n    return Variable(x)\n",
     "x = torch.zeros(3)\ndef f():\n    global x\n    x = model(x)\n    return x.detach()\n"),
    ("g = lambda x: Variable(x)\n", "g = lambda x: x.detach()\n"),
    ("lst = [Variable(t) for t in outputs]\n", "lst = [t.detach() for t in outputs]\n"),
    ("def ident(x):\n    return x\nv = Variable(ident(t))\n", "def ident(x):\n    return x\nv = ident(t).detach()\n"),
    ("def gen():\n    yield torch.zeros(1)\n    return torch.zeros(1)\nv = Variable(gen())\n",
     "def gen():\n    yield torch.zeros(1)\n    return torch.zeros(1)\nv = gen().detach()\n"),
    ("w = torch.zeros(3, requires_grad=True)\nv = Variable(w)\n",
     "w = torch.zeros(3, requires_grad=True)\nv = w.detach()\n"),
    ("x = batch.x\nv = Variable(x)\n", "x = batch.x\nv = x.detach()\n"),
    # bindings that can still reach the use: a later one in the same loop, a conditional one, a later plain one
    ("def g(x):\n    x = torch.zeros(3)\n    for i in range(3):\n        y = Variable(x)\n        x = model(x)\n",
     "def g(x):\n    x = torch.zeros(3)\n    for i in range(3):\n        y = x.detach()\n        x = model(x)\n"),
    ("def h(x):\n    if cond:\n        x = torch.zeros(3)\n    return Variable(x)\n",
     "def h(x):\n    if cond:\n        x = torch.zeros(3)\n    return x.detach()\n"),
    ("def k(x):\n    x = torch.zeros(3)\n    x = model(x)\n    return Variable(x)\n",
     "def k(x):\n    x = torch.zeros(3)\n    x = model(x)\n    return x.detach()\n"),
])
def test_graph_may_flow_so_the_cut_is_kept(before, after):
    assert rewrite_line(before) == after


@pytest.mark.parametrize("before,after", [
    ("w = Variable(torch.randn(5, 3), requires_grad=True)\n", "w = torch.randn(5, 3, requires_grad=True)\n"),
    ("w = Variable(torch.randn(5, 3), True)\n", "w = torch.randn(5, 3, requires_grad=True)\n"),
    ("w = Variable(torch.randn(5, 3,), requires_grad=True)\n", "w = torch.randn(5, 3, requires_grad=True)\n"),
    ("w = Variable(torch.zeros(3)\n             , requires_grad=True)\n", "w = torch.zeros(3, requires_grad=True)\n"),
    ("w = Variable(torch.zeros(\n    3,\n    4,\n), requires_grad=True)\n",
     "w = torch.zeros(\n    3,\n    4,\n    requires_grad=True,\n)\n"),
    ("w = Variable(torch.ones(2), requires_grad=flag)\n", "w = torch.ones(2, requires_grad=flag)\n"),
    ("w = Variable(torch.zeros(1).type(dtype), requires_grad=True)\n",
     "w = torch.zeros(1).type(dtype).requires_grad_()\n"),
    ("w = Variable(torch.FloatTensor(3).normal_(), requires_grad=True)\n",
     "w = torch.FloatTensor(3).normal_().requires_grad_()\n"),
    ("w = Variable(torch.from_numpy(a), requires_grad=True)\n", "w = torch.from_numpy(a).requires_grad_()\n"),
    ("w = Variable(t, requires_grad=True)\n", "w = t.detach().requires_grad_()\n"),
    ("w = Variable(p.data, requires_grad=True)\n", "w = p.detach().requires_grad_()\n"),
    ("def to_var(x, requires_grad=False):\n    return Variable(x, requires_grad=requires_grad)\n",
     "def to_var(x, requires_grad=False):\n    return x.detach().requires_grad_(requires_grad)\n"),
    ("x = Variable(torch.ones(2), requires_grad=False, volatile=False)\n", "x = torch.ones(2)\n"),
    ("x = Variable(t, False, False)\n", "x = t.detach()\n"),
    ("x = Variable(data=torch.ones(2))\n", "x = torch.ones(2)\n"),
])
def test_requires_grad_is_kept_exact_and_minimal(before, after):
    assert rewrite_line(before) == after


@st.composite
def _legacy_expression(draw):
    """An argument expression of the kinds real 0.3 code wraps."""
    atoms = st.sampled_from([
        "x", "data", "self.h", "model(x)", "torch.randn(2, 3)", "fake.data", "h.data", "batch[0]",
        "torch.FloatTensor(3).zero_()", "w.new(2).zero_()", "source[i:i + n]", "enc(x)[0]", "p.grad.data",
    ])
    expr = draw(atoms)
    for suffix in draw(st.lists(st.sampled_from([".cuda()", ".float()", ".view(-1)", " * 2", ".t()"]),
                                max_size=3)):
        expr = f"({expr}{suffix})" if suffix.startswith(" ") else expr + suffix
    return expr


@settings(max_examples=40, deadline=None)
@given(exprs=st.lists(_legacy_expression(), min_size=1, max_size=4),
       keywords=st.lists(st.sampled_from(["", ", requires_grad=False", ", volatile=False",
                                           ", requires_grad=False, volatile=False"]), min_size=4, max_size=4),
       in_loop=st.booleans())
def test_no_requires_grad_is_ever_added(exprs, keywords, in_loop):
    """Whatever is wrapped, a migration without `requires_grad=True` never produces a `requires_grad`."""
    lines = [f"v{i} = Variable({e}{keywords[i]})" for i, e in enumerate(exprs)]
    body = "\n".join(lines) + "\n"
    if in_loop:
        body = "for x, i in loader:\n" + textwrap.indent(body, "    ")
    outcome = migrate(HEADER + body)
    assert "requires_grad" not in outcome.text
    assert "Variable" not in outcome.text
    assert codes(outcome, applied=True) == ["TM101"] * len(exprs)
    idempotent(outcome)


# -- TM101: spellings, imports, unrelated names ----------------------------------------------------
@pytest.mark.parametrize("source,expected", [
    ("from torch.autograd import Variable as V\nx = V(torch.ones(2))\n", "x = torch.ones(2)\n"),
    ("import torch.autograd as ag\nx = ag.Variable(torch.ones(2))\n", "x = torch.ones(2)\n"),
    ("from torch import autograd\nx = autograd.Variable(torch.ones(2))\n", "x = torch.ones(2)\n"),
    ("x = torch.autograd.Variable(torch.ones(2))\n", "x = torch.ones(2)\n"),
    ("from torch.autograd.variable import Variable\nx = Variable(torch.ones(2))\n", "x = torch.ones(2)\n"),
    ("import torch.autograd.variable as tav\nx = tav.Variable(torch.ones(2))\n", "x = torch.ones(2)\n"),
])
def test_import_spellings_resolve_and_unused_imports_go(source, expected):
    outcome = migrate("import torch\n" + source)
    assert outcome.text == "import torch\n" + expected
    assert codes(outcome) == ["TM101"]


def test_imports_still_used_stay():
    outcome = migrate(HEADER.replace("Variable", "Variable, Function") + "x = Variable(torch.ones(2))\n"
                      "class F(Function):\n    pass\n")
    assert "from torch.autograd import Function\n" in outcome.text
    kept = migrate(HEADER + "x = Variable(torch.ones(2))\ny = Variable(*args)\n")
    assert "from torch.autograd import Variable\n" in kept.text, "the call left for a human still needs it"


@pytest.mark.parametrize("source", [
    "from collections import namedtuple\nVariable = namedtuple('Variable', 'name value')\nv = Variable('x', 1)\n",
    "from sympy import Variable\nx = Variable('x')\nok = isinstance(x, Variable)\n",
    "import torch\nclass Net:\n    def f(self, x):\n        return self.Variable(x)\n",
    "import torch\nclass Variable:\n    pass\nv = Variable()\nok = type(v) == Variable\n",
    "from torch.autograd import Variable\ndef f(Variable):\n    return Variable(x)\n",
    "from torch.autograd import *\nx = Variable(t)\n",
    "from mylib import Variable\nx = Variable(t, volatile=True)\n",
    "import torch\ns = 'Variable(x, volatile=True)'\n# Variable(x)\n",
    "import torch\nopts = dict(volatile=True)\n",
])
def test_unrelated_variables_are_never_touched(source):
    outcome = migrate(source, codemods.all_rules())
    assert not [f for f in outcome.findings if f.code.startswith("TM1")]
    assert migrate(source).text == source


def test_noop_assignment_goes_with_its_variable_comment_but_other_comments_stay():
    tutorial = """
    for i, data in enumerate(trainloader, 0):
        # get the inputs
        inputs, labels = data

        # wrap them in Variable
        inputs, labels = Variable(inputs), Variable(labels)

        # zero the parameter gradients
        optimizer.zero_grad()
    """
    text = rewrite_line(tutorial)
    assert "wrap them in Variable" not in text and "inputs, labels = inputs" not in text
    assert "    inputs, labels = data\n\n    # zero the parameter gradients\n" in text
    commented = "for x, y in loader:\n    # move to the right device\n    x, y = Variable(x), Variable(y)\n"
    assert rewrite_line(commented) == "for x, y in loader:\n    # move to the right device\n    x, y = x, y\n"
    sole = "for x in loader:\n    if flag:\n        x = Variable(x)\n    out = net(x)\n"
    assert rewrite_line(sole) == "for x in loader:\n    if flag:\n        pass\n    out = net(x)\n"
    partial = "for x, y in loader:\n    x, y = Variable(x), Variable(model(y))\n"
    assert rewrite_line(partial) == "for x, y in loader:\n    x, y = x, model(y).detach()\n"


@pytest.mark.parametrize("source,message", [
    ("x = Variable(*tensors)\n", "unexpected arguments"),
    ("x = Variable(t, foo=1)\n", "unexpected argument `foo`"),
    ("x = Variable()\n", "no tensor argument"),
    ("wrap = Variable\n", "used as a value"),
    ("class MyVar(Variable):\n    pass\n", "used as a value"),
    ("x = Variable(t, requires_grad=True, volatile=True)\n", "both"),
])
def test_calls_it_cannot_migrate_are_reported_unchanged(source, message):
    outcome = migrate(HEADER + source)
    assert outcome.text == HEADER + source
    assert len(outcome.findings) == 1 and message in outcome.findings[0].message
    assert not outcome.findings[0].fixable


def test_map_of_variable_is_detach():
    assert rewrite_line("xs = list(map(Variable, batch))\n") == "xs = list(map(torch.Tensor.detach, batch))\n"


def test_check_mode_reports_without_changing():
    source = HEADER + "y = Variable(model(x))\nfor x in loader:\n    z = model(Variable(x, volatile=True))\n"
    outcome = migrate(source, fix=False)
    assert outcome.text == source
    assert codes(outcome) == ["TM101", "TM102", "TM102"]
    assert not any(f.applied for f in outcome.findings)


def test_inline_suppression_keeps_the_call_and_its_import():
    source = HEADER + "a = Variable(torch.ones(1))\nb = Variable(model(x))  # torch-migrate: ignore[TM101]\n"
    outcome = migrate(source)
    assert outcome.text == HEADER + "a = torch.ones(1)\nb = Variable(model(x))  # torch-migrate: ignore[TM101]\n"


def test_comment_inside_a_removed_wrapper_is_kept():
    source = legacy("""\
        model = torch.nn.Linear(3, 2)
        batch = torch.ones(4, 3)
        out = model(Variable(
            batch,   # the input
        ))
        """)
    outcome = migrate(source)
    idempotent(outcome)
    assert "# the input" in outcome.text and "Variable" not in outcome.text
    torch.manual_seed(0)
    old = execute(source)["out"]
    torch.manual_seed(0)
    new = execute(outcome.text)["out"]
    assert torch.equal(old, new) and old.requires_grad == new.requires_grad


def test_an_unsafe_fix_that_drops_the_flag_first_leaves_the_plain_tensor():
    """With --unsafe-fixes TM607 drops an unused `requires_grad=True` from the same call before TM101 unwraps it
    (its fix saw the old argument list and raised IndexError): what is left is the plain tensor, in one pass."""
    source = ("import torch\nfrom torch.autograd import Variable as V\n"
              "w = V(torch.randn(5, 3), requires_grad=True)\nx = V(torch.ones(5), requires_grad=False)\n")
    outcome = codemods.engine.run_rules(source, codemods.all_rules(), unsafe_fixes=True)
    assert outcome.text == "import torch\nw = torch.randn(5, 3)\nx = torch.ones(5)\n"
    assert {f.code for f in outcome.findings if f.applied} == {"TM101", "TM607"}
    again = codemods.engine.run_rules(outcome.text, codemods.all_rules(), unsafe_fixes=True)
    assert again.text == outcome.text
    namespace: dict = {}
    exec(outcome.text, namespace)
    assert not namespace["w"].requires_grad and namespace["w"].shape == (5, 3)
