"""`torch-migrate rewrite` as people run it: a real subprocess on real files, exit codes, diffs that apply."""
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import codemods
from codemods.engine import run_rules

TESTS = Path(__file__).parent
LEGACY = "import torch\n\nx = torch.zeros(2)\ny = x.cuda(async=True)\n"
FILES = {  # odd layouts the diff must carry: CRLF, no final newline, a space in a folder name
    "train.py": LEGACY + "import torch.nn.functional as F\nz = F.sigmoid(y)  # squash\n",
    "pkg/model.py": LEGACY.replace("\n", "\r\n"),
    "my data/load.py": "import torch\nbatch = torch.ones(3).cuda(async=True)",
    "donn\u00e9es/\u00e9tape.py": "import torch\nstep = torch.ones(3).cuda(async=True)\n",
    "clean.py": "import torch\n\nprint(torch.ones(1))\n",
}


def torch_migrate(command: str, *args: str, cwd: Path, script=None) -> subprocess.CompletedProcess:
    """`torch-migrate COMMAND --no-cache ARGS` in a subprocess (no cache: every run does the work);
    ``script`` replaces the entry point (to add a rule to the registry first). Output is decoded
    without newline translation, so a diff of CRLF files keeps its CRs."""
    entry = ["-c", script] if script else ["-m", "migrate"]
    result = subprocess.run([sys.executable, *entry, command, "--no-cache", *args], cwd=cwd, capture_output=True)
    result.stdout, result.stderr = (stream.decode("utf-8", "replace") for stream in (result.stdout, result.stderr))
    return result


def expected(text: str, rules=None) -> str:
    return run_rules(text, rules or codemods.all_rules()).text


