"""The migrated script puts the same things on the GPU as the legacy one, checked without a GPU.

Each script runs twice under ``fake_cuda.py`` (a CPU machine that claims one GPU and records every move to
it): as written (with the harness's 0.3 layer) and as ``rewrite`` left it. The two records must list the same
moved objects. A device rewrite that chose the wrong flag (``device = torch.device("cuda" if args.resume
else "cpu")``) leaves the model on the CPU on a real GPU machine; here it leaves the model out of the record.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from migrate import driver
from migrate.config import load_config
from migrate.discover import discover

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAMPLES = ROOT / "samples"
CASES = sorted(p.name for p in (HERE / "cases").glob("*.py"))
# Each sample as it runs by default, and with ``--cuda`` where that flag is what sends it to the GPU.
SAMPLE_RUNS = [(entry, args) for entry in load_config([SAMPLES]).entry if entry.endswith(".py")
               for args in [(), ("--cuda",)][: 1 + ("'--cuda'" in (SAMPLES / entry).read_text())]]
STEPS = 2


def placements(script: Path, legacy: bool, args: tuple[str, ...] = ()) -> list[dict]:
    record = script.with_suffix(".legacy.json" if legacy else ".json")
    completed = subprocess.run(
        [sys.executable, str(HERE / "fake_cuda.py"), str(record), str(STEPS), "1" if legacy else "0", str(script),
         *args],
        cwd=script.parent, capture_output=True, text=True, timeout=240,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
    assert completed.returncode == 0, f"{script.name} ({'legacy' if legacy else 'migrated'}):\n{completed.stderr}"
    return json.loads(record.read_text())["moved"]


def moved_differently(legacy: list[dict], migrated: list[dict]) -> str:
    """'' when both moved the same objects (as a multiset); else what only one side moved, and where."""
    def counted(moves):
        return Counter(json.dumps(m["what"]) for m in moves)

    only_legacy = counted(legacy) - counted(migrated)
    only_migrated = counted(migrated) - counted(legacy)
    lines = [f"only the legacy script moved {what} (at {[m['at'] for m in legacy if json.dumps(m['what']) == what]})"
             for what in only_legacy]
    lines += [f"only the migrated script moved {what}" for what in only_migrated]
    return "\n".join(lines)


def migrated_copy(tmp_path: Path, source: Path) -> tuple[Path, Path]:
    """(legacy copy, migrated copy) of a folder, the second rewritten by the tool."""
    legacy, new = tmp_path / "legacy", tmp_path / "new"
    shutil.copytree(source, legacy)
    shutil.copytree(source, new)
    results = driver.run(discover([new]), driver.Options(driver.WRITE))
    assert not [r for r in results if r.error], [r.error for r in results if r.error]
    return legacy, new


def assert_same_placements(legacy_script: Path, migrated_script: Path, args: tuple[str, ...] = ()) -> list[dict]:
    legacy = placements(legacy_script, True, args)
    migrated = placements(migrated_script, False, args)
    code = re.sub(r"#.*", "", legacy_script.read_text())
    if "cuda" in code and (args or "'--cuda'" not in code):  # it asks for the GPU (not in a comment only)
        assert legacy, f"{legacy_script.name} {args} moved nothing to the GPU: the check would prove nothing"
    assert not moved_differently(legacy, migrated), moved_differently(legacy, migrated)
    return migrated


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return migrated_copy(tmp_path_factory.mktemp("cases"), HERE / "cases")


@pytest.mark.parametrize("case", CASES)
def test_migrated_case_moves_what_the_legacy_one_moved(cases, case):
    legacy, new = cases
    assert (new / case).read_text() != (legacy / case).read_text(), "the rewrite changed nothing"
    assert_same_placements(legacy / case, new / case)


def test_a_guard_that_is_not_about_cuda_does_not_choose_the_device(cases):
    """``if args.resume_snapshot:`` guards a ``.cuda()``, yet the device comes from ``is_available()``."""
    _, new = cases
    text = (new / "resume_snapshot.py").read_text()
    assert 'torch.device("cuda" if torch.cuda.is_available() else "cpu")' in text
    assert "resume_snapshot else" not in text
    moved = placements(new / "resume_snapshot.py", legacy=False)
    assert ["module", "Linear", [[2, 3], [2]]] in [m["what"] for m in moved]


def test_the_check_sees_a_model_left_on_the_cpu(cases, tmp_path):
    """The check itself: a migration that forgets the model's move is caught."""
    legacy, new = cases
    wrong = tmp_path / "resume_snapshot.py"
    wrong.write_text((new / "resume_snapshot.py").read_text().replace("    model.to(device)\n", "    pass\n"))
    difference = moved_differently(placements(legacy / "resume_snapshot.py", legacy=True),
                                   placements(wrong, legacy=False))
    assert "only the legacy script moved" in difference and "Linear" in difference


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return migrated_copy(tmp_path_factory.mktemp("samples"), SAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "args"), SAMPLE_RUNS)
def test_migrated_sample_moves_what_the_legacy_one_moved(samples, entry, args):
    legacy, new = samples
    assert_same_placements(legacy / entry, new / entry, args)
