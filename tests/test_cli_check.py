"""`torch-migrate check` as CI uses it: real files, a real subprocess, exit codes and formats."""
import json
import subprocess
import sys

import pytest

LEGACY = "import torch\n\nx = torch.zeros(2)\ny = x.cuda(async=True)\n"


def check(*args, cwd, select="TM203"):
    """One rule selected, so the expected findings stay exact as other rules evolve."""
    return subprocess.run([sys.executable, "-m", "migrate", "check", "--no-cache", "--select", select, *args],
                          cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "legacy.py").write_text(LEGACY)
    (tmp_path / "clean.py").write_text("import torch\n\ny = torch.zeros(2).to('cpu', non_blocking=True)\n")
    return tmp_path


def test_text_findings_name_file_line_and_code(tree):
    result = check("legacy.py", "clean.py", cwd=tree)
    assert result.returncode == 1, result.stderr
    assert "legacy.py:4:12: TM203 " in result.stdout
    assert "clean.py" not in result.stdout.split("Found")[0]
    assert "Found 1 finding in 1 of 2 files" in result.stdout


def test_clean_code_exits_zero(tree):
    result = check("clean.py", cwd=tree)
    assert result.returncode == 0, result.stdout + result.stderr


def test_json_and_github_formats(tree):
    findings = json.loads(check("--format", "json", ".", cwd=tree).stdout)
    assert [(f["path"], f["line"], f["code"]) for f in findings] == [("legacy.py", 4, "TM203")]
    github = check("--format", "github", ".", cwd=tree).stdout
    assert github.startswith("::warning file=legacy.py,line=4,col=12,title=TM203::")


def test_sarif_is_valid_2_1_0(tree):
    document = json.loads(check("--format", "sarif", ".", cwd=tree).stdout)
    assert document["version"] == "2.1.0"
    run = document["runs"][0]
    assert run["tool"]["driver"]["name"] == "torch-migrate"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["TM203"]
    location = run["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "legacy.py" and location["region"]["startLine"] == 4


def test_inline_suppression(tree):
    (tree / "legacy.py").write_text(LEGACY.replace("(async=True)", "(async=True)  # torch-migrate: ignore[TM203]"))
    assert check("legacy.py", cwd=tree).returncode == 0
    (tree / "legacy.py").write_text(LEGACY.replace("(async=True)", "(async=True)  # torch-migrate: ignore[TM101]"))
    assert check("legacy.py", cwd=tree).returncode == 1


def test_unparseable_file_is_reported_and_the_rest_still_checked(tree):
    (tree / "broken.py").write_text("import torch\nx = y.cuda(async=True\n")
    result = check(".", cwd=tree)
    assert result.returncode == 3
    assert "broken.py:" in result.stderr and "syntax error" in result.stderr
    assert "legacy.py:4:12: TM203" in result.stdout


@pytest.mark.parametrize("args,select", [(("--format", "xml", "."), "TM203"), ((".",), "TM999"),
                                         (("missing.py",), "TM203")])
def test_usage_errors_exit_two(tree, args, select):
    result = check(*args, cwd=tree, select=select)
    assert result.returncode == 2, result.stdout + result.stderr


def test_per_file_ignores_from_pyproject(tree):
    (tree / "pyproject.toml").write_text('[tool.torch-migrate]\nper-file-ignores = { "legacy.py" = ["TM2"] }\n')
    assert check("legacy.py", cwd=tree).returncode == 0
    assert check("legacy.py", cwd=tree, select="TM").returncode == 0
    (tree / "pyproject.toml").write_text('[tool.torch-migrate]\nbogus = 1\n')
    result = check("legacy.py", cwd=tree)
    assert result.returncode == 2 and "bogus" in result.stderr
