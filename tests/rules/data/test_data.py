"""TM3xx: `.data[0]`, 0.3 Python numbers, `.data` reads and updates.

Rewrites are checked for their text and, with real torch, for computing what the legacy code
computed: the legacy `.data` forms still run on torch 2.x (only `.data[0]` on a 0-dim loss and
`total[0]` on a 0-dim counter fail), so old and new run side by side.
"""
import ast
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import codemods
from codemods import family_rules
from codemods.engine import run_rules

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
RULES = family_rules("data")


def migrate(source, rules=None, unsafe=False):
    outcome = run_rules(textwrap.dedent(source), rules or RULES, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, rules or RULES, unsafe_fixes=unsafe)
    assert again.text == outcome.text, "not idempotent"
    return outcome


def applied(outcome):
    return sorted(f.code for f in outcome.findings if f.applied)


def flagged(outcome):
    return sorted(f.code for f in outcome.findings if not f.applied)


def execute(source, **names):
    namespace = {"torch": torch, "np": np, **names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(textwrap.dedent(source), "<script>", "exec"), namespace)
    return namespace


# -- TM301: which values are provably one number ------------------------------------------------
@pytest.mark.parametrize("source", [
    # an nn.*Loss instance, also stored on self and used in a method
    """
    import torch.nn as nn
    class Trainer:
        def __init__(self):
            self.criterion = nn.MSELoss().cuda()
        def step(self, x, y):
            loss = self.criterion(x, y)
            return loss.data[0]
    """,
    # a criterion passed as a parameter, bound to a loss at module level
    """
    import torch.nn as nn
    def validate(model, criterion):
        loss = criterion(model(x), y)
        return loss.data[0]
    criterion = nn.CrossEntropyLoss()
    """,
    # a function of this file that returns a sum of losses (the VAE example)
    """
    import torch
    import torch.nn.functional as F
    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x, size_average=False)
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD
    test_loss = loss_function(a, b, c, d).data[0]
    """,
    # a running sum of losses, then a mean
    """
    import torch.nn.functional as F
    loss = 0
    for t in range(3):
        loss += F.mse_loss(out[t], y[t])
    loss = loss / 3
    value = loss.data[0]
    """,
    # a tuple returned by a function of this file
    """
    def run_batch(x):
        loss = (model(x) ** 2).mean()
        return loss, x
    loss, _ = run_batch(x)
    value = loss.data[0]
    """,
    # `.backward()` without a gradient: the name held one value
    """
    def step(out):
        loss = out.pow(2).sum(1).mean(0)
        loss.backward()
        return loss.data[0]
    """,
])
def test_scalar_sources_become_item(source):
    outcome = migrate(source)
    assert ".data[0]" not in outcome.text and ".item()" in outcome.text
    assert "TM301" in applied(outcome)


@pytest.mark.parametrize("source", [
    "import torch.nn.functional as F\nloss = F.nll_loss(o, t, reduce=False)\nv = loss.data[0]\n",
    "import torch.nn as nn\ncrit = nn.MSELoss(reduction='none')\nv = crit(a, b).data[0]\n",
    "import torch\n\n\ndef f(h):\n    return h.data[0]\n",
    "out = model(x)\nv = float(out.data[0])\n",
])
def test_values_that_may_have_several_elements_are_only_flagged(source):
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source)
    assert flagged(outcome) == ["TM301"]
    unsafe = migrate(source, unsafe=True)
    assert ".item()" in unsafe.text


def test_item_gives_the_number_that_data_index_zero_gave_in_0_3():
    source = """
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    out = torch.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(out, torch.tensor([0, 1, 2, 0]))
    total = 0
    total += loss.data[0]
    shown = '{:.6f}'.format(loss.data[0])
    """
    outcome = migrate(source)
    assert applied(outcome) == ["TM301", "TM301"]
    legacy = execute(textwrap.dedent(source).replace(".data[0]", ".data.reshape(-1)[0].item()"))
    migrated = execute(outcome.text)
    assert migrated["total"] == legacy["total"] and isinstance(migrated["total"], float)
    assert migrated["shown"] == legacy["shown"]
    with pytest.raises(IndexError):
        execute(source)  # the legacy line on current torch