@pytest.fixture
def tree(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(text.encode())
    return tmp_path


def contents(root: Path) -> dict:
    return {name: (root / name).read_bytes() for name in FILES}


def test_check_then_rewrite_in_place_then_nothing_is_left(tree):
    before = contents(tree)
    result = torch_migrate("rewrite", "--check", ".", cwd=tree)
    assert result.returncode == 1
    assert sorted(re.findall(r"^would rewrite (.*)$", result.stdout, re.M)) == sorted(set(FILES) - {"clean.py"})
    assert contents(tree) == before

    result = torch_migrate("rewrite", ".", cwd=tree)
    assert result.returncode == 0, result.stderr
    for name, text in FILES.items():
        assert (tree / name).read_bytes().decode() == expected(text), name
    fixes = Counter(f.code for text in FILES.values() for f in run_rules(text, codemods.all_rules()).findings
                    if f.applied)
    listed = ", ".join(f"{code} x{count}" for code, count in sorted(fixes.items()))
    assert f"rewrote 4 of 5 files; {sum(fixes.values())} fixes ({listed})" in result.stdout

    after = contents(tree)
    result = torch_migrate("rewrite", ".", cwd=tree)
    assert result.returncode == 0 and "rewrote 0 of 5 files" in result.stdout, result.stderr
    assert contents(tree) == after
    assert torch_migrate("rewrite", "--check", ".", cwd=tree).returncode == 0


def test_diff_writes_nothing_and_applies_with_git_apply_and_patch(tree, tmp_path_factory):
    before = contents(tree)
    result = torch_migrate("rewrite", "--diff", ".", cwd=tree)
    assert result.returncode == 0, result.stderr
    assert torch_migrate("rewrite", "--dry-run", ".", cwd=tree).stdout == result.stdout
    assert contents(tree) == before
    headers = re.findall(r"^(---|\+\+\+) (.*?)\t?$", result.stdout, re.M)
    assert sorted(headers) == sorted((sign, f"{side}/{name}") for name in set(FILES) - {"clean.py"}
                                     for sign, side in (("---", "a"), ("+++", "b")))
    for tool in (["git", "apply", "-"], ["patch", "-p1", "--quiet"]):
        copy = tmp_path_factory.mktemp("copy")
        for name, data in before.items():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_bytes(data)
        applied = subprocess.run(tool, cwd=copy, input=result.stdout.encode(), capture_output=True)
        assert applied.returncode == 0, applied.stderr
        for name, text in FILES.items():
            assert (copy / name).read_bytes().decode() == expected(text), (tool[0], name)


def test_diff_names_absolute_paths_as_given(tree):
    result = torch_migrate("rewrite", "--diff", str(tree / "train.py"), cwd=tree)
    assert f"--- {tree / 'train.py'}\n+++ {tree / 'train.py'}\n" in result.stdout


def test_select_and_ignore(tree):
    result = torch_migrate("rewrite", "--select", "TM203", "train.py", cwd=tree)
    assert result.returncode == 0, result.stderr
    assert (tree / "train.py").read_text() == FILES["train.py"].replace("async=", "non_blocking=")
    assert re.search(r"1 fix \(TM203 x1\)", result.stdout)
    result = torch_migrate("rewrite", "--ignore", "TM4,TM5,TM6", "pkg/model.py", cwd=tree)
    applied = re.search(r"fixes \((.*)\)", result.stdout).group(1)
    assert applied != "none" and not re.search(r"TM[456]", applied), applied


def test_jobs_2_gives_what_one_process_gives(tmp_path):
    """40 files: enough for `-j 2` to start a pool; each must be what the rules make of it in-process."""
    for index in range(40):
        (tmp_path / f"m{index // 10}").mkdir(exist_ok=True)
        (tmp_path / f"m{index // 10}" / f"f{index}.py").write_text(LEGACY + f"n = {index}\n")
    result = torch_migrate("rewrite", "-j", "2", ".", cwd=tmp_path)
    assert result.returncode == 0 and "rewrote 40 of 40 files" in result.stdout, result.stderr
    for path in tmp_path.rglob("*.py"):
        assert path.read_text() == expected(LEGACY + f"n = {path.stem[1:]}\n")


def with_rule(name: str) -> str:
    """An entry point that adds ``test_io.<name>`` to the registry, then runs the command line."""
    return (f"import sys; sys.path.insert(0, {str(TESTS)!r}); import codemods, test_io; "
            f"codemods.all_rules().append(test_io.{name}); sys.argv[0] = 'torch-migrate'; "
            "from migrate.cli import main; main()")


def test_a_rule_that_breaks_code_is_an_internal_error_exit_4(tree):
    """A rule added to the registry that turns a statement into `return`: the file stays as it was."""
    (tree / "step.py").write_text("import torch\nopt.step()\n")
    result = torch_migrate("rewrite", ".", cwd=tree, script=with_rule("ReturnAtTopLevel"))
    assert result.returncode == 4, result.stderr
    assert re.search(r"^step\.py:2:1: internal error: TM992 produced code that does not compile "
                     r"\('return' outside function\); file left untouched$", result.stderr, re.M)
    assert (tree / "step.py").read_text() == "import torch\nopt.step()\n"
    assert (tree / "train.py").read_text() == expected(FILES["train.py"])


def test_a_worker_that_dies_is_reported_for_its_files_and_the_run_ends(tmp_path):
    """A rule that crashes its process (a segfault in native code) under `-j 2`: exit 4, nothing half-written."""
    for index in range(24):
        (tmp_path / f"f{index:02d}.py").write_text(LEGACY + ("segfault_here()\n" if index == 12 else ""))
    result = torch_migrate("rewrite", "-j", "2", ".", cwd=tmp_path, script=with_rule("Segfault"))
    assert result.returncode == 4, result.stderr
    assert re.search(r"^f12\.py:1:1: internal error: a worker process died", result.stderr, re.M)
    for path in tmp_path.glob("*.py"):
        assert path.read_text() in (LEGACY + ("segfault_here()\n" if path.name == "f12.py" else ""),
                                    expected(LEGACY)), path


def test_workers_get_the_largest_files_first_and_alone(tmp_path):
    """A 3,000-line file drawn last by one worker would leave the other idle for seconds."""
    from migrate.pool import batches

    sizes = [40, 90_000, 300, 0, 70_000] + [500] * 100
    paths = []
    for number, size in enumerate(sizes):
        paths.append(tmp_path / f"f{number}.py")
        paths[-1].write_text("x" * size)
    found = batches(paths + [tmp_path / "vanished.py"], jobs=2)
    assert found[:2] == [[1], [4]]
    assert sorted(index for batch in found for index in batch) == list(range(len(paths) + 1))
    assert all(len(batch) <= 32 for batch in found)
    assert all(sizes[batch[0]] >= sizes[later[0]] for batch, later in zip(found[:-1], found[1:]) if later[0] < len(sizes))
