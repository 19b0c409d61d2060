"""What `rewrite` and `check` say: counts in words, unsafe fixes that were not applied said to be so,
quoted code on one line, and Python 2 files reported (exit 3) whether or not they hold a legacy idiom."""
import re

import pytest

from cli_support import torch_migrate

UNSAFE_TM204 = "import torch\ndef labels(n):\n    return torch.LongTensor(n).random_(0, 10)\n"
MULTI_LINE_TM101 = ("import torch\nfrom torch.autograd import Variable\n\n"
                    "def f(a, b):\n    return Variable(torch.cat([a,\n                           b]))\n")


def test_counts_of_one_are_singular(tmp_path):
    (tmp_path / "one.py").write_text("import torch\ny = torch.zeros(2).cuda(async=True)\n")
    check = torch_migrate("check", "--no-cache", "--select", "TM203", "one.py", cwd=tmp_path)
    assert "Found 1 finding in 1 of 1 file ([*] 1 fixable" in check.stdout, check.stdout
    rewrite = torch_migrate("rewrite", "--no-cache", "--select", "TM203", "one.py", cwd=tmp_path)
    assert "rewrote 1 of 1 file; 1 fix (TM203 x1); 0 findings left for review" in rewrite.stdout, rewrite.stdout


def test_an_unsafe_fix_left_unapplied_says_what_the_code_would_become(tmp_path):
    (tmp_path / "labels.py").write_text(UNSAFE_TM204)
    result = torch_migrate("rewrite", "--no-cache", "--select", "TM204", "labels.py", cwd=tmp_path)
    assert (tmp_path / "labels.py").read_text() == UNSAFE_TM204
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("labels.py:3:")]
    assert "would become `torch.empty(...)`" in line and " becomes " not in line
    assert line.endswith("[unsafe fix, not applied: --unsafe-fixes applies it]")
    assert "1 finding left for review" in result.stdout
    check = torch_migrate("check", "--no-cache", "--select", "TM204", "labels.py", cwd=tmp_path)
    assert re.search(r"^labels\.py:3:\d+: TM204 .*would become `torch\.empty\(\.\.\.\)`.* \[unsafe fix\]$",
                     check.stdout, re.M), check.stdout
    applied = torch_migrate("rewrite", "--no-cache", "--select", "TM204", "--unsafe-fixes", "labels.py", cwd=tmp_path)
    assert "1 fix (TM204 x1); 0 findings left" in applied.stdout, applied.stdout


def test_quoted_multi_line_code_is_shown_on_one_line(tmp_path):
    (tmp_path / "cat.py").write_text(MULTI_LINE_TM101)
    for output_format in ("text", "github"):
        result = torch_migrate("check", "--no-cache", "--select", "TM101", "--format", output_format, "cat.py",
                               cwd=tmp_path)
        (finding,) = [line for line in result.stdout.splitlines() if "TM101" in line]
        assert "`Variable(torch.cat([a, b]))`" in finding, result.stdout


# -- Python 2 --------------------------------------------------------------------------
PYTHON2 = {
    "hello.py": ('print "hello"\n', "1:1", "print statement"),  # no torch at all: the rules' filter skips it
    "train.py": ("import torch\nfrom torch.autograd import Variable\nx = Variable(torch.ones(2))\n"
                 "print 'loss', x.data[0]\n", "4:1", "print statement"),
    "guard.py": ("import torch\ntry:\n    x = torch.ones(2).cuda()\nexcept RuntimeError, e:\n    x = None\n",
                 "4:8", "`except E, name:`"),  # libcst parses this one
    "log.py": ("import sys\nprint >>sys.stderr, 'starting'\n", "2:1", "`print >>file` statement"),  # compiles on 3
    "util.py": ("def mode():\n    return 0755\n", "2:12", "octal literal without 0o"),
    "names.py": ("def show(x):\n    return `x`\n", "2:12", "backquote repr"),
}
PYTHON3 = {  # near misses: they are Python 3 and must not be called Python 2
    "modern.py": "import torch\nprint('loss', torch.ones(1).item())\n",
    "doc.py": '"""Python 2 wrote it as:\n\nprint >>sys.stderr, "x"\n"""\nprint("x", file=None)\n',
    "printer.py": "print = lambda *a: None\nprint\n",
    "async_kw.py": "import torch\nx = torch.ones(2).cuda(async=True)\n",
}


@pytest.fixture
def mixed(tmp_path):
    for name, (text, _, _) in PYTHON2.items():
        (tmp_path / name).write_text(text)
    for name, text in PYTHON3.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("command", ["rewrite", "check"])
def test_python_2_files_are_reported_and_left_untouched_exit_3(mixed, command):
    before = {path.name: path.read_bytes() for path in mixed.iterdir()}
    result = torch_migrate(command, "--no-cache", ".", cwd=mixed)
    assert result.returncode == 3, result.stdout + result.stderr
    reported = {line.split(":")[0]: line for line in result.stderr.splitlines()
                if "Python 2 syntax" in line}
    assert set(reported) == set(PYTHON2), result.stderr
    for name, (_, position, construct) in PYTHON2.items():
        assert reported[name] == f"{name}:{position}: Python 2 syntax, not migrated ({construct})"
        assert (mixed / name).read_bytes() == before[name]
    if command == "rewrite":
        assert (mixed / "async_kw.py").read_text().endswith("non_blocking=True)\n")  # Python 3 files still migrated
        assert f"{len(PYTHON2)} files not processed" in result.stdout


def test_a_python_3_syntax_error_is_not_called_python_2(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\nx = torch.ones(2\ny = x.cuda()\n")
    result = torch_migrate("check", "--no-cache", "broken.py", cwd=tmp_path)
    assert result.returncode == 3
    assert re.search(r"^broken\.py:\d+:\d+: syntax error", result.stderr, re.M), result.stderr
    assert "Python 2" not in result.stderr