IMAGENET_ACCURACY = """
def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res

torch.manual_seed(0)
output = torch.autograd.Variable(torch.randn(64, 10), requires_grad=True) * 2
target = torch.randint(0, 10, (64,))
prec1, prec5 = accuracy(output.data, target, topk=(1, 5))
top = [prec1[0], prec5[0]]
"""


def test_imagenet_accuracy_index_zero_is_the_number_0_3_gave():
    """`prec1[0]` of `correct[:k].view(-1).float().sum(0)`: a Python number in 0.3 (1-element 1-dim),
    IndexError on the 0-dim result now; with every rule (TM511 makes `.view(-1)` `.reshape(-1)`)."""
    source = "import torch\n" + IMAGENET_ACCURACY
    outcome = migrate(source, rules=codemods.all_rules())
    assert "top = [prec1.item(), prec5.item()]" in outcome.text
    assert [f.code for f in outcome.findings if f.applied and "prec" in f.message] == ["TM301", "TM301"]
    on_current_torch = source.replace(".view(-1)", ".reshape(-1)")  # TM511's part: view of a transposed tensor
    with pytest.raises(IndexError):
        execute(on_current_torch)
    # 0.3's `sum(0)` of a 1-dim tensor kept one dimension: that is `keepdim=True` today
    legacy = execute(on_current_torch.replace("sum(0)", "sum(0, keepdim=True)"))
    migrated = execute(outcome.text)
    assert all(type(v) is float for v in migrated["top"])
    assert migrated["top"] == [float(v) for v in legacy["top"]]
    expected = [100.0 * (legacy["output"].topk(k, 1)[1] == legacy["target"][:, None]).any(1).sum().item() / 64
                for k in (1, 5)]
    assert migrated["top"] == pytest.approx(expected)


@pytest.mark.parametrize("source", [
    # a comprehension-free list literal, `torch.sum(..., 0)`, a flattened name, `mean(dim=-1)`, arithmetic
    """
    import torch
    def acc(p, t):
        hits = (p == t).flatten()
        return [torch.sum(hits.float(), 0) * 100.0 / t.size(0), hits.float().mean(dim=-1)]
    a, b = acc(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3]))
    out = (a[0], b[0])
    """,
    # through `.data`, a subscript of the returned list, a tuple return
    """
    import torch
    x = torch.autograd.Variable(torch.tensor([1.0, 2.0, 4.0]))
    def stats(v):
        return v.data.view(-1).sum(0), v.data.reshape(-1).prod(-1)
    s, p = stats(x)
    first = stats(x)[0]
    out = (s[0], p[0], first[0])
    """,
])
def test_single_values_without_data_become_item_and_match(source):
    outcome = migrate(source)
    assert "[0]" not in outcome.text.split("out = ")[1]
    legacy = execute(textwrap.dedent(source).replace("sum(0)", "sum(0, keepdim=True)")
                     .replace("0) * 100", "0, keepdim=True) * 100").replace("dim=-1)", "dim=-1, keepdim=True)")
                     .replace("prod(-1)", "prod(-1, keepdim=True)"))
    migrated = execute(outcome.text)["out"]
    assert all(type(v) is float for v in migrated)
    assert list(migrated) == [float(v) for v in legacy["out"]]


