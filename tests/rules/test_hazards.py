"""TM6xx autograd hazards: exact locations on flagged files, silence on near-misses, and real torch showing
that every flagged pattern fails (or wastes) as the rule says and that every near-miss runs."""
import ast
import importlib.util
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import codemods
from codemods import hazards
from codemods.hazards.tm607_unused_requires_grad import UnusedRequiresGrad
from codemods.torchapi import INPLACE_METHODS
from codemods.engine import run_rules

HAZARDS = codemods.family_rules("hazards")
CASES = Path(__file__).parent / "hazard_cases"
ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared"
STYLE = SHARED / "cases" / "style_transfer"
SAMPLES = ROOT / "samples"

EXPECTED = {
    "recurrent_bad.py": {"TM601": [21, 40, 50, 61, 75, 90, 110]},
    "inplace_bad.py": {"TM602": [12, 19, 25, 30, 41, 48, 60, 65, 71, 81, 94]},
    "list_tensor_bad.py": {"TM603": [11, 23, 30, 36]},
    "retain_graph_bad.py": {"TM604": [14, 23, 31, 46, 74], "TM607": [66]},
    "anomaly_bad.py": {"TM605": [8, 15, 22, 26, 37]},
    "nonleaf_grad_bad.py": {"TM606": [10, 17, 24, 31, 38]},
    "unused_requires_grad_bad.py": {"TM607": [27, 42, 49, 55, 62]},
    "typo_bad.py": {"TM608": [6, 12, 17]},
}
OK_FILES = sorted(p.name for p in CASES.glob("*_ok.py"))
SECOND_BACKWARD = "backward through the graph a second time"
LEAF_INPLACE = "leaf Variable that requires grad is being used in an in-place operation"


def check(text, rules=HAZARDS, **options):
    return run_rules(text, rules, **options)


def located(outcome, prefix="TM6"):
    return sorted((f.code, f.line) for f in outcome.findings if f.code.startswith(prefix))


def load(path, name=None):
    """Import a fixture (or a rewritten copy of one) as a module."""
    name = name or f"hazard_case_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def rewritten(tmp_path, case, codes):
    """``case`` with the unsafe fixes of ``codes`` applied, imported."""
    rules = [r for r in HAZARDS if r.code in codes]
    outcome = check((CASES / case).read_text(), rules, unsafe_fixes=True)
    ast.parse(outcome.text)
    again = check(outcome.text, rules, unsafe_fixes=True)
    assert again.text == outcome.text, "unsafe fixes are not idempotent"
    target = tmp_path / f"fixed_{case}"
    target.write_text(outcome.text)
    return load(target, f"fixed_{Path(case).stem}"), outcome


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    torch.autograd.set_detect_anomaly(False)


# -- locations ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_every_hazard_is_found_at_its_line_and_nothing_else(case):
    expected = sorted((code, line) for code, lines in EXPECTED[case].items() for line in lines)
    assert located(check((CASES / case).read_text())) == expected


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_expected_lines_are_the_marked_lines(case):
    """The `# TM6xx` comments in a fixture say where its hazards are; the table above must agree."""
    marked = sorted((m.group(1), number) for number, line in enumerate((CASES / case).read_text().splitlines(), 1)
                    for m in [re.search(r"# (TM6\d\d)$", line)] if m)
    assert marked == sorted((code, line) for code, lines in EXPECTED[case].items() for line in lines)


@pytest.mark.parametrize("case", OK_FILES)
def test_near_misses_are_silent(case):
    text = (CASES / case).read_text()
    assert located(check(text)) == []
    assert located(check(text, codemods.all_rules())) == []


def test_every_rule_has_a_flagged_file_and_a_near_miss_file():
    codes = {code for expected in EXPECTED.values() for code in expected}
    assert codes == {rule.code for rule in HAZARDS}
    assert {case.replace("_bad", "_ok") for case in EXPECTED} == set(OK_FILES)


