"""--min-torch: no fix needs a torch newer than the oldest one the project supports (flag, config, default)."""
import sys
from importlib import metadata
from pathlib import Path

import pytest

import codemods
from codemods.engine import run_rules
from codemods.versions import installed_torch, parse
from cli_support import torch_migrate

AMP = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def test_below_a_rules_version_the_code_is_reported_and_left():
    rules = codemods.select_rules(["TM701"])
    fixed = run_rules(AMP, rules, min_torch=(2, 4))
    assert 'torch.amp.GradScaler("cuda")' in fixed.text
    left = run_rules(AMP, rules, min_torch=(2, 3))
    assert left.text == AMP
    [finding] = left.findings
    assert not finding.fixable and not finding.applied
    assert "the fix needs torch >= 2.4, --min-torch is 2.3" in finding.message


def test_every_rule_declares_a_version_no_newer_than_the_installed_torch():
    for rule in codemods.all_rules():
        assert parse(rule.min_torch) >= (0, 4), rule.code
        assert parse(rule.min_torch) <= installed_torch(), f"{rule.code} needs a torch newer than this one"


def test_the_installed_torch_is_the_one_importlib_metadata_names():
    assert installed_torch() == parse(metadata.version("torch"))[:2]


@pytest.mark.parametrize("folders, expected", [
    (("torch-1.13.1+cu117.dist-info", "torch_migrate-0.1.dist-info"), (1, 13)),  # a wheel: the folder's name
    (("torch.egg-info",), (1, 12)),  # another layout: importlib.metadata reads its PKG-INFO
    ((), (2, 13)),  # no torch: the newest series the rules know
])
def test_the_installed_torch_is_the_first_on_sys_path(tmp_path, monkeypatch, folders, expected):
    for name in folders:
        (tmp_path / name).mkdir()
        (tmp_path / name / ("METADATA" if name.endswith(".dist-info") else "PKG-INFO")).write_text(
            "Metadata-Version: 2.1\nName: torch\nVersion: 1.12.0\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "gone"), str(tmp_path)])
    assert installed_torch() == expected


def test_flag_beats_config_and_config_beats_the_installed_torch(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.torch-migrate]\nmin-torch = "2.0"\n')
    (tmp_path / "train.py").write_text(AMP)
    by_config = torch_migrate("rewrite", "--diff", "--no-cache", "train.py", cwd=tmp_path)
    assert by_config.returncode == 0 and by_config.stdout == ""
    assert "--min-torch is 2.0" in torch_migrate("check", "--no-cache", "train.py", cwd=tmp_path).stdout
    by_flag = torch_migrate("rewrite", "--diff", "--no-cache", "--min-torch", "2.4", "train.py", cwd=tmp_path)
    assert '+scaler = torch.amp.GradScaler("cuda")' in by_flag.stdout
    assert '"min_torch": "2.0"' in torch_migrate("config", ".", cwd=tmp_path).stdout


def test_a_bad_version_is_a_usage_error_naming_where_it_came_from(tmp_path: Path):
    (tmp_path / "train.py").write_text(AMP)
    bad_flag = torch_migrate("rewrite", "--min-torch", "latest", "train.py", cwd=tmp_path)
    assert bad_flag.returncode == 2
    assert bad_flag.stderr.strip() == "error: --min-torch: not a torch version: 'latest' (expected X.Y, e.g. 1.8)"
    (tmp_path / "pyproject.toml").write_text('[tool.torch-migrate]\nmin-torch = "one"\n')
    bad_config = torch_migrate("check", "train.py", cwd=tmp_path)
    assert bad_config.returncode == 2
    assert "pyproject.toml: min-torch: not a torch version: 'one'" in bad_config.stderr
    assert (tmp_path / "train.py").read_text() == AMP
