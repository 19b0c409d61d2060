"""Every bundled legacy sample, migrated by `rewrite`, trains like the original (verified by running both).

One `migrate --diff`-style run over a copy of samples/ (the originals run with the
0.3 compatibility layer, since legacy code does not run on current PyTorch as it is).
"""
import ast
import shutil
from pathlib import Path

import pytest

from migrate import driver
from migrate.config import load_config
from migrate.discover import discover
from migrate.harness import VerifyOptions, verify_scripts
from migrate.workflow import migrate_repo

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
ENTRIES = load_config([SAMPLES]).entry


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    repo = tmp_path_factory.mktemp("samples") / "samples"
    shutil.copytree(SAMPLES, repo)
    result = migrate_repo(repo, ENTRIES, driver.Options(driver.WRITE),
                          VerifyOptions(steps=3, timeout=300, compat=True), in_place=True, search=False)
    return repo, result


def test_samples_config_lists_every_training_script():
    assert len(ENTRIES) >= 8 and all((SAMPLES / entry).is_file() for entry in ENTRIES)


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES)
def test_migrated_sample_trains_like_the_legacy_one(card, entry):
    _, result = card
    verdict = next(e for e in result.entries if e.entry == entry).verify
    assert verdict.verdict == "equivalent", verdict.reason


@pytest.mark.slow
def test_migrated_samples_are_clean(card):
    repo, result = card
    assert not result.errors
    assert result.hazards == [], "check must be silent on the migrated samples"
    assert len(result.changed) >= 10
    for path in repo.rglob("*.py"):
        legacy = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if (isinstance(node, ast.Name) and node.id == "Variable")
                  or (isinstance(node, ast.Attribute) and node.attr == "Variable")
                  or (isinstance(node, ast.keyword) and node.arg in ("async", "size_average", "reduce"))
                  or (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                      and node.value.attr == "data" and ast.unparse(node.slice) == "0")]
        assert not legacy, f"{path}: {[ast.unparse(node) for node in legacy]}"
    # A second rewrite changes nothing.
    again = driver.run(discover([repo]), driver.Options(driver.DIFF))
    assert not [r.path for r in again if r.changed]


SHARED_CASE = Path(__file__).resolve().parents[1].parent / "shared" / "cases" / "style_transfer" / "legacy.py"


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_CASE.is_file(), reason="../shared/cases is not beside this checkout")
def test_shared_style_transfer_case_rewritten_by_the_tool_is_equivalent(tmp_path):
    migrated = tmp_path / "legacy.py"
    migrated.write_bytes(SHARED_CASE.read_bytes())  # a copy with write permission (shared/ has none)
    assert driver.run(discover([migrated]), driver.Options(driver.WRITE))[0].changed
    result = verify_scripts(SHARED_CASE, migrated, VerifyOptions(steps=4, timeout=300, compat=True,
                                                                 script_args=("--size", "16")))
    assert result.verdict == "equivalent", result.reason
