"""The result cache, through the CLI as people run it: same answers warm as cold, never stale, cheap.

``TORCH_MIGRATE_DEBUG=1`` makes the driver log every parse (``debug: parse PATH``), every pass run on the tree
the pass before made (``debug: reuse PATH``) and every cache hit: a run served from the cache is one without
a parse line, whatever the machine's speed.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import codemods
import migrate

LEGACY = "import torch\nfrom torch.autograd import Variable\n\nx = Variable(torch.ones(2))\nprint(x.data[0])\n"
# Runs the CLI, then says on stderr whether the rule engine (libcst), a rule family or torch was ever imported,
# and which of the modules a cached run can do without but once imported (pydantic with typer 0.29) it loaded.
ENTRY = """
import atexit, sys

def loaded():
    from codemods import FAMILIES
    rules = any(name.split(".")[1] in FAMILIES for name in sys.modules if name.startswith("codemods."))
    extras = [name for name in ("pydantic", "importlib.metadata", "rich", "pathspec") if name in sys.modules]
    sys.stderr.write(f"engine loaded: {'libcst' in sys.modules}\\nrules loaded: {rules}\\n"
                     f"torch loaded: {'torch' in sys.modules}\\nextras loaded: {extras}\\n")

atexit.register(loaded)
from migrate.cli import main
sys.argv[0] = "torch-migrate"
main()
"""


def run(*args, cwd, cache_dir, tool=None):
    """The CLI with TORCH_MIGRATE_DEBUG on; ``tool``: a copy of the tool's packages to run instead."""
    env = dict(os.environ, TORCH_MIGRATE_CACHE_DIR=str(cache_dir), TORCH_MIGRATE_DEBUG="1")
    if tool is not None:
        env["PYTHONPATH"] = str(tool)
    return subprocess.run([sys.executable, "-c", ENTRY, *args], cwd=cwd, env=env, capture_output=True, text=True)


def parses(result) -> list:
    return [line for line in result.stderr.splitlines() if line.startswith("torch-migrate: debug: parse ")]


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "train.py").write_text(LEGACY)
    (root / "pkg" / "clean.py").write_text("import torch\n\nprint(torch.ones(1))\n")
    (root / "pkg" / "plain.py").write_text("import json\n\nprint(json.dumps({}))\n")
    return root


def test_warm_check_answers_as_cold_without_loading_the_engine(tree, tmp_path):
    cache = tmp_path / "cache"
    cold = run("check", ".", cwd=tree, cache_dir=cache)
    warm = run("check", ".", cwd=tree, cache_dir=cache)
    assert cold.returncode == warm.returncode == 1
    assert "TM101" in cold.stdout and warm.stdout == cold.stdout
    assert "engine loaded: True" in cold.stderr
    assert "engine loaded: False" in warm.stderr and "extras loaded: []" in warm.stderr
    assert len(list(cache.glob("*.json"))) == 1


def test_an_edited_file_is_analysed_again(tree, tmp_path):
    cache = tmp_path / "cache"
    run("check", ".", cwd=tree, cache_dir=cache)
    (tree / "pkg" / "clean.py").write_text("import torch\nimport torch.nn.functional as F\n\ny = F.sigmoid(x)\n")
    again = run("check", ".", cwd=tree, cache_dir=cache)
    assert "pkg/clean.py:4:5: TM401" in again.stdout.replace("\\", "/")
    assert "engine loaded: True" in again.stderr


@pytest.mark.parametrize("spelling", ["from model import Variable", "from .model import Variable",
                                      "from pkg.model import Variable"])
