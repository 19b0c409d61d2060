"""`verify` and `migrate` as a new user runs them: the report on stdout (so `> report.txt` keeps it),
progress on stderr (a live display on a terminal, timestamped lines otherwise, nothing with -q), the
source of the step count stated, and a table that shows real time differences, whole parameter names
when piped, and none of the scripts' escape codes."""
import os
import pty
import re
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cli_support import torch_migrate

TRAIN = '''import time
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.projection_from_the_embedding_space_into_the_hidden_space = nn.Linear(4, 4)

    def forward(self, x):
        return self.projection_from_the_embedding_space_into_the_hidden_space(x)


torch.manual_seed(0)
model = nn.Sequential()
model.add_module("encoder_stack_with_a_deliberately_long_descriptive_name", Block())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, 5):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    time.sleep({pause})
    {failure}
'''
PARAMETER = ("model.encoder_stack_with_a_deliberately_long_descriptive_name."
             "projection_from_the_embedding_space_into_the_hidden_space.weight")
TIMESTAMPED = re.compile(r"^\d\d:\d\d:\d\d \S")


def script(folder: Path, name: str, pause: float = 0.0, failure: str = "pass") -> Path:
    path = folder / name
    path.write_text(TRAIN.format(pause=pause, failure=failure))
    return path


def first_column(table_text: str) -> str:
    """The first column of rich's box tables, its wrapped lines joined."""
    return "".join(line.split("│")[1].strip() for line in table_text.splitlines() if line.startswith("│"))


@pytest.mark.slow
def test_verify_report_on_stdout_progress_lines_on_stderr(tmp_path):
    old, new = script(tmp_path, "old.py"), script(tmp_path, "new.py", pause=0.05)
    result = torch_migrate("verify", str(old), str(new), "--steps", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # The report, whole, on stdout; the verdict says where the step count came from.
    assert "EQUIVALENT (exit 0): equivalent over 3 steps on cpu (--steps 3)" in result.stdout
    assert PARAMETER in first_column(result.stdout) and "…" not in result.stdout  # wrapped, not cut, at 80 columns
    (time_row,) = [line for line in result.stdout.splitlines() if line.startswith("│ time per") and " ms" in line]
    old_ms, new_ms, delta_ms = (float(v) for v in re.findall(r"(\d+(?:\.\d+)?) ms", time_row))
    assert delta_ms > 30 and abs(delta_ms - (new_ms - old_ms)) < 1, time_row  # NEW sleeps 50 ms a step
    # Progress: timestamped lines, each run's start and end with its step count.
    lines = result.stderr.splitlines()
    assert lines and all(TIMESTAMPED.match(line) for line in lines), result.stderr
    assert any(line.endswith("OLD run (old.py) on cpu: started, stops after 3 steps") for line in lines)
    assert any(re.search(r"NEW run \(new\.py\) on cpu: ok after 3 steps, \d+\.\d s$", line) for line in lines)

    quiet = torch_migrate("verify", "-q", str(old), str(new), "--steps", "3", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "EQUIVALENT (exit 0)" in quiet.stdout


@pytest.mark.slow
def test_escape_codes_from_a_script_stay_out_of_the_report(tmp_path):
    old = script(tmp_path, "old.py")
    new = script(tmp_path, "new.py", failure=(
        "if step == 2:\n        import sys\n        sys.stderr.write('\\x1b[1;31mtraceback in colour\\x1b[0m\\n')\n"
        "        raise RuntimeError('\\x1b[31mexploded\\x1b[0m at step 2')"))
    result = torch_migrate("verify", "-q", str(old), str(new), "--steps", "3", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "\x1b" not in result.stdout
    verdict = [line for line in result.stdout.splitlines() if line.startswith("NOT EQUIVALENT (exit 1)")]
    assert verdict and "exploded at step 2" in verdict[0], result.stdout
    assert "traceback in colour" in result.stdout  # NEW's stderr, shown as text


def on_a_terminal(args, cwd: Path) -> tuple:
    """Run the command with stderr on a pseudo-terminal of 100 columns; stdout stays a pipe."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "migrate", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []

    def drain() -> None:  # a full terminal buffer would block the command
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the command closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    stdout = proc.communicate(timeout=300)[0].decode()
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, stdout, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_verify_on_a_terminal_shows_a_live_display_with_the_step_count(tmp_path):
    """Steps of 0.8 s: the display, redrawn as the run goes, shows the steps the child has recorded."""
    old, new = script(tmp_path, "old.py", pause=0.8), script(tmp_path, "new.py", pause=0.8)
    status, stdout, terminal = on_a_terminal(["verify", str(old), str(new), "--steps", "3", "--memory-steps", "0"],
                                             tmp_path)
    assert status == 0, stdout + terminal
    assert "EQUIVALENT (exit 0)" in stdout and "\x1b" not in stdout
    assert "\x1b[" in terminal  # drawn and redrawn in place
    for step in (1, 2):
        assert re.search(rf"OLD run \(old\.py\) on cpu.*step {step} of 3", terminal), terminal[-3000:]
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)
    assert re.search(r"NEW run \(new\.py\) on cpu.*step \d of 3 +0:00:0\d", plain)  # and the elapsed time
    assert re.search(r"OLD run \(old\.py\) on cpu: ok after 3 steps, \d+\.\d s", terminal)  # kept when it ends


REPO_CONFIG = '[tool.torch-migrate]\nentry = ["train.py"]\nsteps = 2\n'
LEGACY_TRAIN = TRAIN.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport torch.nn.functional as F\n") \
    .replace(".pow(2).mean()", ".pow(2).mean() + F.sigmoid(torch.zeros(1)).sum()")


@pytest.mark.slow
def test_migrate_card_on_stdout_says_where_the_step_count_came_from(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(REPO_CONFIG)
    (repo / "train.py").write_text(LEGACY_TRAIN.format(pause=0, failure="pass"))
    result = torch_migrate("migrate", "repo", "--diff", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    diff, card = result.stdout.split("## torch-migrate report card", 1)
    assert "+++ b/train.py" in diff and "torch.sigmoid" in diff
    assert "would rewrite **1** of 1 file; **1 fix**; **0 hazards** left; 0 files not processed." in card
    assert ("Each entry point's first 2 optimizer steps compared, OLD against NEW "
            f"(`steps = 2` in {Path('repo') / 'pyproject.toml'})") in card
    assert "| `train.py` | equivalent |" in card
    lines = result.stderr.splitlines()
    assert lines and all(TIMESTAMPED.match(line) for line in lines), result.stderr
    assert any(line.endswith("verifying train.py (entry point 1 of 1)") for line in lines)
    assert any("NEW run (train.py) on cpu: ok after 2 steps" in line for line in lines)

    quiet = torch_migrate("migrate", "repo", "--diff", "-q", "--steps", "1", "--json", "card.json", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "first 1 optimizer step compared, OLD against NEW (`--steps 1`)" in quiet.stdout
    assert '"steps_source": "`--steps 1`"' in (tmp_path / "card.json").read_text()