def test_rules_are_hazards_with_unique_codes():
    assert all(rule.kind == "hazard" and rule.code.startswith("TM6") for rule in HAZARDS)
    assert len({rule.code for rule in HAZARDS}) == len(HAZARDS)
    assert all(rule.__doc__ and len(rule.__doc__.split()) > 30 for rule in HAZARDS)


@pytest.mark.parametrize("context,flagged", [
    ("with torch.no_grad():", False),
    ("with torch.set_grad_enabled(False):", False),
    ("with torch.set_grad_enabled(phase == 'val'):", False),  # not known: not reported
    ("with torch.enable_grad():", True),
    ("if phase == 'val':", True),
])
def test_grad_mode_contexts(context, flagged):
    text = ("import torch\nimport torch.nn as nn\n\nfc = nn.Linear(2, 2)\nphase = 'val'\n"
            f"{context}\n    fc.bias.zero_()\n")
    assert located(check(text)) == ([("TM602", 7)] if flagged else [])


PINN = """import torch
import torch.nn as nn


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(1, 1)

    def forward(self, x):
        u = self.net(x)
        return torch.autograd.grad(u.sum(), x, create_graph=True)[0] - u


model = PINN()
x = torch.linspace(0, 1, 8).unsqueeze(1).requires_grad_(True)
model(x).pow(2).mean().backward()
"""


def test_inputs_of_a_model_that_differentiates_them_are_used():
    assert located(check(PINN)) == []
    exec(compile(PINN, "<pinn>", "exec"), {})
    without = PINN.replace("return torch.autograd.grad(u.sum(), x, create_graph=True)[0] - u", "return u")
    assert located(check(without)) == [("TM607", 16)]


# -- the near-misses are correct code ---------------------------------------------------------
@pytest.mark.parametrize("case", OK_FILES)
def test_near_miss_files_run(case):
    module = load(CASES / case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (getattr(module, "main", None) or module.spelled_right)()


# -- the flagged code fails as the rules say -----------------------------------------------------
def test_recurrent_state_fails_on_the_second_backward():
    module = load(CASES / "recurrent_bad.py")
    for hazard in module.HAZARDS:
        with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
            hazard()


def test_inplace_on_leaves_raises():
    module = load(CASES / "inplace_bad.py")
    for hazard in module.HAZARDS:
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            hazard()


def test_list_of_tensor_gives_the_optimizer_rows():
    module = load(CASES / "list_tensor_bad.py")
    before, after = module.seed_perturbation()
    assert torch.equal(before, after), "the perturbation was never optimised"
    for hazard in (module.starred_parameter, module.param_group, module.legacy_variable):
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            hazard()


def test_retained_graphs_stay_alive():
    module = load(CASES / "retain_graph_bad.py")
    module.bptt_windows(), module.frozen_features()
    for loss in (module.training_loop(), module.single_step(), module.functional_backward()[0]):
        loss.backward()  # the buffers of the last graph were kept: it can be back-propagated again


def test_retain_graph_hides_the_seed_bug(tmp_path):
    """Without retain_graph the seed's loop fails; without the needless requires_grad it does not need it."""
    text = (CASES / "retain_graph_bad.py").read_text()
    bare = tmp_path / "bare.py"
    bare.write_text(text.replace("loss.backward(retain_graph=True)  # TM604", "loss.backward()"))
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        load(bare, "retain_graph_bare").frozen_features()
    fixed = check(bare.read_text(), [UnusedRequiresGrad], unsafe_fixes=True).text
    assert "style = torch.rand(1, 3, 4, 4)  # TM607" in fixed
    (tmp_path / "fixed.py").write_text(fixed)
    load(tmp_path / "fixed.py", "retain_graph_fixed").frozen_features()


def test_anomaly_detection_stays_on():
    module = load(CASES / "anomaly_bad.py")
    module.enable_globally()
    assert torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(False)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        module.train(steps=1)


def test_non_leaf_grad_is_none_with_a_warning():
    module = load(CASES / "nonleaf_grad_bad.py")
    for function in (module.doubled, module.viewed, module.module_output, module.matrix_product,
                     module.converted_leaf):
        with pytest.warns(UserWarning, match="not a leaf Tensor"):
            result = function()
        grads = result if isinstance(result, tuple) else (None, result)
        assert grads[-1] is None


def test_unused_requires_grad_breaks_the_seed_loop():
    module = load(CASES / "unused_requires_grad_bad.py")
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        module.style_transfer()
    module.constant_target(), module.run_batch_input(), module.run_legacy_inputs(), module.run_attribute_flag()


def test_typos_fail_or_do_nothing():
    module = load(CASES / "typo_bad.py")
    with pytest.raises(AttributeError, match="require_grad_"):
        module.method_typo()
    assert module.attribute_typo().requires_grad is False
    with pytest.raises(TypeError):
        module.keyword_typo()


def _inplace_call(method):
    other = torch.ones(3, 3)
    index = torch.tensor([0])
    mask = torch.ones(3, 3, dtype=torch.bool)
    arguments = {
        "copy_": (other,), "fill_": (1.0,), "bernoulli_": (0.5,), "geometric_": (0.5,), "add_": (1.0,),
        "sub_": (1.0,), "mul_": (2.0,), "div_": (2.0,), "addcmul_": (other, other), "addcdiv_": (other, other),
        "clamp_": (0.0, 1.0), "clamp_min_": (0.0,), "clamp_max_": (1.0,), "clip_": (0.0, 1.0), "pow_": (2,),
        "lerp_": (other, 0.5), "masked_fill_": (mask, 0.0), "index_fill_": (0, index, 0.0),
        "index_add_": (0, index, torch.ones(1, 3)), "index_copy_": (0, index, torch.ones(1, 3)),
        "index_put_": ((index,), torch.tensor(1.0)), "scatter_": (0, torch.zeros(1, 3, dtype=torch.long), 1.0),
        "scatter_add_": (0, torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 3)), "renorm_": (2, 0, 1.0),
        "transpose_": (0, 1), "unsqueeze_": (0,), "fmod_": (2,), "remainder_": (2,), "addmm_": (other, other),
        "put_": (index, torch.tensor([1.0])), "masked_scatter_": (mask, torch.ones(9)), "fill_diagonal_": (0.0,),
        "copysign_": (other,),
    }
    return lambda tensor: getattr(tensor, method)(*arguments.get(method, ()))