def test_a_name_from_another_file_of_the_tree_is_looked_up_again_when_that_file_changes(tmp_path, spelling):
    """``train.py`` is unchanged, but the ``Variable`` it imports from ``model.py`` is ours at first and torch's
    after: its cached answer (nothing to report) must not stand."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text("class Variable:\n    def __init__(self, x):\n        self.x = x\n")
    (root / "pkg" / "train.py").write_text(f"import torch\n{spelling}\n\nx = Variable(torch.ones(2))\n")
    cache = tmp_path / "cache"
    assert "TM101" not in run("check", ".", cwd=root, cache_dir=cache).stdout
    (root / "pkg" / "model.py").write_text("from torch.autograd import Variable\n")
    again = run("check", ".", cwd=root, cache_dir=cache)
    assert "pkg/train.py:4:5: TM101" in again.stdout.replace("\\", "/")
    warm = run("check", ".", cwd=root, cache_dir=cache)
    assert warm.stdout == again.stdout and not parses(warm)


def test_other_options_use_another_table(tree, tmp_path):
    cache = tmp_path / "cache"
    everything = run("check", ".", cwd=tree, cache_dir=cache)
    only_data = run("check", "--select", "TM3", ".", cwd=tree, cache_dir=cache)
    assert "TM101" in everything.stdout and "TM101" not in only_data.stdout and "TM301" in only_data.stdout
    assert len(list(cache.glob("*.json"))) == 2


def test_rewrite_is_never_served_a_stale_answer(tree, tmp_path):
    cache = tmp_path / "cache"
    run("check", ".", cwd=tree, cache_dir=cache)  # fills the cache with the legacy file's findings
    rewrite = run("rewrite", "-q", ".", cwd=tree, cache_dir=cache)
    assert rewrite.returncode == 0 and "Variable" not in (tree / "train.py").read_text()
    assert run("rewrite", "--check", ".", cwd=tree, cache_dir=cache).returncode == 0


def test_no_cache_writes_nothing_and_a_damaged_cache_is_ignored(tree, tmp_path):
    cache = tmp_path / "cache"
    assert run("check", "--no-cache", ".", cwd=tree, cache_dir=cache).returncode == 1
    assert not cache.exists()
    run("check", ".", cwd=tree, cache_dir=cache)
    for table in cache.glob("*.json"):
        table.write_text("{not json")
    damaged = run("check", ".", cwd=tree, cache_dir=cache)
    assert damaged.returncode == 1 and "TM101" in damaged.stdout


def test_a_second_rewrite_or_check_after_a_rewrite_parses_nothing(tree, tmp_path):
    cache = tmp_path / "cache"
    (tree / "hazard.py").write_text(LEGACY + "torch.autograd.set_detect_anomaly(True)\n")  # TM605 stays
    first = run("rewrite", "-j", "1", ".", cwd=tree, cache_dir=cache)
    assert first.returncode == 0, first.stderr
    assert "x = torch.ones(2)" in (tree / "train.py").read_text()
    # hazard.py and train.py are parsed once: the pass that finds the rewrite settled (train.py's
    # `x[0].item()` still holds a trigger) runs on the tree the fixes made; the other files have no trigger.
    assert sorted(parses(first)) == ["torch-migrate: debug: parse hazard.py", "torch-migrate: debug: parse train.py"]
    assert sorted(line for line in first.stderr.splitlines() if " debug: reuse " in line) == [
        "torch-migrate: debug: reuse hazard.py", "torch-migrate: debug: reuse train.py"]
    cold_check = run("check", "--no-cache", ".", cwd=tree, cache_dir=cache)
    assert "hazard.py:5:1: TM605" in cold_check.stdout  # the Variable import went
    for command in (("rewrite", "."), ("check", "."), ("rewrite", "--check", "."), ("rewrite", "--diff", ".")):
        again = run(*command, cwd=tree, cache_dir=cache)
        assert again.returncode == (1 if command[0] == "check" else 0), (command, again.stderr)
        assert parses(again) == [], command
        assert again.stderr.count("torch-migrate: debug: cached ") == 4
        assert "engine loaded: False\nrules loaded: False\ntorch loaded: False" in again.stderr, again.stderr
        if command[0] == "check":
            assert again.stdout == cold_check.stdout
    assert len(list(cache.glob("*.json"))) == 1  # check and rewrite share one table


def test_min_torch_uses_another_table(tree, tmp_path):
    cache = tmp_path / "cache"
    (tree / "load.py").write_text("import torch\nwith open(args.checkpoint, 'rb') as f:\n"
                                  "    model = torch.load(f)\nmodel.eval()\n")
    assert "needs torch >= 1.13" not in run("check", "load.py", cwd=tree, cache_dir=cache).stdout
    old = run("check", "--min-torch", "1.10", "load.py", cwd=tree, cache_dir=cache)
    assert "left unchanged: the fix needs torch >= 1.13, --min-torch is 1.10" in old.stdout
    assert run("rewrite", "--min-torch", "1.10", "load.py", cwd=tree, cache_dir=cache).returncode == 0
    assert "weights_only" not in (tree / "load.py").read_text()
    assert run("rewrite", "load.py", cwd=tree, cache_dir=cache).returncode == 0
    assert "weights_only=False" in (tree / "load.py").read_text()


def test_per_file_ignores_apply_to_identical_files(tree, tmp_path):
    """The same bytes under a path with other per-file-ignores get their own answer."""
    cache = tmp_path / "cache"
    (tree / "pyproject.toml").write_text('[tool.torch-migrate]\nper-file-ignores = { "tests/*" = ["TM1"] }\n')
    (tree / "tests").mkdir()
    shutil.copy(tree / "train.py", tree / "tests" / "train.py")
    run("check", "train.py", cwd=tree, cache_dir=cache)  # caches train.py's findings, TM101 included
    both = run("check", ".", cwd=tree, cache_dir=cache)
    assert "train.py:4:5: TM101" in both.stdout and "tests/train.py:4:5: TM101" not in both.stdout.replace("\\", "/")


def test_an_edited_tool_starts_a_fresh_table(tree, tmp_path):
    """A same-size edit of a rule in a subpackage, then a new version: never the old table's answers."""
    tool = tmp_path / "tool"
    for package in (codemods, migrate):
        source = Path(package.__file__).parent
        shutil.copytree(source, tool / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    assert "was a Python number in 0.3" in run("check", ".", cwd=tree, cache_dir=cache, tool=tool).stdout
    rule = tool / "codemods" / "data" / "tm301_data_index_zero.py"
    rule.write_text(rule.read_text().replace("was a Python number in 0.3", "was a PYTHON number in 0.3"))
    edited = run("check", ".", cwd=tree, cache_dir=cache, tool=tool)
    assert "was a PYTHON number in 0.3" in edited.stdout and parses(edited)
    version = tool / "migrate" / "__init__.py"
    version.write_text(version.read_text().replace(f'"{migrate.__version__}"', '"99.0"'))
    assert parses(run("check", ".", cwd=tree, cache_dir=cache, tool=tool))
    assert len(list(cache.glob("*.json"))) == 3


def test_a_file_that_only_mentions_torch_is_not_parsed(tmp_path):
    """Rules that resolve names through imports skip a file none of whose imports is torch's: a docstring
    or a comment that says torch, or a call named like a torch function, parses nothing."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "helpers.py").write_text('"""Helpers that have nothing to do with torch."""\nimport json\n\n\n'
                                     "def load(path):  # not torch.load\n    return json.load(open(path))\n")
    (root / "model.py").write_text("import torch\n\nx = torch.load('w.pt')\n")
    result = run("check", ".", cwd=root, cache_dir=tmp_path / "cache")
    assert parses(result) == ["torch-migrate: debug: parse model.py"]
    assert "model.py:3:5: TM501" in result.stdout
