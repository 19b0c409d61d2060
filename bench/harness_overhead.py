"""How much wall time does recording add? Target: the recording beyond the training steps
(evaluation forward passes, TensorBoard/logging records, written files read back) costs
<= 10 % of the run's wall time.

For each bundled sample (rewritten by the tool into a temporary copy, so that it runs on
current PyTorch), runs to the end of its default arguments, interleaved, ``--repeat`` times:

- bare: ``python SCRIPT`` in a mirror, without the harness;
- steps: through the harness, recording the training steps only (every ``--no-compare-*``);
- full: through the harness with every recording on, as ``verify`` runs by default;
- upto: steps only, stopped after step ``--localize-step`` (as a localisation re-run is);
- layers: the same with every module call and parameter gradient of that step recorded: the
  localisation re-run ``verify`` makes after a divergence (layers/upto is what the hooks cost).

Then, once per sample, the parent-side cost ``verify`` adds to the default path: comparing OLD
and NEW at tolerance 0 to decide whether OLD runs again (``--repeat`` by default).

and prints the medians and the ratios full/steps (the extra recording) and full/bare (all
of it), in wall time and in CPU time (user + system of the child processes: on a loaded
machine wall times swing by 2x between identical runs, CPU time much less). Both harness
runs measure memory over the same first steps. One intra-op thread
(``OMP_NUM_THREADS=1`` unless set): with several, other load on a shared machine makes
timings swing by 5x.

    python bench/harness_overhead.py [--repeat 3] [--only mnist_classifier.py ...]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from migrate import driver
from migrate.config import load_config
from migrate.discover import discover
from migrate.harness.noise import differences
from migrate.harness.runner import RunOutcome, RunSpec, mirror_tree, run_script

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
MODES = ("bare", "steps", "full", "upto", "layers")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(run, *args) -> tuple[float, float]:
    """(wall, CPU) seconds of one run."""
    cpu = _children_cpu()
    wall = run(*args)
    return wall, _children_cpu() - cpu


def migrated_samples(work: Path) -> Path:
    tree = work / "samples"
    shutil.copytree(SAMPLES, tree)
    driver.run(discover([tree]), driver.Options(driver.WRITE))
    return tree


def bare(tree: Path, entry: str, work: Path) -> float:
    mirror = Path(tempfile.mkdtemp(dir=work)) / "tree"
    mirror_tree(tree, mirror, exclude=work)
    script = mirror / entry
    started = time.perf_counter()
    subprocess.run([sys.executable, str(script)], cwd=script.parent, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    shutil.rmtree(mirror.parent)
    return elapsed


def recorded(tree: Path, entry: str, full: bool, upto: int | None = None, layers: bool = False) -> RunOutcome:
    spec = RunSpec(f"bench-{'full' if full else 'steps'}", tree / entry, tree, timeout=1800, evaluation=full,
                   metrics=full, artifacts=full, steps=upto, layers=upto if layers else None)
    outcome = run_script(spec)
    if outcome.status != "ok":
        sys.exit(f"{entry}: recorded run failed: {outcome.reason}\n{outcome.stderr_tail}")
    return outcome


def timed(tree: Path, entry: str, *args) -> float:
    return recorded(tree, entry, *args).wall_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="entry points of samples/ to run (default: all)")
    parser.add_argument("--localize-step", type=int, default=3, help="the step a localisation re-run watches")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    entries = args.only or load_config([SAMPLES]).entry
    with tempfile.TemporaryDirectory(prefix="harness-overhead-") as work:
        tree = migrated_samples(Path(work))
        times = {entry: {mode: [] for mode in MODES} for entry in entries}
        for _ in range(args.repeat):
            for entry in entries:
                times[entry]["bare"].append(measure(bare, tree, entry, Path(work)))
                times[entry]["steps"].append(measure(timed, tree, entry, False))
                times[entry]["full"].append(measure(timed, tree, entry, True))
                times[entry]["upto"].append(measure(timed, tree, entry, False, args.localize_step))
                times[entry]["layers"].append(measure(timed, tree, entry, False, args.localize_step, True))
        decision = {entry: _decision_ms(tree, entry) for entry in entries}
    for i, what in enumerate(("wall", "CPU")):
        print(f"median {what} time of {args.repeat} runs per sample, run to its end (bare / steps only / full), "
              f"and to step {args.localize_step} (steps only / with module hooks):")
        totals = dict.fromkeys(MODES, 0.0)
        for entry in entries:
            medians = {mode: statistics.median(t[i] for t in times[entry][mode]) for mode in MODES}
            for mode in MODES:
                totals[mode] += medians[mode]
            _row(entry, medians)
        _row("all samples", totals)
    print("repeat decision (OLD against NEW at tolerance 0, in the parent), per sample:")
    for entry, (ms, run) in decision.items():
        print(f"  {entry:<30} {ms:6.1f} ms   {ms / 1e3 / run:.2%} of the recorded run's wall time")
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores:
        print(f"warning: load average {load:.1f} on {cores} cores: wall times are unreliable")


def _decision_ms(tree: Path, entry: str) -> tuple[float, float]:
    """Milliseconds the repeat decision takes for two full recordings of ``entry``, and one run's wall time."""
    old, new = recorded(tree, entry, True), recorded(tree, entry, True)
    started = time.perf_counter()
    differences(old, new)
    return (time.perf_counter() - started) * 1e3, old.wall_time


def _row(name: str, seconds: dict[str, float]) -> None:
    print(f"  {name:<30} {seconds['bare']:6.2f} s / {seconds['steps']:6.2f} s / {seconds['full']:6.2f} s"
          f"   full/steps {seconds['full'] / seconds['steps']:.3f}   full/bare {seconds['full'] / seconds['bare']:.3f}"
          f"   | {seconds['upto']:6.2f} s / {seconds['layers']:6.2f} s   layers/upto {seconds['layers'] / seconds['upto']:.3f}")


if __name__ == "__main__":
    main()
