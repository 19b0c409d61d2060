"""Start-up and help as a new user meets them: `--help`, `--version`, `rules`, `config` start at once (no
torch, no libcst), help lists flags as flags, and every usage error is one plain `error:` line."""
import re

import pytest

import codemods
import migrate
from migrate.harness.comparer import DEFAULT_MEMORY_TOLERANCE

from cli_support import imported_modules, torch_migrate

HEAVY = {"torch", "libcst", "numpy"}


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("rules",), ("config",), ("verify", "--help"),
                                  ("migrate", "--help"), ("rewrite", "--help"), ("check", "--help")])
def test_quick_commands_import_neither_torch_nor_libcst(tmp_path, args):
    assert not imported_modules(*args, cwd=tmp_path) & HEAVY


def test_top_level_help_does_not_even_import_rich(tmp_path):
    """typer's plain help: rich (tens of milliseconds) is only loaded by commands that draw with it."""
    assert "rich" not in imported_modules("--help", cwd=tmp_path)


def test_version(tmp_path):
    result = torch_migrate("--version", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, f"torch-migrate {migrate.__version__}\n")


def test_rules_lists_every_rule_of_the_registry(tmp_path):
    result = torch_migrate("rules", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for rule in codemods.all_rules():
        assert re.search(rf"^\S\s*{rule.code}\s", result.stdout, re.M), rule.code
        assert rule.name in result.stdout


def test_help_lists_flags_without_a_value_and_each_command_only_its_own_options(tmp_path):
    rewrite = torch_migrate("rewrite", "--help", cwd=tmp_path).stdout
    check = torch_migrate("check", "--help", cwd=tmp_path).stdout
    verify = torch_migrate("verify", "--help", cwd=tmp_path).stdout
    for text in (rewrite, check, verify):
        assert "<bool>" not in text and "╭" not in text
    assert re.search(r"^\s+--diff, --dry-run\s+Write nothing", rewrite, re.M)
    assert re.search(r"^\s+--select CODES\s", rewrite, re.M)
    assert "--diff" not in check and "--dry-run" not in check
    assert re.search(r"^\s+-q, --quiet\s", check, re.M)
    assert re.search(r"^\s+--full\s+Record every tensor", verify, re.M)
    # The examples keep their lines.
    assert "  torch-migrate rewrite --check .         # CI: exit 1 if anything is left to migrate\n" in rewrite


def test_help_states_the_defaults_the_commands_use(tmp_path):
    migrate_help = " ".join(torch_migrate("migrate", "--help", cwd=tmp_path).stdout.split())
    assert "default: `steps` in [tool.torch-migrate], else 5" in migrate_help
    assert "temporary copy that is deleted at the end: that copy is no backup" in migrate_help
    verify_help = " ".join(torch_migrate("verify", "--help", cwd=tmp_path).stdout.split())
    assert f"[default: ({DEFAULT_MEMORY_TOLERANCE:g})" in verify_help


@pytest.mark.parametrize("args, message", [
    (("verify", "missing.py", "other.py"), "error: Invalid value for 'OLD': File 'missing.py' does not exist."),
    (("migrate", "missing_repo"), "error: Invalid value for 'REPO': Directory 'missing_repo' does not exist."),
    (("rewrite", "--bogus", "."), "error: No such option: --bogus"),
    (("check", "--format", "xml", "."), "error: unknown format 'xml'; choose from text, json, sarif, github"),
    (("rewrite", "missing.py"), "error: missing.py: no such file or directory"),
])
def test_usage_errors_are_one_plain_error_line_exit_2(tmp_path, args, message):
    result = torch_migrate(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(message), result.stderr
    assert "╭" not in result.stderr and "Traceback" not in result.stderr and result.stdout == ""


def test_a_usage_error_of_the_parser_names_the_command_and_its_help(tmp_path):
    result = torch_migrate("verify", "missing.py", "other.py", cwd=tmp_path)
    assert result.stderr.startswith("Usage: torch-migrate verify [OPTIONS] {OLD} {NEW} [ARGS...]\n"
                                    "Try 'torch-migrate verify -h' for help.\n")


def test_no_command_prints_the_help(tmp_path):
    result = torch_migrate(cwd=tmp_path)
    assert result.returncode == 2
    assert "Usage: torch-migrate [OPTIONS] COMMAND [ARGS]..." in result.stderr and "migrate" in result.stderr


def test_rules_with_a_code_prints_that_rules_documentation_and_examples(tmp_path):
    result = torch_migrate("rules", "tm302", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rule = next(r for r in codemods.all_rules() if r.code == "TM302")
    assert result.stdout.startswith(f"TM302 {rule.name} (fix; its fixes need torch >= {rule.min_torch})\n")
    assert rule.summary in result.stdout
    assert "a name that is later used as a tensor" in result.stdout  # the docstring
    for example in rule.changes:
        assert example.after.splitlines()[-1] in result.stdout
    assert result.stdout.count("keeps:") == len(rule.keeps)
    assert "torch" not in imported_modules("rules", "TM302", cwd=tmp_path)


def test_rules_with_an_unknown_code_is_a_usage_error(tmp_path):
    result = torch_migrate("rules", "TM999", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == ["error: unknown rule code: TM999 (`torch-migrate rules` lists them)"]