@pytest.mark.parametrize("method", sorted(INPLACE_METHODS))
def test_inplace_table_raises_on_a_parameter_and_works_under_no_grad(method):
    call = _inplace_call(method)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        call(torch.nn.Parameter(torch.rand(3, 3) + 0.5))
    with torch.no_grad():
        call(torch.nn.Parameter(torch.rand(3, 3) + 0.5))


# -- the unsafe fixes remove the failure ----------------------------------------------------------
def test_fixes_are_unsafe_only():
    for case in EXPECTED:
        outcome = check((CASES / case).read_text())
        assert outcome.text == (CASES / case).read_text()
        assert all(f.unsafe for f in outcome.findings if f.fixable)


def test_detach_fix_lets_the_seed_cell_train(tmp_path):
    module, outcome = rewritten(tmp_path, "recurrent_bad.py", {"TM601"})
    assert "        self.hx = out.detach()  # TM601\n" in outcome.text
    module.seed_cell(steps=3)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        module.lstm_loop()  # a tuple state has no unsafe fix: only reported


def test_no_grad_fix_makes_every_inplace_legal(tmp_path):
    module, outcome = rewritten(tmp_path, "inplace_bad.py", {"TM602"})
    assert "    with torch.no_grad():\n        fc.weight.fill_(0.01)  # TM602\n" in outcome.text
    assert outcome.text.count("with torch.no_grad():") == len(EXPECTED["inplace_bad.py"]["TM602"])
    for hazard in module.HAZARDS:
        hazard()
    model = torch.nn.Linear(2, 2)
    model(torch.randn(1, 2)).sum().backward()
    weight = model.weight.detach().clone()
    module.Momentumless(model.parameters()).step()
    assert not torch.equal(weight, model.weight)


