"""TM706: the migrated parser takes the local rank from either launcher: `--local_rank` (torch<2.0's
launch), `--local-rank` (torch>=2.0's launch) or `LOCAL_RANK` (torchrun), in a real interpreter."""
import os
import subprocess
import sys

import pytest
from ecosystem_support import applied, migrate

SCRIPT = """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument('--local_rank', type=int, default=0)
parser.add_argument('--epochs', type=int, default=1)
print(parser.parse_args().local_rank)
"""


def run(tmp_path, source, *args, env=None):
    script = tmp_path / "train.py"
    script.write_text(source)
    environment = {k: v for k, v in os.environ.items() if k != "LOCAL_RANK"}
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env={**environment, **(env or {})})
    return done.stdout.strip() if done.returncode == 0 else done.stderr


@pytest.mark.parametrize("args, env, rank", [(["--local_rank=2"], None, "2"), (["--local-rank=3"], None, "3"),
                                             ([], {"LOCAL_RANK": "1"}, "1"), ([], None, "0")],
                         ids=["launch<2.0", "launch>=2.0", "torchrun", "no launcher"])
def test_every_launcher_reaches_the_script(tmp_path, args, env, rank):
    outcome = migrate(SCRIPT)
    assert applied(outcome) == ["TM706"]
    assert run(tmp_path, outcome.text, *args, env=env) == rank


def test_the_legacy_parser_fails_under_the_current_launcher(tmp_path):
    assert "unrecognized arguments: --local-rank=3" in run(tmp_path, SCRIPT, "--local-rank=3")
    assert run(tmp_path, SCRIPT, env={"LOCAL_RANK": "1"}) == "0"  # torchrun: every process thinks it is rank 0
