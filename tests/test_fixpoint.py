"""`rewrite` runs the rules until they change nothing: one run is final, and a run that cannot settle says so.

The rule pairs below are real rules (libcst visitors that report fixes, as every rule of the registry), passed
to the driver as ``process_file`` takes them: one fix makes code that another rule fixes, or undoes, or a rule
keeps matching its own output, or breaks the guard on its second pass.
"""
import json

import libcst as cst
import pytest

import codemods
from codemods.base import Rule
from codemods.engine import run_rules
from migrate import driver

from cli_support import torch_migrate


def renamer(code: str, old: str, new: str):
    """A rule that renames calls of ``old`` to ``new``."""

    class Rename(Rule):
        name, summary, triggers = f"rename-{old}", f"`{old}()` becomes `{new}()`", (old,)

        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value == old:
                self.report(node.func, f"`{old}` is `{new}`", lambda func: func.with_changes(value=new))

    Rename.code = code
    return Rename


class Grow(Rule):
    """Matches its own output: `spam()` becomes `spamx()`, which it renames again, and so on."""

    code, name, summary, triggers = "TM983", "grow", "renames spam* to spam*x", ("spam",)

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value.startswith("spam"):
            self.report(node.func, "longer", lambda func: func.with_changes(value=func.value + "x"))


class Crash(Rule):
    code, name, summary, triggers = "TM984", "crash", "raises on middle()", ("middle",)

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "middle":
            raise KeyError("boom")


OLD_TO_MIDDLE = renamer("TM981", "old", "middle")
MIDDLE_TO_NEW = renamer("TM982", "middle", "new")
MIDDLE_TO_OLD = renamer("TM985", "middle", "old")


class YieldAtTopLevel(Rule):
    """`middle(x)` becomes `yield x`: libcst prints it, Python refuses to compile it outside a function."""

    code, name, summary, triggers = "TM986", "yield", "produces invalid code", ("middle",)

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "middle":
            self.report(node, "yield", lambda call: cst.Yield(call.args[0].value))


TEXT = "import torch\n\nx = 1\ny = old(x)  # the old API\nprint(y)\n"


def process(tmp_path, rules, mode=driver.WRITE, text=TEXT):
    path = tmp_path / "f.py"
    path.write_text(text)
    return path, driver.process_file(path, path, driver.Options(mode), rules)


def test_a_fix_that_makes_code_another_rule_fixes_settles_in_one_run(tmp_path):
    path, result = process(tmp_path, [OLD_TO_MIDDLE, MIDDLE_TO_NEW])
    assert result.error is None and result.changed
    assert path.read_text() == TEXT.replace("old(x)", "new(x)")
    assert [(f.code, f.applied) for f in result.findings] == [("TM981", True), ("TM982", True)]
    assert [(c["code"], c["line"], c["end_line"]) for c in result.changes] == [("TM981", 4, 4), ("TM982", 4, 4)]
    # What the run caches for the written text is what a fresh run finds there: nothing to do.
    key, findings = result.written
    assert findings == [] and key == driver.cache_key(path.read_bytes(), path, driver.Options())
    _, again = process(tmp_path, [OLD_TO_MIDDLE, MIDDLE_TO_NEW], text=path.read_text())
    assert not again.changed and again.error is None


def test_the_diff_shows_the_final_text(tmp_path):
    path, result = process(tmp_path, [OLD_TO_MIDDLE, MIDDLE_TO_NEW], mode=driver.DIFF)
    assert "+y = new(x)  # the old API" in result.diff and "middle" not in result.diff
    assert path.read_text() == TEXT


def test_fixes_that_undo_each_other_are_an_internal_error_naming_both(tmp_path):
    path, result = process(tmp_path, [OLD_TO_MIDDLE, MIDDLE_TO_OLD])
    assert result.internal and result.changed
    assert result.error == (f"{path}:1:1: internal error: the rewrite does not settle: TM981, TM985 undo each "
                            "other's fixes (pass 2 gave back an earlier text); file left as pass 1 wrote it")
    assert path.read_text() == TEXT.replace("old(x)", "middle(x)")  # the last good pass, whole
    assert result.written is None  # nothing cached for a text that does not settle


def test_a_rule_that_keeps_matching_its_own_output_stops_after_the_bound(tmp_path):
    path, result = process(tmp_path, [Grow], text="spam(1)\n")
    assert result.internal
    assert result.error == (f"{path}:1:1: internal error: the rewrite does not settle: TM983 still fire on their "
                            f"own output after {driver.PASSES} passes; file left as pass {driver.PASSES} wrote it")
    assert path.read_text() == "spam" + "x" * driver.PASSES + "(1)\n"


@pytest.mark.parametrize("second, culprit", [(Crash, "TM984 raised KeyError"),
                                             (YieldAtTopLevel, "TM986 produced code that does not compile")])
def test_a_later_pass_that_fails_leaves_the_file_as_the_last_good_pass_wrote_it(tmp_path, second, culprit):
    """The guard (and the crash handling) runs on every pass, the last included."""
    path, result = process(tmp_path, [OLD_TO_MIDDLE, second])
    assert result.internal and result.changed
    assert f"internal error: {culprit}" in result.error
    assert result.error.endswith("(pass 2, on the rules' own output); file left as pass 1 wrote it")
    assert path.read_text() == TEXT.replace("old(x)", "middle(x)")
    compile(path.read_text(), str(path), "exec")


def test_check_runs_once_and_reports_what_the_first_pass_would_fix(tmp_path):
    path, result = process(tmp_path, [OLD_TO_MIDDLE, MIDDLE_TO_NEW], mode=driver.LINT)
    assert [(f.code, f.fixable, f.applied) for f in result.findings] == [("TM981", True, False)]
    assert path.read_text() == TEXT


# A real case the fuzz (bench/fuzz.py, seed 1328) found: one pass leaves a `.data` read that TM303 fixes.
FUZZ_CASE = ("import torch\nfrom torch.autograd import Variable as V\n\n"
             "h = images.cuda(0).data.data; h = V(model(x).data, volatile=True)\n")


def test_a_real_file_that_needed_two_runs_settles_in_one(tmp_path):
    rules = codemods.all_rules()
    once = run_rules(FUZZ_CASE, rules).text
    if run_rules(once, rules).text == once:
        pytest.skip("the rules now settle on this file in one pass (fixed at the root)")
    (tmp_path / "case.py").write_text(FUZZ_CASE)
    first = torch_migrate("rewrite", "--no-cache", "--change-map", "map.json", "case.py", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert torch_migrate("rewrite", "--no-cache", "--check", "case.py", cwd=tmp_path).returncode == 0
    settled = (tmp_path / "case.py").read_text()
    assert run_rules(settled, rules).text == settled
    codes = {entry["code"] for entry in json.loads((tmp_path / "map.json").read_text())}
    assert "TM303" in codes