@pytest.mark.parametrize("source", [
    "import torch\nx = torch.randn(3, 4)\ns = x.sum(0)\nprint(s[0])\n",  # not 1-dim: a row of sums
    "import torch\nx = torch.randn(3)\ns = x.view(-1).sum(0, keepdim=True)\nprint(s[0])\n",  # 1-dim: works
    "import torch\nx = torch.randn(3)\ns = x.view(3, -1).sum(0)\nprint(s[0])\n",
    "import torch\nx = torch.randn(3)\nv = x.view(-1)\nprint(v[0])\n",  # not reduced
    "import torch\nx = torch.randn(3)\nv = x.view(-1).cumsum(0)\nprint(v[0])\n",
    "res = [1, 2]\nprint(res[0])\n",
    "import torch\nm = model(x).view(-1).sum(0)\nprint(m[0])\n",  # a Variable in 0.3: `[0]` kept the graph
    "import torch\ns = (x.data.view(-1) * w).sum(0)\nprint(s[0])\n",  # `w` may carry a graph
    "import torch\ndef f(x):\n    r = []\n    r.append(x.data.view(-1).sum(0))\n    r.extend(g())\n"
    "    return r\na, b = f(x)\nprint(a[0])\n",  # the list gets other values too
    "import torch\ns = x.data.view(-1).sum(0)\ns[0] = 1\n",  # written
])
def test_index_zero_of_values_not_proven_single_and_graph_free_is_left(source):
    outcome = migrate(source, rules=codemods.all_rules())
    assert "TM301" not in {f.code for f in outcome.findings}
    assert ".item()" not in outcome.text


def test_row_reads_are_left_to_data_read():
    outcome = migrate("out = model(x)\nimg = out.data[0].numpy()\nrow = out.data[0][1]\n")
    assert outcome.text == "out = model(x)\nimg = out.detach()[0].numpy()\nrow = out.detach()[0][1]\n"
    assert applied(outcome) == ["TM303", "TM303"]


def test_unknown_values_need_evidence_of_being_tensors():
    source = "page = fetch()\nfirst = page.data[0]\nrows = page.data\nfirst_row = rows[0]\n"
    assert not migrate(source).findings  # no torch import, nothing tensor-like: another library's `.data`
    outcome = migrate("import torch\n\n\ndef log(h):\n    print(h.data)\n    h.backward()\n")
    assert "print(h.detach())" in outcome.text  # `h.backward()`: h is a tensor


def test_numpy_chain_index_zero_of_a_loss():
    outcome = migrate("import torch.nn.functional as F\nl = F.l1_loss(a, b)\nv = l.data.cpu().numpy()[0]\n"
                      "w = l.cpu().data.numpy()[0]\n")
    assert outcome.text.endswith("v = l.item()\nw = l.cpu().item()\n")


# -- TM302: 0.3 Python numbers ------------------------------------------------------------------------
def test_language_model_counter_stays_a_number_and_index_zero_goes():
    source = """
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    criterion = nn.CrossEntropyLoss()
    batches = [(torch.randn(5, 7), torch.randint(0, 7, (5,))) for _ in range(3)]

    def evaluate():
        total_loss = 0
        for x, y in batches:
            total_loss += len(x) * criterion(x, y).data
        return total_loss[0] / 15

    def train():
        total_loss = 0
        logged = []
        for x, y in batches:
            loss = criterion(x, y)
            total_loss += loss.data
            logged.append(total_loss[0] / 2)
            total_loss = 0
        return logged
    """
    outcome = migrate(source)
    assert "total_loss[0]" not in outcome.text and ".data" not in outcome.text
    assert applied(outcome).count("TM302") == 4
    migrated = execute(outcome.text)
    batches = migrated["batches"]
    expected = sum(len(x) * torch.nn.functional.cross_entropy(x, y).item() for x, y in batches) / 15
    assert migrated["evaluate"]() == pytest.approx(expected, rel=1e-12)
    assert isinstance(migrated["evaluate"](), float)
    assert migrated["train"]() == [torch.nn.functional.cross_entropy(x, y).item() / 2 for x, y in batches]
    with pytest.raises(IndexError):
        execute(source)["evaluate"]()  # the legacy counter on current torch


def test_counter_used_as_a_tensor_is_not_turned_into_a_number():
    source = "import torch.nn as nn\ncrit = nn.MSELoss()\ntotal = 0\ntotal += crit(a, b).data\nprint(total.item())\n"
    outcome = migrate(source)
    assert "TM302" not in applied(outcome)
    assert "total += crit(a, b).detach()" in outcome.text


