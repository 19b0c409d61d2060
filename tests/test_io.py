"""What `rewrite` reads, writes and refuses, on real files: nothing it cannot handle is damaged.

Rewrites that must be exact use `--select TM203` (`async=` -> `non_blocking=`, a
token-level rule whose output is known byte for byte), so these invariants do
not move when other rule families change; `test_fuzz.py` covers every rule.
"""
import os
import re
import stat
import sys
import time
from pathlib import Path

import libcst as cst
import pytest

from codemods.asynckw import AsyncKeyword
from codemods.base import Rule
from codemods.finding import Finding
from codemods.engine import TextRule, run_rules
from migrate import driver
from migrate.discover import discover
from migrate.guard import check_rewrite
from migrate.source import TEMP_MARK
from test_cli_rewrite import torch_migrate

LEGACY = b"import torch\n\nx = torch.zeros(2)\ny = x.cuda(async=True)\n"


def migrated(data: bytes) -> bytes:
    """What TM203 alone makes of ``data``."""
    return data.replace(b"async=", b"non_blocking=")


def rewrite(*paths: Path, rules=None, mode=driver.WRITE, select=("TM203",)):
    """The driver on real files, in this process (`rules` overrides the registry's)."""
    options = driver.Options(mode, select=select)
    files = discover(paths)
    if rules is None:
        return driver.run(files, options, jobs=1)
    return [driver.process_file(shown, real, options, rules) for shown, real in files]


