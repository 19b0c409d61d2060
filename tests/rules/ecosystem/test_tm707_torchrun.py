"""TM707: launch commands in shell scripts, Makefiles and READMEs move to torchrun, through the real command line,
and the rewritten command starts the rewritten script with the right ranks under a real `torchrun`."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from cli_support import torch_migrate  # noqa: E402

TRAIN = """\
import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument('--local_rank', type=int, default=0)
parser.add_argument('--lr', type=float, default=0.1)
args = parser.parse_args()
sys.stdout.write('rank %d lr %s\\n' % (args.local_rank, args.lr))  # one write: the workers share a pipe
"""


def tree(tmp_path, **files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_shell_script_and_script_migrate_together_and_run_under_torchrun(tmp_path):
    root = tree(tmp_path, **{"train.py": TRAIN,
                             "scripts/run.sh": "#!/bin/sh\ncd \"$(dirname \"$0\")/..\"\n"
                                               "python -m torch.distributed.launch --nproc_per_node=2 train.py --lr 0.5\n"})
    done = torch_migrate("rewrite", "--no-cache", ".", cwd=root)
    assert done.returncode == 0, done.stderr
    script = (root / "scripts/run.sh").read_text()
    assert "torchrun --nproc_per_node=2 train.py --lr 0.5\n" in script
    if shutil.which("torchrun", path=os.path.dirname(sys.executable)) is None:
        pytest.skip("no torchrun next to this interpreter")
    environment = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    environment.pop("LOCAL_RANK", None)
    ran = subprocess.run(["sh", str(root / "scripts/run.sh")], capture_output=True, text=True, env=environment,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert sorted(line for line in ran.stdout.splitlines() if line.startswith("rank")) == [
        "rank 0 lr 0.5", "rank 1 lr 0.5"]


def test_the_legacy_launch_line_fails_on_current_torch(tmp_path):
    """torch >= 2.0's launcher passes `--local-rank`, which the legacy parser refuses: the script never runs."""
    root = tree(tmp_path, **{"train.py": TRAIN})
    ran = subprocess.run([sys.executable, "-m", "torch.distributed.launch", "--nproc_per_node=1", "train.py"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert ran.returncode != 0
    assert "unrecognized arguments: --local-rank=0" in ran.stderr


def test_makefile_readme_and_yaml_in_one_run(tmp_path):
    root = tree(tmp_path, **{
        "main.py": "import os\nrank = int(os.environ['LOCAL_RANK'])\n",
        "Makefile": "train:\n\t$(PYTHON) -m torch.distributed.launch --nproc_per_node=$(GPUS) \\\n\t\tmain.py\n",
        "README.md": "Run\n\n```bash\npython -m torch.distributed.launch --nproc_per_node=8 main.py --cfg a.yaml\n```\n",
        "job.yaml": "command: python3 -m torch.distributed.launch --use_env main.py\n",
        "notes.txt": "python -m torch.distributed.launch main.py\n"})  # not a command file: left alone
    done = torch_migrate("rewrite", "--no-cache", ".", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "$(PYTHON) -m torch.distributed.run --nproc_per_node=$(GPUS)" in (root / "Makefile").read_text()
    assert "torchrun --nproc_per_node=8 main.py --cfg a.yaml" in (root / "README.md").read_text()
    assert (root / "job.yaml").read_text() == "command: torchrun main.py\n"
    assert "torch.distributed.launch" in (root / "notes.txt").read_text()


def test_a_script_reading_its_rank_another_way_is_an_unsafe_fix(tmp_path):
    root = tree(tmp_path, **{
        "train.py": "import sys\nlocal_rank = int(sys.argv[1].split('=')[1])\n",
        "run.sh": "python -m torch.distributed.launch --nproc_per_node=2 train.py\n"})
    done = torch_migrate("check", "--no-cache", "run.sh", cwd=root)
    assert done.returncode == 1
    assert "run.sh:1:1: TM707" in done.stdout and "some way other than `LOCAL_RANK`" in done.stdout
    assert torch_migrate("rewrite", "--no-cache", "run.sh", cwd=root).returncode == 0
    assert "torch.distributed.launch" in (root / "run.sh").read_text()
    assert torch_migrate("rewrite", "--no-cache", "--unsafe-fixes", "run.sh", cwd=root).returncode == 0
    assert (root / "run.sh").read_text() == "torchrun --nproc_per_node=2 train.py\n"


@pytest.mark.parametrize("min_torch, expected", [
    ("1.8", "python -m torch.distributed.launch --use_env train.py\n"),
    ("1.9", "python -m torch.distributed.run train.py\n"),
    ("1.10", "torchrun train.py\n")])
def test_min_torch_picks_the_spelling(tmp_path, min_torch, expected):
    root = tree(tmp_path, **{"run.sh": "python -m torch.distributed.launch --use_env train.py\n"})
    done = torch_migrate("rewrite", "--no-cache", "--min-torch", min_torch, ".", cwd=root)
    assert done.returncode == 0, done.stderr
    assert (root / "run.sh").read_text() == expected


def test_arguments_of_the_script_are_not_launcher_options(tmp_path):
    root = tree(tmp_path, **{"run.sh": "python -m torch.distributed.launch --use_env main.py --use_env\n"})
    assert torch_migrate("rewrite", "--no-cache", ".", cwd=root).returncode == 0
    assert (root / "run.sh").read_text() == "torchrun main.py --use_env\n"