def test_comparison_counts_are_python_ints_like_in_0_3():
    source = """
    import torch
    torch.manual_seed(0)
    output = torch.randn(50, 10, requires_grad=True)
    target = torch.randint(0, 10, (50,))
    correct = 0
    pred = output.data.max(1, keepdim=True)[1]
    correct += pred.eq(target.view_as(pred)).cpu().sum()
    _, predicted = torch.max(output.data, 1)
    correct += (predicted == target).sum()
    text = '{}/{}'.format(correct, 100)
    """
    outcome = migrate(source)
    legacy, migrated = execute(source), execute(outcome.text)
    assert isinstance(legacy["correct"], torch.Tensor)  # what 0.3 code silently gets today
    assert isinstance(migrated["correct"], int) and migrated["correct"] == int(legacy["correct"])
    assert migrated["text"] == f"{int(legacy['correct'])}/100"
    assert "output.max(1, keepdim=True)[1]" in outcome.text  # indices: no graph, `.data` simply goes


def test_reductions_of_data_are_numbers_only_where_used_as_numbers():
    outcome = migrate("import torch\nout, x = model(a), model(b)\nd = out.data.mean()\nprint('%.4f' % d)\n"
                      "n = p.grad.data.norm(2)\nprint(n.item())\ns = x.data.sum()\nreturn_value = [s]\n")
    assert "d = out.mean().item()" in outcome.text
    assert "n = p.grad.norm(2)\n" in outcome.text  # used as a tensor later: TM303, no `.item()`
    assert "s = x.data.sum()" not in outcome.text


# -- TM303: reads ---------------------------------------------------------------------------
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


# -- TM304: updates ---------------------------------------------------------------------------
def test_sgd_update_matches_the_legacy_data_update():
    legacy = """
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    lr = 0.1
    for step in range(3):
        loss = ((model(x) - y) ** 2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data.add_(-lr, p.grad.data)
    """
    outcome = migrate(legacy, rules=codemods.all_rules())
    assert "with torch.no_grad():" in outcome.text and "p.add_(p.grad, alpha=-lr)" in outcome.text
    old, new = execute(legacy), execute(outcome.text)
    for a, b in zip(old["model"].parameters(), new["model"].parameters()):
        assert torch.equal(a, b)
        assert b.requires_grad and b.is_leaf


def test_optimizer_step_hand_written_adam_matches():
    legacy = """
    import math
    import torch
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.randn(5))
    exp_avg, exp_avg_sq = torch.zeros(5), torch.zeros(5)
    beta1, beta2, lr, wd = 0.9, 0.999, 0.01, 0.1
    for step in range(1, 4):
        p.grad = None
        (p ** 3).sum().backward()
        grad = p.grad.data
        exp_avg.mul_(beta1).add_(1 - beta1, grad)
        exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
        denom = exp_avg_sq.sqrt().add_(1e-8)
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        if wd != 0:
            p.data.add_(-wd * lr, p.data)
        p.data.addcdiv_(-step_size, exp_avg, denom)
    """
    outcome = migrate(legacy, rules=codemods.all_rules())
    assert "p.addcdiv_(exp_avg, denom, value=-step_size)" in outcome.text
    assert torch.equal(execute(legacy)["p"], execute(outcome.text)["p"])


