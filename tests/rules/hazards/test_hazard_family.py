"""The TM6xx family as a whole: every fixture pair, the samples, the seed's style-transfer cases, the check command."""
import re
import runpy
import subprocess
import sys
import warnings

import pytest

import codemods
from codemods import hazards
from codemods.engine import run_rules
from migrate import docs
from hazard_support import CASES, EXPECTED, HAZARDS, OK_FILES, ROOT, SAMPLES, STYLE, check, load, located, rule


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


@pytest.mark.parametrize("case", OK_FILES)
def test_near_miss_files_run(case):
    module = load(CASES / case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (getattr(module, "main", None) or module.spelled_right)()


def test_fixes_are_unsafe_only():
    for case in EXPECTED:
        outcome = check((CASES / case).read_text())
        assert outcome.text == (CASES / case).read_text()
        assert all(f.unsafe for f in outcome.findings if f.fixable)


def test_diagnostics_without_fix():
    for case, code in (("retain_graph_bad.py", "TM604"), ("nonleaf_grad_bad.py", "TM606")):
        assert not any(f.fixable for f in check((CASES / case).read_text()).findings if f.code == code)


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
    fixed = check(text, [rule("TM607")], unsafe_fixes=True).text
    assert "    style = style.repeat(BATCH_SIZE, 1, 1, 1).to(device)\n" in fixed
    assert located(check(fixed)) == []


MIGRATABLE = sorted(p for p in SAMPLES.rglob("*.py")) if SAMPLES.is_dir() else []


@pytest.mark.parametrize("path", MIGRATABLE, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_samples_and_their_migration_have_no_hazards(path):
    text = path.read_text()
    assert located(check(text, codemods.all_rules())) == []
    migrated = run_rules(text, codemods.all_rules()).text
    assert located(check(migrated)) == []


def test_suppression_comment():
    text = (CASES / "typo_bad.py").read_text().replace(
        "require_grad=True)  # TM608", "require_grad=True)  # torch-migrate: ignore[TM608]")
    assert located(check(text)) == [("TM608", 6), ("TM608", 12)]


def test_check_command_reports_hazards():
    result = subprocess.run([sys.executable, "-m", "migrate", "check", "--no-cache", "--select", "TM6",
                             str(CASES / "retain_graph_bad.py")], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert "retain_graph_bad.py:14:9: TM604 " in result.stdout


# -- the behaviour table and min_torch ------------------------------------------------------------
BEHAVIOUR = ROOT / "tests" / "rules" / "legacy_behaviour"


@pytest.mark.parametrize("change", hazards.BEHAVIOUR_CHANGES, ids=lambda c: c["script"])
def test_behaviour_script_shows_the_change(change, monkeypatch):
    """Every hazard row of the README's behaviour table is backed by a script that asserts it on this torch."""
    monkeypatch.syspath_prepend(str(BEHAVIOUR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(BEHAVIOUR / change["script"]), run_name="__behaviour__")


def test_behaviour_rows_name_hazard_rules_and_are_rendered():
    codes = {rule.code for rule in HAZARDS}
    assert {row["handling"] for row in hazards.BEHAVIOUR_CHANGES} >= {"TM609", "TM610", "TM611"}
    assert all(set(row) == {"change", "version", "handling", "script"} and row["handling"] in codes
               for row in hazards.BEHAVIOUR_CHANGES)
    assert all(row["script"] in docs.behaviour_table() or row["handling"] in docs.behaviour_table()
               for row in hazards.BEHAVIOUR_CHANGES)


def test_every_rule_declares_the_torch_its_output_needs():
    assert all("min_torch" in vars(rule) for rule in HAZARDS)


def test_a_frozen_plain_tensor_is_analysed_without_error():
    """``x.requires_grad = False`` on a name the flow follows: the bindings are read before the freezes."""
    source = "import torch\nx = torch.zeros(3)\nx.requires_grad = False\nfor p in x:\n    p.requires_grad = False\n"
    assert located(check(source)) == []
