"""TM301: which values are provably one number (`loss.data[0]` -> `loss.item()`).

Rewrites are checked for their text and, with real torch, for computing what the legacy code computed
(the legacy `.data` forms still run on torch 2.x, so old and new run side by side)."""
import textwrap

import pytest
import torch

import codemods
from data_support import applied, execute, flagged, migrate


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


def test_style_loss_of_sizes_unpacked_from_size_is_one_number():
    """Neural style transfer: a loss divided by ints unpacked from `.size()` is still one number."""
    source = """
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)

    def gram_matrix(y):
        (b, ch, h, w) = y.size()
        features = y.view(b, ch, w * h)
        return features.bmm(features.transpose(1, 2)) / (ch * h * w)

    features = [torch.randn(1, 3, 4, 4, requires_grad=True) for _ in range(2)]
    targets = [torch.randn(1, 3, 3) for _ in range(2)]
    content_loss = F.mse_loss(features[0], features[1])
    style_loss = 0
    for f1, f2 in zip(features, targets):
        _, c, h, w = f1.size()
        style_loss += torch.mean((gram_matrix(f1) - f2) ** 2) / (c * h * w)
    shown = (content_loss.data[0], style_loss.data[0])
    """
    outcome = migrate(source)
    assert applied(outcome) == ["TM301", "TM301"]
    assert "shown = (content_loss.item(), style_loss.item())" in outcome.text
    legacy = execute(textwrap.dedent(source).replace(".data[0]", ".data.reshape(-1)[0].item()"))
    migrated = execute(outcome.text)
    assert migrated["shown"] == legacy["shown"] and all(isinstance(v, float) for v in migrated["shown"])
    with pytest.raises(IndexError):
        execute(source)


def test_categorical_sample_of_one_dim_probabilities_is_one_number():
    """REINFORCE: `Categorical(probs).sample()` of 1-d probabilities is 0-dim; `action.data[0]` raises now."""
    source = """
    import torch
    import torch.nn.functional as F
    from torch.distributions import Categorical
    torch.manual_seed(0)
    logits = torch.randn(5, requires_grad=True)
    probs = F.softmax(logits, dim=0)
    action = Categorical(probs).sample()
    chosen = action.data[0]
    """
    outcome = migrate(source)
    assert applied(outcome) == ["TM301"] and "chosen = action.item()" in outcome.text
    migrated = execute(outcome.text)
    torch_state = execute("import torch\ntorch.manual_seed(0)\nlogits = torch.randn(5)\n"
                          "import torch.nn.functional as F\nfrom torch.distributions import Categorical\n"
                          "action = Categorical(F.softmax(logits, dim=0)).sample()\n")
    assert migrated["chosen"] == torch_state["action"].item() and isinstance(migrated["chosen"], int)
    with pytest.raises(IndexError):
        execute(source)


def test_categorical_sample_of_a_batch_gives_its_first_element():
    """A batch of samples is 1-dim: `action.data[0]` was its first element as a Python int in 0.3."""
    source = """
    import torch
    from torch.distributions import Categorical
    torch.manual_seed(0)
    probs = torch.softmax(torch.randn(3, 5), 1)
    action = Categorical(probs).sample()
    first = action.data[0]
    """
    outcome = migrate(source)
    assert applied(outcome) == ["TM301"] and "first = action[0].item()" in outcome.text
    migrated, current = execute(outcome.text), execute(source)
    assert isinstance(migrated["first"], int) and migrated["first"] == current["first"].item()


def test_first_element_of_a_one_dim_value_is_the_number_0_3_gave():
    """`value.data[0]` of a shape-(1,) tensor was a float in 0.3 and is a 0-dim tensor now: `value[0].item()`."""
    source = """
    import torch
    torch.manual_seed(0)
    head = torch.nn.Linear(4, 1)
    value = head(torch.randn(1, 4)).view(-1)
    scores = torch.zeros(3)
    shown = (value.data[0], scores.data[0])
    """
    outcome = migrate(source)
    assert "shown = (value[0].item(), scores[0].item())" in outcome.text
    migrated, current = execute(outcome.text), execute(source)
    assert all(isinstance(v, float) for v in migrated["shown"])
    assert [torch.is_tensor(v) for v in current["shown"]] == [True, True]  # the legacy line, now: tensors
    assert migrated["shown"] == tuple(v.item() for v in current["shown"])


def test_legacy_constructors_have_the_rank_of_their_sizes_or_data():
    """`torch.FloatTensor(3)` takes a size (1-dim), `torch.FloatTensor([[1, 2]])` data (2-dim); a name may be
    either, and `torch.tensor(n)` of an unknown `n` may have any rank: those stay reported."""
    source = """
    import torch
    sized = torch.FloatTensor(3).zero_()
    rows = torch.FloatTensor([[1, 2]])
    shown = (sized.data[0], rows.data[0])
    n = [1.0, 2.0]
    unknown = (torch.FloatTensor(n).data[0], torch.tensor(n).data[0])
    """
    outcome = migrate(source)
    assert "shown = (sized[0].item(), rows.detach()[0])" in outcome.text
    assert "unknown = (torch.FloatTensor(n).data[0], torch.tensor(n).data[0])" in outcome.text
    migrated, current = execute(outcome.text), execute(source)
    assert isinstance(migrated["shown"][0], float) and migrated["shown"][0] == current["shown"][0].item()
    assert torch.equal(migrated["shown"][1], current["shown"][1])


def test_value_of_unknown_rank_is_reported_with_an_unsafe_fix():
    source = """
    import torch
    value = critic(state)
    print(value.data[0])
    """
    outcome = migrate(source)
    assert flagged(outcome) == ["TM301"] and "value.data[0]" in outcome.text
    finding = next(f for f in outcome.findings if f.code == "TM301")
    assert finding.unsafe and "`value[0].item()` if it is 1-dim" in finding.message


def test_a_helper_parameter_is_known_from_its_call_sites():
    """`def show(loss): ... loss.data[0]`, called only with a loss: one number, from the call site."""
    source = """
    import torch
    import torch.nn.functional as F

    def show(loss, step):
        return '{} {:.4f}'.format(step, loss.data[0])

    out = torch.randn(4, 3, requires_grad=True)
    line = show(F.cross_entropy(out, torch.tensor([0, 1, 2, 0])), 1)
    """
    outcome = migrate(source)
    assert applied(outcome) == ["TM301"] and "loss.item()" in outcome.text
    assert execute(outcome.text)["line"].startswith("1 ")


def test_doubled_data_chains_settle_in_one_pass():
    """`x.data.data`, `y.data[0].data[0]`, `x.data[0].data.cpu()` (bench/fuzz.py found them)."""
    source = """
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    out = torch.randn(2, 3, requires_grad=True) * 2
    a = out.data.data.cpu()
    loss = F.mse_loss(out, torch.zeros(2, 3))
    b = loss.data[0].data[0]
    c = out.data[0].data.cpu()
    """
    outcome = migrate(source)  # checks that a second pass changes nothing
    assert ".data" not in outcome.text
    assert "b = loss.item()" in outcome.text and "a = out.detach().cpu()" in outcome.text
    migrated = execute(outcome.text)
    assert torch.equal(migrated["a"], migrated["out"].detach()) and torch.equal(migrated["c"], migrated["out"][0])
    assert migrated["b"] == migrated["loss"].item()
