"""What the hazard family's tests share: the fixture pairs in ``tests/rules/hazard_cases/`` (``*_bad.py`` with a
``# TM6xx`` comment on every flagged line, ``*_ok.py`` near-misses that must stay silent and run), checking
with the family's rules, importing a fixture, applying its unsafe fixes."""
import ast
import importlib.util
import textwrap
import warnings
from pathlib import Path

import codemods
from codemods.engine import run_rules

ROOT = Path(__file__).resolve().parents[3]
CASES = ROOT / "tests" / "rules" / "hazard_cases"
SHARED = ROOT / ".." / "shared"
STYLE = SHARED / "cases" / "style_transfer"
SAMPLES = ROOT / "samples"
HAZARDS = codemods.family_rules("hazards")
SECOND_BACKWARD = "backward through the graph a second time"
LEAF_INPLACE = "leaf Variable that requires grad is being used in an in-place operation"
STEP_INPLACE = "modified by an inplace operation"

# fixture -> code -> the lines it flags (each marked `# TM6xx` in the file).
EXPECTED = {
    "recurrent_bad.py": {"TM601": [21, 40, 50, 61, 75, 90, 110]},
    "inplace_bad.py": {"TM602": [12, 19, 25, 30, 41, 48, 60, 65, 71, 81, 94]},
    "list_tensor_bad.py": {"TM603": [11, 23, 30, 36]},
    "retain_graph_bad.py": {"TM604": [14, 23, 31, 46, 74], "TM607": [66]},
    "anomaly_bad.py": {"TM605": [8, 15, 22, 26, 37]},
    "nonleaf_grad_bad.py": {"TM606": [10, 17, 24, 31, 38]},
    "unused_requires_grad_bad.py": {"TM607": [27, 42, 49, 55, 62]},
    "typo_bad.py": {"TM608": [6, 12, 17]},
    "loss_target_bad.py": {"TM609": [20, 35, 41, 47]},
    "step_order_bad.py": {"TM610": [31, 34, 45, 46, 60, 61]},
    "checkpoint_bad.py": {"TM611": [27, 35, 44]},
}
OK_FILES = sorted(p.name for p in CASES.glob("*_ok.py"))


def rule(code):
    return next(r for r in HAZARDS if r.code == code)


def check(text, rules=HAZARDS, **options):
    return run_rules(textwrap.dedent(text), rules, **options)


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
