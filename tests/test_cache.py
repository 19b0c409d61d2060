"""The result cache, through the CLI as people run it: same answers warm as cold, never stale, cheap."""
import os
import subprocess
import sys

import pytest

LEGACY = "import torch\nfrom torch.autograd import Variable\n\nx = Variable(torch.ones(2))\nprint(x.data[0])\n"
# Runs the CLI, then says on stderr whether the rule engine (libcst) was ever imported.
ENTRY = ("import atexit, sys\n"
         "atexit.register(lambda: sys.stderr.write(f\"engine loaded: {'libcst' in sys.modules}\\n\"))\n"
         "from migrate.cli import main\nsys.argv[0] = 'torch-migrate'\nmain()\n")


def run(*args, cwd, cache_dir):
    env = dict(os.environ, TORCH_MIGRATE_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", ENTRY, *args], cwd=cwd, env=env, capture_output=True, text=True)


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
    assert "engine loaded: False" in warm.stderr
    assert len(list(cache.glob("*.json"))) == 1


def test_an_edited_file_is_analysed_again(tree, tmp_path):
    cache = tmp_path / "cache"
    run("check", ".", cwd=tree, cache_dir=cache)
    (tree / "pkg" / "clean.py").write_text("import torch\nimport torch.nn.functional as F\n\ny = F.sigmoid(x)\n")
    again = run("check", ".", cwd=tree, cache_dir=cache)
    assert "pkg/clean.py:4:5: TM401" in again.stdout.replace("\\", "/")
    assert "engine loaded: True" in again.stderr


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
