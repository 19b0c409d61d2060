"""TM5xx: behaviour changes after 0.4. Rewrites are run with real torch and compared with the legacy result."""
import ast
import importlib.util
import runpy
import sys
import textwrap
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import codemods
from codemods import current
from codemods.engine import run_rules

BEHAVIOUR = Path(__file__).parent / "legacy_behaviour"


def migrate(source, rules=None, unsafe=False):
    outcome = run_rules(textwrap.dedent(source), rules or current.RULES, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    return outcome


def codes(outcome, applied=None):
    return [f.code for f in outcome.findings if applied is None or f.applied == applied]


def execute(source, **names):
    """Run ``source`` as the module ``migrated_script`` (so that ``torch.save(model)`` can pickle its classes)."""
    module = types.ModuleType("migrated_script")
    module.__dict__.update(torch=torch, np=np, **names)
    sys.modules["migrated_script"] = module
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, "<migrated>", "exec"), module.__dict__)
    finally:
        del sys.modules["migrated_script"]
    return module.__dict__


# -- the behaviour table ----------------------------------------------------------------
@pytest.mark.parametrize("change", current.BEHAVIOUR_CHANGES, ids=lambda c: c["script"])
def test_behaviour_script_shows_the_change(change, monkeypatch):
    """Every table entry is backed by a script that asserts it on this torch."""
    script = BEHAVIOUR / change["script"]
    assert script.exists()
    if "torchvision" in change["script"] and importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    monkeypatch.syspath_prepend(str(BEHAVIOUR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(script), run_name="__behaviour__")


def test_behaviour_table_names_real_rules():
    rule_codes = {rule.code for rule in current.RULES}
    handled = {c["handling"] for c in current.BEHAVIOUR_CHANGES}
    assert rule_codes <= handled, "every TM5xx rule has its behaviour change in the table"
    for change in current.BEHAVIOUR_CHANGES:
        assert set(change) == {"change", "version", "handling", "script"}
        assert change["handling"] in rule_codes or change["handling"].startswith(
            ("not handled: ", "harness compat", "nothing to do")), change


def test_rules_are_registered():
    assert set(current.RULES) <= set(codemods.all_rules())
    assert all(rule.code.startswith("TM5") for rule in current.RULES)


# -- TM501 torch.load ---------------------------------------------------------------------
def test_load_of_a_saved_model_runs_after_migration(tmp_path):
    source = """
    import torch
    import torch.nn as nn
    model = nn.Linear(3, 2)
    torch.save(model, PATH)
    model = torch.load(PATH)
    out = model(torch.ones(1, 3))
    """
    path = str(tmp_path / "model.pt")
    with pytest.raises(Exception, match="Weights only load failed"):
        execute(textwrap.dedent(source), PATH=path)
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM501"]
    assert "# weights_only=False: it loads a whole pickled model" in outcome.text
    assert execute(outcome.text, PATH=path)["out"].shape == (1, 2)


def test_separate_inference_script_loads_whole_model(tmp_path):
    """The inference script never sees the save: using the value as a module is the evidence."""
    path = tmp_path / "sr.pth"
    torch.save(torch.nn.Conv2d(1, 1, 3), path)
    source = """
    import torch
    model = torch.load(opt_model)
    model.eval()
    out = model(torch.ones(1, 1, 4, 4))
    """
    outcome = migrate(source)
    assert "torch.load(opt_model, weights_only=False)" in outcome.text
    assert execute(outcome.text, opt_model=str(path))["out"].shape == (1, 1, 2, 2)


@pytest.mark.parametrize("source", [
    "import torch as th\nnet = th.load(p)\nnet.train()\n",
    "from torch import load\nnet = load(p).cuda()\nnet.eval()\n",
    "import torch\nwith open(args.save, 'rb') as f:\n    model = torch.load(f)\n    model.rnn.flatten_parameters()\nmodel.eval()\n",
    "import torch\ny = torch.load(p)(x)\n",
])
def test_load_used_as_module_spellings(source):
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM501"]
    assert "weights_only=False)" in outcome.text


def test_argparse_default_matches_save_and_load_paths():
    source = """
    import argparse
    import torch
    parser = argparse.ArgumentParser()
    parser.add_argument('--save', type=str, default='./model.pt')
    parser.add_argument('--checkpoint', type=str, default='model.pt')
    args = parser.parse_args()
    with open(args.save, 'wb') as f:
        torch.save(model, f)
    state = torch.load(args.checkpoint)
    """
    outcome = migrate(source)
    assert "state = torch.load(args.checkpoint, weights_only=False)" in outcome.text
    assert "this file writes it with `torch.save(model)`" in outcome.text


def test_state_dict_saves_and_unrelated_loads_are_not_weakened():
    source = """
    import torch
    torch.save(net.state_dict(), 'weights.pt')
    net.load_state_dict(torch.load('weights.pt'))
    sd = torch.load('weights.pt')
    pretrained = torch.load(args.pretrained)
    """
    outcome = migrate(source)
    assert "weights_only" not in outcome.text
    diagnostics = [f for f in outcome.findings if f.code == "TM501"]
    assert [f.line for f in diagnostics] == [6] and not diagnostics[0].fixable


def test_checkpoint_dict_with_safe_values_is_left_alone_and_namespace_is_not():
    safe = """
    import torch
    for epoch in range(3):
        torch.save({'epoch': epoch, 'state_dict': model.state_dict(), 'arch': 'resnet'}, 'ckpt.tar')
    ckpt = torch.load('ckpt.tar')
    """
    assert migrate(safe).findings == []
    unsafe = safe.replace("'arch': 'resnet'", "'opt': torch.optim.SGD(params, lr=0.1)")
    assert "torch.load('ckpt.tar', weights_only=False)" in migrate(unsafe).text


def test_load_comment_goes_above_a_one_line_compound_statement():
    source = "import torch\nif resume: model = torch.load(path); model.eval()\n"
    outcome = migrate(source)
    assert outcome.text == ("import torch\n# weights_only=False: it loads a whole pickled model, which weights_only=True"
                            " (the default since torch 2.6) refuses\nif resume: model = torch.load(path, "
                            "weights_only=False); model.eval()\n")


def test_load_keyword_after_a_trailing_comma_keeps_layout():
    source = "import torch\nmodel = torch.load(\n    path,\n    map_location='cpu',\n)\nmodel.eval()\n"
    text = migrate(source).text
    assert "    map_location='cpu',\n    weights_only=False,\n)\n" in text


# -- TM502 torch.full ----------------------------------------------------------------------
def test_full_labels_train_again_after_migration():
    source = """
    import torch
    import torch.nn as nn
    real_label = 1
    fake_label = 0
    criterion = nn.BCELoss()
    out = torch.sigmoid(torch.zeros(4))
    label = torch.full((4,), real_label)
    loss_real = criterion(out, label)
    label = torch.full((4,), fake_label)
    loss_fake = criterion(out, label)
    """
    with pytest.raises(RuntimeError, match="expected Float"):
        execute(textwrap.dedent(source))
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM502", "TM502"]
    done = execute(outcome.text)
    assert done["label"].dtype == torch.float32
    assert done["loss_real"].item() == pytest.approx(np.log(2), rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(-2 ** 53, 2 ** 53), st.sampled_from([torch.float32, torch.float64]))
def test_full_fill_rewrite_is_the_legacy_default_float(value, default):
    """Legacy: the int converted straight to the default dtype. The rewrite must give the same value."""
    text = migrate(f"import torch\nt = torch.full((1,), {value})\n").text
    saved = torch.get_default_dtype()
    try:
        torch.set_default_dtype(default)
        migrated = execute(text)["t"]
        legacy = torch.tensor([value], dtype=torch.int64).to(default)
    finally:
        torch.set_default_dtype(saved)
    assert migrated.dtype == default and torch.equal(migrated, legacy)


def test_full_bool_fill_and_huge_int():
    assert "torch.full((2,), 1.0)" in migrate("import torch\nm = torch.full((2,), True)\n").text
    literal = migrate(f"import torch\nm = torch.full((2,), {2 ** 60})\n")
    assert literal.findings and not literal.findings[0].fixable


# -- TM503 .numpy() -----------------------------------------------------------------------
def test_numpy_of_model_output_runs_and_matches_data():
    source = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.fc = nn.Linear(3, 2)
        def forward(self, x):
            return self.fc(x)
    model = Net()
    x = torch.ones(1, 3)
    out = model(x)
    out = out.cpu()
    img = out[0].numpy()
    w = model.fc.weight.numpy()
    """
    with pytest.raises(RuntimeError, match="requires grad"):
        execute(textwrap.dedent(source))
    outcome = migrate(source)
    assert "img = out[0].detach().numpy()" in outcome.text
    assert "w = model.fc.weight.detach().numpy()" in outcome.text
    done = execute(outcome.text)
    assert np.array_equal(done["img"], done["model"](done["x"]).data[0].numpy())


def test_numpy_leaves_data_alone():
    source = """
    import torch
    def evaluate(model, loader):
        model.eval()
        for images, labels in loader:
            grid = images.numpy()
            y = labels.cpu().numpy()
            noise = torch.randn(3).numpy()
            pred = model(images).max(1)[1].numpy()
            probs = model(images).data.numpy()
    """
    assert migrate(source).findings == []


def test_numpy_of_parameter_loop_and_requires_grad_tensor():
    source = """
    import torch
    for p in net.parameters():
        print(p.numpy())
    w = torch.randn(3, requires_grad=True)
    b = torch.zeros(3, requires_grad=False)
    h = (w * 2 + b).numpy()
    bb = b.numpy()
    """
    outcome = migrate(source)
    assert "print(p.detach().numpy())" in outcome.text
    assert "h = (w * 2 + b).detach().numpy()" in outcome.text
    assert "bb = b.numpy()" in outcome.text


# -- TM504 integer division ----------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=5), st.integers(-50, 50).filter(bool))
def test_integer_division_rewrite_truncates_like_legacy(values, divisor):
    source = f"import torch\nidx = torch.LongTensor({values})\nq = idx / {divisor}\nidx /= {divisor}\n"
    text = migrate(source).text
    assert "rounding_mode" in text
    done = execute(text)
    legacy = [int(v / divisor) for v in values]  # C division: truncation toward zero
    assert done["q"].tolist() == legacy and done["q"].dtype == torch.int64
    assert done["idx"].tolist() == legacy


def test_integer_division_diagnostics_and_quiet_float_math():
    source = """
    import torch
    lengths = torch.LongTensor([3, 4])
    half = lengths / n
    acc = correct / total
    avg = loss_sum / len(loader)
    ratio = torch.arange(10) / 2
    scaled = lengths.float() / 2
    """
    outcome = migrate(source)
    assert [(f.code, f.line, f.fixable) for f in outcome.findings] == [("TM504", 4, False)]


def test_integer_division_without_torch_name_imports_it():
    source = "from torch import LongTensor\nt = LongTensor([5]) / 2\n"
    text = migrate(source).text
    assert text == "from torch import LongTensor\nimport torch\n\nt = torch.div(LongTensor([5]), 2, rounding_mode=\"trunc\")\n"
    assert execute(text)["t"].tolist() == [2]


def test_integer_division_through_reassignment():
    source = "import torch\nt = x.long()\nt = t + 1\nr = t / 2\n"
    assert "torch.div(t, 2, rounding_mode=\"trunc\")" in migrate(source).text


# -- TM505 uint8 masks ---------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=8))
def test_uint8_mask_rewrite_selects_what_uint8_selected(values):
    source = (f"import torch\nx = torch.arange({len(values)}.0)\nmask = torch.ByteTensor({values})\n"
              "filled = x.masked_fill(mask, -1)\npicked = x.masked_select(mask)\ny = x.clone()\ny[mask] = 7\n")
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM505"] * 3
    done = execute(outcome.text)
    selected = np.array(values) != 0  # legacy: a non-zero byte selects
    assert done["picked"].tolist() == np.arange(len(values))[selected].tolist()
    assert done["filled"].tolist() == np.where(selected, -1, np.arange(len(values))).tolist()
    assert done["y"].tolist() == np.where(selected, 7, np.arange(len(values))).tolist()


def test_uint8_mask_from_a_function_of_the_file():
    source = """
    import torch
    def padding_mask(lengths, max_len):
        mask = torch.ByteTensor(len(lengths), max_len).zero_()
        for b, n in enumerate(lengths):
            mask[b, n:] = 1
        return mask
    mask = padding_mask([1, 2], 3)
    scores = torch.zeros(2, 3).masked_fill_(mask, -1.0)
    """
    outcome = migrate(source)
    assert "masked_fill_(mask.bool(), -1.0)" in outcome.text
    assert execute(outcome.text)["scores"].tolist() == [[0.0, -1.0, -1.0], [0.0, 0.0, -1.0]]


# -- TM506 scheduler order ------------------------------------------------------------------
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


# -- TM507 torchvision ----------------------------------------------------------------------
def test_torchvision_alias_import_keeps_the_alias():
    source = "from torchvision.transforms import Scale as S, RandomSizedCrop\nt = [S(32), RandomSizedCrop(24, 3)]\n"
    assert migrate(source).text == ("from torchvision.transforms import Resize as S, RandomResizedCrop\n"
                                    "t = [S(32), RandomResizedCrop(24, interpolation=3)]\n")


def test_torchvision_bare_model_builder_gets_an_import():
    source = "from torchvision.models import resnet50\nnet = resnet50(pretrained=True)\n"
    assert migrate(source).text == ("from torchvision.models import ResNet50_Weights, resnet50\n"
                                    "net = resnet50(weights=ResNet50_Weights.IMAGENET1K_V1)\n")


def test_torchvision_rewrites_run_on_torchvision():
    transforms = pytest.importorskip("torchvision.transforms")
    source = ("import torchvision.transforms as transforms\nimport torchvision.utils as vutils\n"
              "t = transforms.Compose([transforms.Scale(8), transforms.RandomSizedCrop(4, 2)])\n"
              "grid = vutils.make_grid(torch.rand(2, 3, 4, 4), normalize=True, range=(0, 1))\n")
    done = execute(migrate(source).text)
    assert isinstance(done["t"].transforms[0], transforms.Resize)
    assert done["grid"].shape[0] == 3


# -- TM508 - TM510 --------------------------------------------------------------------------
def test_grid_sample_rewrite_gives_the_legacy_values():
    source = """
    import torch
    import torch.nn.functional as F
    theta = torch.tensor([[[0.5, 0.0, 0.2], [0.0, 0.5, 0.0]]])
    image = torch.arange(16.0).view(1, 1, 4, 4)
    grid = F.affine_grid(theta, image.size())
    out = F.grid_sample(image, grid)
    """
    text = migrate(source).text
    legacy = torch.nn.functional.grid_sample(
        torch.arange(16.0).view(1, 1, 4, 4),
        torch.nn.functional.affine_grid(torch.tensor([[[0.5, 0.0, 0.2], [0.0, 0.5, 0.0]]]), (1, 1, 4, 4),
                                        align_corners=True), align_corners=True)
    assert torch.equal(execute(text)["out"], legacy)
    assert not torch.equal(execute(textwrap.dedent(source))["out"], legacy)


def test_numpy_aliases_run_on_numpy_2():
    source = "import numpy as np\na = np.zeros(2, dtype=np.float)\nb = np.array([1, 2]).astype(np.int)\n"
    with pytest.raises(AttributeError):
        execute(source)
    done = execute(migrate(source).text)
    assert done["a"].dtype == np.float64 and done["b"].dtype == np.int_


def test_legacy_function_is_made_static_and_gives_the_same_gradient():
    source = """
    import torch
    from torch.autograd import Function
    class Square(Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x
        def backward(self, grad_output):
            x, = self.saved_tensors
            return 2 * x * grad_output
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    Square()(x).sum().backward()
    """
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        execute(textwrap.dedent(source))
    outcome = migrate(source)
    assert "Square.apply(x)" in outcome.text and outcome.text.count("@staticmethod") == 2
    assert execute(outcome.text)["x"].grad.tolist() == [2.0, 6.0]


def test_legacy_function_used_elsewhere_is_only_reported():
    source = "import torch\nclass F(torch.autograd.Function):\n    def forward(self, x):\n        return x\nf = F()\n"
    outcome = migrate(source)
    assert outcome.text == source and codes(outcome) == ["TM510"]



# -- TM511 .view() of a non-contiguous result -------------------------------------------------
def _imagenet_accuracy_source():
    """``accuracy()`` exactly as samples/imagenet_style.py has it (pytorch/examples 0.3-era)."""
    sample = Path(__file__).parents[2] / "samples" / "imagenet_style.py"
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
    text = (Path(__file__).parents[2] / "samples" / "imagenet_style.py").read_text()
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


@pytest.mark.parametrize("name", sorted(current.ELEMENTWISE | current.LAYOUT_ALIASES - {"view", "view_as", "cuda"}))
def test_view_layout_table_matches_torch(name):
    """Every elementwise/alias entry keeps a transposed input's layout on this torch."""
    x = torch.randn(2, 3, 4).permute(2, 0, 1)
    result = _apply(name, x)
    assert result.dim() >= 2 and not result.is_contiguous(), name


@pytest.mark.parametrize("name", sorted(current.ELEMENTWISE - {"clone", "where"}))
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


# -- all rules together ---------------------------------------------------------------------
LEGACY_SCRIPT = """
import argparse
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.optim import lr_scheduler

parser = argparse.ArgumentParser()
parser.add_argument('--save', default='model.pt')
args = parser.parse_args([])

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return F.sigmoid(self.fc(x)).view(-1)

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
criterion = nn.BCELoss()
data = torch.randn(8, 4)
for epoch in range(2):
    scheduler.step()
    label = torch.full((8,), 1)
    optimizer.zero_grad()
    output = model(Variable(data))
    loss = criterion(output, Variable(label))
    loss.backward()
    optimizer.step()
torch.save(model, args.save)
model = torch.load(args.save)
scores = model(Variable(data)).numpy()
mask = torch.ByteTensor([1, 0, 1, 0, 1, 0, 1, 0])
picked = data[:, 0].masked_select(mask)
half = torch.LongTensor([5, -5]) / 2
weights = np.zeros(3, dtype=np.float)
"""


def test_all_rules_compose_on_a_legacy_script(tmp_path, monkeypatch):
    outcome = run_rules(LEGACY_SCRIPT, codemods.all_rules(), unsafe_fixes=True)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, codemods.all_rules(), unsafe_fixes=True)
    assert again.text == outcome.text, "not idempotent"
    applied = {f.code for f in outcome.findings if f.applied}
    assert {"TM501", "TM502", "TM503", "TM504", "TM505", "TM506", "TM509"} <= applied
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = execute(outcome.text)
    assert done["label"].dtype == torch.float32
    assert done["half"].tolist() == [2, -2]
    assert done["picked"].shape == (4,)
    assert done["scores"].shape == (8,)


def test_untouched_file_is_byte_identical():
    source = "# -*- coding: utf-8 -*-\r\nimport torch\r\nx = torch.full((2,), 0.5)  # fine\r\n"
    outcome = run_rules(source, codemods.all_rules())
    assert outcome.text == source and not [f for f in outcome.findings if f.code.startswith("TM5")]


def test_suppression_comment_silences_a_rule():
    source = "import torch\nlabel = torch.full((2,), 1)  # torch-migrate: ignore[TM502]\n"
    outcome = run_rules(source, current.RULES)
    assert outcome.text == source and outcome.findings == []


def test_recursive_functions_do_not_send_the_dtype_analysis_round_in_circles():
    """``depth(n)`` returns ``depth(n - 1)``: its result's dtype is unknown, so the division is left alone
    (this recursion once exhausted the stack on torch's own ``_inductor/scheduler.py``)."""
    source = """
        import torch


        def depth(n):
            if n == 0:
                return torch.zeros(2).long()
            return depth(n - 1)


        def ping(n):
            return pong(n)


        def pong(n):
            return ping(n) if n else torch.ones(1).long()


        a = depth(3) / 2
        b = ping(2) / 2
    """
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source) and codes(outcome) == []