def test_list_fix_optimises_the_tensor(tmp_path):
    module, outcome = rewritten(tmp_path, "list_tensor_bad.py", {"TM603"})
    assert "list(image_transformer.parameters()) + [perturbation]" in outcome.text
    assert "torch.optim.SGD([z], lr=0.1)" in outcome.text
    before, after = module.seed_perturbation()
    assert not torch.equal(before, after)
    module.starred_parameter(), module.param_group(), module.legacy_variable()


def test_anomaly_fix_switches_it_off(tmp_path):
    module, outcome = rewritten(tmp_path, "anomaly_bad.py", {"TM605"})
    assert "detect_anomaly()" not in outcome.text and "set_detect_anomaly(True)" not in outcome.text
    module.enable_globally()
    module.enable_by_keyword()
    assert not torch.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.train(steps=1)
        module.context_form(torch.nn.Linear(2, 1), torch.randn(1, 2))


def test_requires_grad_fix_lets_the_seed_loop_run(tmp_path):
    module, outcome = rewritten(tmp_path, "unused_requires_grad_bad.py", {"TM607"})
    assert "style = style.repeat(2, 1, 1, 1).to(device)  # TM607" in outcome.text
    assert "target = torch.zeros(2, 4)  # TM607" in outcome.text
    assert "inputs = Variable(data)  # TM607" in outcome.text
    module.style_transfer(steps=3)


def test_typo_fix_spells_the_real_api(tmp_path):
    module, _ = rewritten(tmp_path, "typo_bad.py", {"TM608"})
    assert module.method_typo().requires_grad
    assert module.attribute_typo().requires_grad
    assert module.keyword_typo().requires_grad


def test_diagnostics_without_fix():
    for case, code in (("retain_graph_bad.py", "TM604"), ("nonleaf_grad_bad.py", "TM606")):
        assert not any(f.fixable for f in check((CASES / case).read_text()).findings if f.code == code)


# -- the seed's case and the project's samples ----------------------------------------------------------
@pytest.fixture
def style_cases():
    if not STYLE.is_dir():
        pytest.skip(f"shared cases not found at {STYLE} (CI clones shared/ next to the repository)")
    return STYLE


@pytest.mark.parametrize("name,expected", [
    ("bad_migration.py", [("TM607", 59)]),
    ("bad_migration_retain_graph.py", [("TM604", 79), ("TM607", 59)]),
    ("legacy.py", []),
])
def test_style_transfer_cases(style_cases, name, expected):
    text = (style_cases / name).read_text()
    assert located(check(text)) == sorted(expected)
    assert located(check(text, codemods.all_rules())) == sorted(expected)
    if expected:
        assert text.splitlines()[59 - 1].lstrip().startswith("style = style.repeat(")


def test_style_transfer_fix_removes_the_requires_grad(style_cases):
    text = (style_cases / "bad_migration.py").read_text()
    fixed = check(text, [UnusedRequiresGrad], unsafe_fixes=True).text
    assert "    style = style.repeat(BATCH_SIZE, 1, 1, 1).to(device)\n" in fixed
    assert located(check(fixed)) == []


MIGRATABLE = sorted(p for p in SAMPLES.rglob("*.py")) if SAMPLES.is_dir() else []


@pytest.mark.parametrize("path", MIGRATABLE, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_samples_and_their_migration_have_no_hazards(path):
    text = path.read_text()
    assert located(check(text, codemods.all_rules())) == []
    migrated = run_rules(text, codemods.all_rules()).text
    assert located(check(migrated)) == []


# -- engine behaviour ---------------------------------------------------------------------------
def test_suppression_comment():
    text = (CASES / "typo_bad.py").read_text().replace(
        "require_grad=True)  # TM608", "require_grad=True)  # torch-migrate: ignore[TM608]")
    assert located(check(text)) == [("TM608", 6), ("TM608", 12)]


def test_check_command_reports_hazards():
    result = subprocess.run([sys.executable, "-m", "migrate", "check", "--no-cache", "--select", "TM6",
                             str(CASES / "retain_graph_bad.py")], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert "retain_graph_bad.py:14:9: TM604 " in result.stdout
