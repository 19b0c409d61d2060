"""How much wall time does recording add to a training loop? Target: ratio <= 1.10.

Runs a training script bare and recorded (through the harness's runner, as
``verify`` does), interleaved, ``--repeat`` times each, and prints the ratio of
the medians for

- the training loop: from the end of step 1 to the end of step N. The recorded
  run's record has the step times; the bare run gets a global optimizer hook
  that only reads the clock (the end of step 1 leaves out start-up, which
  varies by seconds on a shared machine);
- the whole run, process start to exit, in wall time and in CPU time (user +
  system of the child): on a loaded machine wall times swing by 2x between
  identical runs, CPU time much less, so a warning names the load when it
  exceeds the number of cores.

Both run with one intra-op thread (``OMP_NUM_THREADS=1`` unless set): with
several, other load on a shared machine makes timings swing by 5x.

    python bench/harness_overhead.py [--steps 200] [--repeat 5] [--script PATH]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from migrate.harness.runner import RunSpec, run_script

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "harness" / "scripts" / "style_transfer_migrated.py"
# Run SCRIPT as __main__ with a clock-only optimizer hook; print the seconds from the end of step 1 to the last.
PROBE = """
import runpy, sys, time, torch.optim.optimizer as o
ends = []
o.register_optimizer_step_post_hook(lambda *a: ends.append(time.perf_counter()))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print("LOOP", ends[-1] - ends[0], file=sys.stderr)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bare(script: Path, steps: int) -> float:
    done = subprocess.run([sys.executable, "-c", PROBE, str(script), "--steps", str(steps)], cwd=script.parent,
                          check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return float(done.stderr.rsplit("LOOP", 1)[1])


def recorded(script: Path, steps: int) -> float:
    outcome = run_script(RunSpec("bench", script, script.parent, args=("--steps", str(steps))))
    if outcome.status != "ok" or outcome.complete_steps != steps:
        sys.exit(f"recorded run failed: {outcome.reason}\n{outcome.stderr_tail}")
    return sum(step.time for step in outcome.steps[1:])


def measure(run, script: Path, steps: int) -> tuple[float, float, float]:
    """(training loop wall, whole run wall, whole run CPU) in seconds."""
    wall, cpu = time.perf_counter(), _children_cpu()
    loop = run(script, steps)
    return loop, time.perf_counter() - wall, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--script", type=Path, default=SAMPLE, help="a training script taking --steps N")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    times: dict[str, list[tuple[float, float, float]]] = {"bare": [], "recorded": []}
    for _ in range(args.repeat):
        for name, run in (("bare", bare), ("recorded", recorded)):
            times[name].append(measure(run, args.script, args.steps))
    print(f"{args.script.name}, {args.steps} steps, median of {args.repeat} (bare / recorded):")
    for i, what in enumerate(("training loop, wall", "whole run, wall", "whole run, CPU")):
        b, r = (statistics.median(t[i] for t in times[name]) for name in ("bare", "recorded"))
        print(f"  {what:<20} {b:6.2f} s / {r:6.2f} s   overhead ratio {r / b:.3f}")
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores:
        print(f"warning: load average {load:.1f} on {cores} cores: wall times are unreliable, trust CPU time")


if __name__ == "__main__":
    main()
