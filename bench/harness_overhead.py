"""How much wall time does recording add to a training loop? Target: ratio <= 1.10.

Runs a sample training script bare (``python SCRIPT``) and recorded (through the
harness's runner, as ``verify`` does), interleaved, ``--repeat`` times each, and
prints the ratio of the medians: for the whole run, and for the training loop
alone (each minus the same run with ``--steps 0``: interpreter, imports, model
construction).

    python bench/harness_overhead.py [--steps 100] [--repeat 5] [--script PATH]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from migrate.harness.runner import RunSpec, run_script

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "harness" / "scripts" / "style_transfer_migrated.py"


def bare(script: Path, steps: int) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, str(script), "--steps", str(steps)], cwd=script.parent, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def recorded(script: Path, steps: int) -> float:
    started = time.perf_counter()
    outcome = run_script(RunSpec("bench", script, script.parent, args=("--steps", str(steps))))
    if outcome.status != "ok" or outcome.complete_steps != steps:
        sys.exit(f"recorded run failed: {outcome.reason}\n{outcome.stderr_tail}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--script", type=Path, default=SAMPLE, help="a training script taking --steps N")
    args = parser.parse_args()
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.repeat):
        for steps in (0, args.steps):
            for name, run in (("bare", bare), ("recorded", recorded)):
                times.setdefault((name, steps), []).append(run(args.script, steps))
    median = {key: statistics.median(values) for key, values in times.items()}
    whole = median["recorded", args.steps] / median["bare", args.steps]
    loop = ((median["recorded", args.steps] - median["recorded", 0])
            / (median["bare", args.steps] - median["bare", 0]))
    print(f"{args.script.name}, {args.steps} steps, median of {args.repeat}: "
          f"bare {median['bare', args.steps]:.2f} s, recorded {median['recorded', args.steps]:.2f} s")
    print(f"overhead ratio (recorded / bare), whole run: {whole:.3f}")
    print(f"overhead ratio (recorded / bare), training loop only: {loop:.3f}")


if __name__ == "__main__":
    main()