def write(path: Path, data: bytes, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    return path


# -- nothing to do: nothing written -----------------------------------------------
def test_files_no_rule_changes_are_not_written_at_all(tmp_path):
    """All rules: clean code, an `async` trigger that is no keyword argument, empty and CRLF files keep
    their bytes and their inode (no rewrite-in-place of identical content)."""
    files = {
        "clean.py": b"import torch\n\nx = torch.zeros(2, device='cpu')\n",
        "coroutine.py": b"import asyncio\n\n\nasync def fetch():\n    await asyncio.sleep(0)\n",
        "empty.py": b"",
        "windows.py": b"# async notes\r\nimport os\r\n\r\nprint(os.sep)\r\n",
    }
    for name, data in files.items():
        write(tmp_path / name, data)
    before = {name: os.stat(tmp_path / name) for name in files}
    time.sleep(0.01)
    result = torch_migrate("rewrite", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for name, data in files.items():
        after = os.stat(tmp_path / name)
        assert (tmp_path / name).read_bytes() == data
        assert (after.st_ino, after.st_mtime_ns) == (before[name].st_ino, before[name].st_mtime_ns), name


# -- encodings and layout ---------------------------------------------------------
ENCODED = {
    "latin1-cookie": b"# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'  # \xe9t\xe9\ny = x.cuda(async=True)\n",
    "cp1252-cookie": b"# vim: set fileencoding=cp1252 :\nimport torch\n# \x93quoted\x94\ny = x.cuda(async=True)\n",
    "utf8-bom": b"\xef\xbb\xbf" + LEGACY.replace(b"zeros(2)", "zeros(2)  # \u00e9\u00e8".encode()),
    "crlf": LEGACY.replace(b"\n", b"\r\n"),
    "mixed-endings": b"import torch\r\nx = torch.zeros(2)\ny = x.cuda(async=True)\r\nz = 1\n",
    "tabs": b"import torch\nif True:\n\ty = x.cuda(async=True)\n\tz = [1,\n\t     2]\n",
    "form-feed": b"import torch\n\x0c\ny = x.cuda(async=True)\n",
    "no-final-newline": b"import torch\ny = x.cuda(async=True)",
    "non-ascii-identifier": "import torch\n\u00e9t\u00e9 = x.cuda(async=True)\n".encode(),
    "continuation": b"import torch\ny = x.cuda(\\\n    async=True)\n",
}


@pytest.mark.parametrize("data", ENCODED.values(), ids=ENCODED.keys())
def test_encoding_and_layout_survive_a_rewrite(tmp_path, data):
    path = write(tmp_path / "f.py", data)
    [result] = rewrite(path)
    assert result.changed and result.error is None
    assert path.read_bytes() == migrated(data)


@pytest.mark.parametrize("name", ["crlf", "utf8-bom", "latin1-cookie"])
def test_every_rule_keeps_line_endings_bom_and_cookie(tmp_path, name):
    """All rules, which add lines (a `device = ...` definition): new lines use the file's line ending."""
    data = ENCODED[name] + LEGACY.split(b"\n", 1)[1].replace(b"\n", b"\r\n" if name == "crlf" else b"\n")
    path = write(tmp_path / "f.py", data)
    [result] = rewrite(path, select=())
    assert result.changed and result.error is None, result.error
    new = path.read_bytes()
    assert new.startswith(data[:data.index(b"\n")]), "BOM or cookie line lost"
    if name == "crlf":
        assert new.count(b"\n") == new.count(b"\r\n")
    if name == "latin1-cookie":
        assert b"caf\xe9" in new


def test_the_change_map_follows_statements_not_look_alikes(tmp_path):
    """The fix turns lines 6-7 into a copy of the untouched block after them: the change map must point at the
    fix's own lines (once placed at the first block that read the same, i.e. on the untouched one)."""
    data = (b"import torch\n\nnet = torch.nn.Linear(4, 1)\nclip = 0.01\nfor step in range(2):\n"
            b"    for p in net.parameters():\n        p.data.clamp_(-clip, clip)\n    with torch.no_grad():\n"
            b"        for p in net.parameters():\n            p.clamp_(-clip, clip)\n")
    path = write(tmp_path / "clip.py", data)
    [result] = rewrite(path, mode=driver.DIFF, select=("TM304",))
    assert result.error is None
    assert [(change["line"], change["end_line"], change["code"]) for change in result.changes] == [(6, 8, "TM304")]


@pytest.mark.parametrize("mode", [0o755, 0o640, 0o600])
def test_permissions_and_executable_bit_are_kept(tmp_path, mode):
    path = write(tmp_path / "train.py", b"#!/usr/bin/env python\n" + LEGACY, mode)
    [result] = rewrite(path)
    assert result.changed
    assert stat.S_IMODE(os.stat(path).st_mode) == mode
    assert path.read_bytes() == migrated(b"#!/usr/bin/env python\n" + LEGACY)


def test_a_50000_line_file(tmp_path):
    """Fixes at both ends of 50,000 lines: the change map and the patch point at the right lines."""
    data = LEGACY + b"TABLE = '''\n" + b"0.5 0.25 0.125\n" * 50_000 + b"'''\nz = y.cuda(async=True)\n"
    path = write(tmp_path / "big.py", data)
    [result] = rewrite(path, mode=driver.DIFF)
    assert result.error is None
    assert [change["line"] for change in result.changes] == [4, 50_007]
    assert result.patch.count(b"\n@@ -") == 2 and b"\n@@ -50004,4 +50004,4 @@\n" in result.patch
    [result] = rewrite(path)
    assert path.read_bytes() == migrated(data)


def test_nesting_deeper_than_the_analysis_follows_is_refused_and_left_untouched(tmp_path):
    """A 3,000-term sum parses (on the big stack) but is deeper than a recursive walk follows: reported with
    the place the limit was hit, the file untouched, not called a bug of the rules."""
    deep = b"import torch\nx = " + b" + ".join([b"a"] * 3000) + b"\ny = x.cuda()\n"
    path = write(tmp_path / "deep.py", deep)
    [result] = rewrite(path, select=("TM",))
    assert result.error.startswith(f"{path}:1:1: too deeply nested to analyse (recursion limit reached in ")
    assert not result.internal and path.read_bytes() == deep


# -- inputs that must be refused, each with a path:line:col line ------------------------
BAD = {  # name: (bytes, what the message says, line, column)
    "undecodable.py": (b"import torch\nname = 'caf\xe9'\ny = x.cuda(async=True)\n", "cannot decode as utf-8", 2, 12),
    "nulls.py": (b"import torch\ny = x\x00.cuda(async=True)\n", "null bytes", 2, 6),
    "image.py": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "null bytes", 3, 1),
    "blob.py": (bytes(range(128, 256)) * 4, "cannot decode as utf-8: invalid start byte", 1, 1),
    "python2.py": (b'import torch\nprint "loss", loss\ny = x.cuda(async=True)\n',
                   r"Python 2 syntax, not migrated \(print statement\)", 2, 1),
    "bad_cookie.py": (b"# -*- coding: klingon -*-\ny = x.cuda(async=True)\n", "bad encoding declaration", 1, 1),
    "readonly.py": (LEGACY, "read-only", 1, 1),
}
GOOD = {"good.py": LEGACY, "with space/my model.py": LEGACY, "donn\u00e9es/mod\u00e8le \u00e9.py": LEGACY}
UNTOUCHED = {"empty.py": b"", "clean.py": b"import torch\n"}
SKIPPED = ["__pycache__/cached.py", ".git/hooks/hook.py", "venv/lib/site.py", "conda_env/lib/mod.py",
           "node_modules/pkg/x.py", "ignored_build/x.py", "gen/model_pb2.py", "gen/keep.py.orig", "vendor/lib.py"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """One `rewrite` over a tree of every kind of bad input, good files, and folders to skip."""
    tree = tmp_path_factory.mktemp("hostile")
    for name, (data, *_) in BAD.items():
        write(tree / name, data, 0o444 if name == "readonly.py" else 0o644)
    for name, data in {**GOOD, **UNTOUCHED}.items():
        write(tree / name, data)
    for name in SKIPPED:
        write(tree / name, LEGACY)
    write(tree / "venv" / "pyvenv.cfg", b"home = /usr/bin\n")
    (tree / "conda_env" / "conda-meta").mkdir()
    write(tree / ".gitignore", b"ignored_build/\n")
    write(tree / "gen" / ".gitignore", b"*_pb2.py\n")
    result = torch_migrate("rewrite", "--select", "TM203", "--exclude", "vendor/", ".", cwd=tree)
    return tree, result


def test_hostile_tree_exits_3(hostile):
    _, result = hostile
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", BAD)
def test_bad_input_is_reported_and_left_byte_for_byte(hostile, name):
    tree, result = hostile
    data, message, line, col = BAD[name]
    reported = [entry for entry in result.stderr.splitlines() if entry.startswith(f"{name}:")]
    assert len(reported) == 1, result.stderr
    assert re.fullmatch(rf"{re.escape(name)}:{line}:{col}: .*{message}.*", reported[0]), reported[0]
    assert (tree / name).read_bytes() == data


def test_the_other_files_are_still_rewritten(hostile):
    tree, result = hostile
    for name, data in GOOD.items():
        assert (tree / name).read_bytes() == migrated(data), name
    for name, data in UNTOUCHED.items():
        assert (tree / name).read_bytes() == data, name
    assert f"rewrote {len(GOOD)} of {len(BAD) + len(GOOD) + len(UNTOUCHED)} files" in result.stdout


@pytest.mark.parametrize("name", SKIPPED)
def test_caches_vcs_virtualenvs_ignored_and_excluded_paths_are_skipped(hostile, name):
    tree, result = hostile
    assert (tree / name).read_bytes() == LEGACY
    assert name not in result.stdout + result.stderr


def test_gitignore_above_the_given_folder_up_to_the_repository_top(tmp_path):
    for name in ("repo/src/gen/a.py", "repo/src/b.py", "repo/src/c_pb2.py", "outer/repo2/src/d.py"):
        write(tmp_path / name, LEGACY)
    (tmp_path / "repo" / ".git").mkdir()
    write(tmp_path / "repo" / ".gitignore", b"src/gen/\n*_pb2.py\n")
    write(tmp_path / "outer" / ".gitignore", b"*.py\n")  # above a folder that is no repository: not read
    shown = [str(s.relative_to(tmp_path)) for s, _ in discover([tmp_path / "repo" / "src",
                                                                  tmp_path / "outer" / "repo2"])]
    assert shown == ["repo/src/b.py", "outer/repo2/src/d.py"]


# -- symlinks -----------------------------------------------------------------------
@pytest.fixture
def linked(tmp_path):
    """root/pkg/real.py, linked twice inside root; links out of root, in a loop and to nothing."""
    root = tmp_path / "root"
    write(root / "pkg" / "real.py", LEGACY)
    write(tmp_path / "outside" / "secret.py", LEGACY)
    (root / "alias.py").symlink_to("pkg/real.py")
    (root / "pkg" / "again.py").symlink_to("real.py")
    (root / "escape.py").symlink_to("../outside/secret.py")
    (root / "outside_dir").symlink_to("../outside", target_is_directory=True)
    (root / "loop.py").symlink_to("loop.py")
    (root / "dangling.py").symlink_to("missing.py")
    return root


def test_symlinks_are_never_followed_out_of_the_root_and_a_file_is_rewritten_once(linked):
    diff = torch_migrate("rewrite", "--select", "TM203", "--diff", ".", cwd=linked)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.count("+++ ") == 1 and "+++ b/alias.py" in diff.stdout  # first path in walk order
    result = torch_migrate("rewrite", "--select", "TM203", ".", cwd=linked)
    assert result.returncode == 0, result.stderr
    assert "rewrote 1 of 1 file;" in result.stdout
    assert (linked / "pkg" / "real.py").read_bytes() == migrated(LEGACY)
    assert (linked.parent / "outside" / "secret.py").read_bytes() == LEGACY
    for link in ("alias.py", "pkg/again.py", "escape.py", "loop.py", "dangling.py"):
        assert (linked / link).is_symlink(), link


def test_a_named_link_rewrites_its_target_and_stays_a_link(linked):
    result = torch_migrate("rewrite", "--select", "TM203", "escape.py", cwd=linked)
    assert result.returncode == 0, result.stderr
    assert (linked / "escape.py").is_symlink()
    assert (linked.parent / "outside" / "secret.py").read_bytes() == migrated(LEGACY)


def test_named_paths_that_are_no_files_are_reported(linked):
    """A looping or dangling link, a FIFO (reading it would block): each an error line, the rest rewritten."""
    os.mkfifo(linked / "pipe.py")
    result = torch_migrate("rewrite", "loop.py", "dangling.py", "pipe.py", "pkg/real.py", cwd=linked)
    assert result.returncode == 3, result.stderr
    assert re.search(r"^loop\.py:1:1: cannot read: Too many levels of symbolic links$", result.stderr, re.M)
    assert re.search(r"^dangling\.py:1:1: cannot read: No such file or directory$", result.stderr, re.M)
    assert re.search(r"^pipe\.py:1:1: not a regular file$", result.stderr, re.M)
    assert (linked / "pkg" / "real.py").read_bytes() != LEGACY


# -- files that change under the run ---------------------------------------------------
class Saboteur(Rule):
    """Changes the file on disk while the rules run on what was read (an editor saving meanwhile)."""

    code, name, summary, triggers = "TM998", "saboteur", "edits the file mid-run", ("async",)
    action = staticmethod(lambda path: None)
    target = None

    def visit_Module(self, node):
        type(self).action(type(self).target)


@pytest.mark.parametrize("action,message", [
    (lambda path: path.write_bytes(b"import torch  # edited\n"),
     "file changed while it was being migrated; not rewritten (run again)"),
    (lambda path: path.unlink(), "file vanished while it was being migrated; not rewritten"),
    (lambda path: path.chmod(0o444), "file is read-only; not rewritten"),
])
def test_a_file_that_changes_vanishes_or_locks_during_the_run_is_not_overwritten(tmp_path, monkeypatch, action,
                                                                                  message):
    path = write(tmp_path / "f.py", LEGACY)
    monkeypatch.setattr(Saboteur, "action", staticmethod(action))
    monkeypatch.setattr(Saboteur, "target", path)
    [result] = rewrite(path, rules=[AsyncKeyword, Saboteur])
    assert result.error == f"{path}:1:1: {message}"
    assert not result.changed and not result.internal
    assert not path.exists() or path.read_bytes() != migrated(LEGACY)


def test_a_file_that_vanished_after_discovery_is_reported(tmp_path):
    files = discover([write(tmp_path / "a.py", LEGACY), write(tmp_path / "b.py", LEGACY)])
    (tmp_path / "a.py").unlink()
    results = driver.run(files, driver.Options(select=("TM203",)), jobs=1)
    assert results[0].error == f"{tmp_path / 'a.py'}:1:1: cannot read: No such file or directory"
    assert results[1].changed and (tmp_path / "b.py").read_bytes() == migrated(LEGACY)


def test_stale_temporary_files_of_dead_runs_are_removed_and_others_kept(tmp_path):
    path = write(tmp_path / "a.py", LEGACY)
    stale = write(tmp_path / f".a.py.{TEMP_MARK}-999999-x1y2.tmp", b"half")
    live = write(tmp_path / f".a.py.{TEMP_MARK}-{os.getpid()}-x1y2.tmp", b"being written")
    users = write(tmp_path / ".a.py.x1y2.tmp", b"not ours")
    rewrite(path)
    assert not stale.exists() and live.exists() and users.exists()


# -- the guard: nothing is written that does not compile or changed what no fix reported -----
class SloppyText(TextRule):
    """Renames `async=` as TM203 does, and also edits another line: the regex-over-source failure."""

    code, name, summary, triggers = "TM991", "sloppy", "edits outside its finding", ("async",)

    def rewrite(self, text):
        findings = [Finding(self.code, "renamed", line, 1, line, fixable=True)
                    for line, content in enumerate(text.splitlines(), 1) if "async=" in content]
        return text.replace("async=", "non_blocking=").replace("lr = 0.1", "lr = 1.0"), findings


class ReturnAtTopLevel(Rule):
    """Replaces a call statement by `return`: libcst prints it, Python refuses to compile it."""

    code, name, summary, triggers = "TM992", "bad-return", "produces invalid code", ("step",)

    def visit_Expr(self, node):
        self.report(node, "bad", lambda old: cst.Return())


class Lambda(Rule):
    """Renames a call to `λ`, which latin-1 cannot encode."""

    code, name, summary, triggers = "TM993", "lambda", "writes a non-latin-1 character", ("step",)

    def visit_Call(self, node):
        self.report(node.func, "bad", lambda old: cst.Name("\u03bb"))


class Segfault(Rule):
    """Crashes its process the way a bug in native code would."""

    code, name, summary, triggers = "TM995", "segfault", "kills its process", ("segfault_here",)

    def visit_Module(self, node):
        import ctypes

        ctypes.string_at(0)


GUARDED = b"import torch\nlr = 0.1\ny = x.cuda(async=True)\nopt.step()\n"


@pytest.mark.parametrize("rules,data,culprit,why", [
    ([AsyncKeyword, SloppyText], GUARDED, "TM991", "changed or removed code that no fix reported (line 2: `lr = 0.1`)"),
    ([AsyncKeyword, ReturnAtTopLevel], GUARDED, "TM992", "produced code that does not compile ('return' outside"),
    ([Lambda], b"# coding: latin-1\nopt.step()\n", "TM993", "produced text that iso-8859-1 cannot encode"),
])
def test_a_broken_rewrite_is_refused_and_names_the_rule(tmp_path, rules, data, culprit, why):
    path = write(tmp_path / "f.py", data)
    for mode in (driver.DIFF, driver.WRITE):
        [result] = rewrite(path, rules=rules, mode=mode)
        assert result.internal and not result.changed and not result.patch
        assert result.error.startswith(f"{path}:")
        assert f": internal error: {culprit} {why}" in result.error, result.error
        assert result.error.endswith("; file left untouched")
        assert path.read_bytes() == data


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="`type X = ...` compiles from Python 3.12")
def test_a_file_this_python_cannot_compile_is_not_blamed_on_a_rule(tmp_path):
    """libcst reads newer syntax than the running Python: the file's problem (exit 3), not a rule's (4)."""
    data = b"import torch\ntype Batch = list\ny = x.cuda(async=True)\n"
    [result] = rewrite(write(tmp_path / "f.py", data))
    assert not result.internal
    assert result.error == (f"{tmp_path / 'f.py'}:2:1: the file does not compile on Python 3.11, before or after "
                            "the rewrite (invalid syntax); file left untouched")
    assert (tmp_path / "f.py").read_bytes() == data


class Crash(Rule):
    code, name, summary, triggers = "TM994", "crash", "raises", ("step",)

    def visit_Call(self, node):
        raise KeyError("boom")


def test_a_rule_that_raises_is_named_and_the_file_left_alone(tmp_path):
    data = b"import torch\ny = x.cuda(async=True)\nopt.step()\n"
    [result] = rewrite(write(tmp_path / "f.py", data), rules=[AsyncKeyword, Crash])
    assert result.internal
    assert re.fullmatch(rf"{re.escape(str(tmp_path / 'f.py'))}:1:1: internal error: TM994 raised KeyError "
                        r"\(engine\.py:\d+\): 'boom'; file left untouched", result.error), result.error
    assert (tmp_path / "f.py").read_bytes() == data


def test_the_guard_accepts_every_documented_example_of_every_rule():
    """No false alarms: each rule's own examples, rewritten by every rule (Python rules: the guard is theirs)."""
    import codemods
    from codemods.commands import CommandRule

    for rule in codemods.all_rules():
        for example in () if issubclass(rule, CommandRule) else rule.changes:
            outcome = run_rules(example.before, codemods.all_rules(), unsafe_fixes=example.unsafe)
            if outcome.text != example.before:
                check_rewrite(example.before, outcome.text, outcome.findings)