def test_manual_regression_run_in_one_block_and_values_match():
    legacy = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(3, 1, requires_grad=True)
    b = torch.randn(1, requires_grad=True)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    for t in range(5):
        loss = ((x.mm(w) + b - y) ** 2).mean()
        loss.backward()
        # update
        w.data -= 0.1 * w.grad.data
        b.data -= 0.1 * b.grad.data

        # reset
        w.grad.data.zero_()
        b.grad.data.zero_()
    """
    outcome = migrate(legacy)
    assert outcome.text.count("with torch.no_grad():") == 1
    assert "    # update\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n" in outcome.text
    assert "\n        # reset\n        w.grad.zero_()\n" in outcome.text
    old, new = execute(legacy), execute(outcome.text)
    assert torch.equal(old["w"], new["w"]) and torch.equal(old["b"], new["b"])
    assert new["w"].is_leaf and new["w"].requires_grad


def test_wgan_clamp_and_target_network_soft_update():
    legacy = """
    import torch
    torch.manual_seed(0)
    netD = torch.nn.Linear(3, 3)
    target = torch.nn.Linear(3, 3)
    for p in netD.parameters():
        p.data.clamp_(-0.01, 0.01)
    for tp, p in zip(target.parameters(), netD.parameters()):
        tp.data.copy_(0.1 * p.data + 0.9 * tp.data)
    """
    outcome = migrate(legacy)
    assert outcome.text.count("with torch.no_grad():") == 1
    assert "tp.copy_(0.1 * p + 0.9 * tp)" in outcome.text and "p.clamp_(-0.01, 0.01)" in outcome.text
    old, new = execute(legacy), execute(outcome.text)
    for a, b in zip(old["target"].parameters(), new["target"].parameters()):
        assert torch.equal(a, b)


def test_updates_inside_no_grad_and_suppressed_statements():
    outcome = migrate("""
    import torch
    with torch.no_grad():
        p.weight.data.zero_()
    q.weight.data.fill_(1)  # torch-migrate: ignore[TM304]
    r.weight.data.fill_(2)
    """)
    assert outcome.text == textwrap.dedent("""
    import torch
    with torch.no_grad():
        p.weight.zero_()
    q.weight.data.fill_(1)  # torch-migrate: ignore[TM304]
    with torch.no_grad():
        r.weight.fill_(2)
    """)


def test_updates_of_non_parameters_and_storage_swaps_stay():
    source = """
    def forward(self, h, mask):
        scores = self.attn(h)
        scores.data.masked_fill_(mask, -1e9)
        h.data = h.data.cuda()
        p.data = torch.zeros(3)
        return scores
    """
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source) and not outcome.findings


def test_loop_with_other_statements_wraps_only_the_updates():
    outcome = migrate("""
    for p in model.parameters():
        if p.grad is None:
            continue
        p.data.add_(-lr, p.grad.data)
    """)
    assert outcome.text == textwrap.dedent("""
    import torch

    for p in model.parameters():
        if p.grad is None:
            continue
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
    """)


# -- with the other families ---------------------------------------------------------------------
def test_variable_of_data_composes_with_tm1xx():
    outcome = migrate("""
    from torch.autograd import Variable
    def repackage(h):
        return Variable(h.data)
    fake = netG(noise)
    out = netD(Variable(fake.data))
    """, rules=codemods.all_rules())
    assert "Variable" not in outcome.text and ".data" not in outcome.text
    assert "return h.detach()" in outcome.text and "netD(fake.detach())" in outcome.text


def test_loss_of_deprecated_call_composes_with_tm4xx():
    outcome = migrate("""
    import torch.nn as nn
    import torch.nn.functional as F
    test_loss += F.nll_loss(output, target, size_average=False).data[0]
    nn.init.normal(m.weight.data, 0.0, 0.02)
    """, rules=codemods.all_rules())
    assert "F.nll_loss(output, target, reduction='sum').item()" in outcome.text
    assert "nn.init.normal_(m.weight, 0.0, 0.02)" in outcome.text


@pytest.mark.parametrize("path", sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.py")))
def test_samples_with_every_rule_parse_and_are_idempotent(path):
    text = (SAMPLES / path).read_text(encoding="utf-8")
    first = run_rules(text, codemods.all_rules())
    compile(first.text, path, "exec")
    second = run_rules(first.text, codemods.all_rules())
    assert second.text == first.text
    left = [n for n in ast.walk(ast.parse(first.text)) if isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Attribute) and n.value.attr == "data"
            and isinstance(n.slice, ast.Constant) and n.slice.value == 0]
    flagged_lines = {f.line for f in second.findings if f.code == "TM301"}
    assert all(n.lineno in flagged_lines for n in left), "a `.data[0]` left without a diagnostic"


def test_nothing_applies_means_byte_identical():
    source = "# -*- coding: utf-8 -*-\r\nimport torch\r\nx = torch.zeros(3)  # .data\r\n"
    assert run_rules(source, RULES).text == source
