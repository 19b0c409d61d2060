"""What verifying on Ray costs: the same N entry points through the local process pool and a local Ray instance.

    python bench/ray_overhead.py [--entries 6] [--steps 3] [--cpus 2] [--rounds 2]

Builds a tree with N copies of tests/data/repo's regression script (each its own seed), rewrites a
copy (NEW), and verifies every entry point, OLD against NEW, as N jobs (``migrate.harness.jobs``):

- sequential: ``run_job`` one after the other in this process (the work itself, no engine);
- pool: ``fanout.LocalPool`` with --cpus processes;
- ray: ``fanout.RayPool`` on a local instance with --cpus CPUs (its start-up timed on its own: a
  cluster pays it once, not per run); the trees travel through the object store as on a cluster.

For each, the wall time, the ratio to the pool's (the local baseline, measured in the same run) and
the overhead per job: (wall time - the jobs' own time / --cpus) / N, where a job's own time is what
``run_job`` took inside its worker. The engines alternate over --rounds; the fastest round counts.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from migrate.harness import VerifyOptions  # noqa: E402
from migrate.harness.fanout import Engine, LocalPool, RayPool  # noqa: E402
from migrate.harness.jobs import Job, run_job  # noqa: E402


def build(folder: Path, entries: int) -> tuple[Path, Path]:
    old = folder / "old"
    shutil.copytree(ROOT / "tests" / "data" / "repo", old)
    script = (old / "train_regression.py").read_text()
    for i in range(entries):
        (old / f"entry{i}.py").write_text(script.replace("torch.manual_seed(2)", f"torch.manual_seed({i})"))
    new = folder / "new"
    shutil.copytree(old, new)
    subprocess.run([sys.executable, "-m", "migrate", "rewrite", str(new)], check=True, capture_output=True, cwd=ROOT)
    return old, new


def measure(run, jobs) -> tuple[float, float, list]:
    started = time.perf_counter()
    results = run(jobs)
    wall = time.perf_counter() - started
    bad = [r for r in results if r.verify.verdict != "equivalent"]
    if bad:
        raise SystemExit(f"{bad[0].name}: {bad[0].verify.reason}")
    return wall, sum(r.seconds for r in results), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=6)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import ray

    with tempfile.TemporaryDirectory(prefix="ray-overhead-") as folder:
        old, new = build(Path(folder), args.entries)
        options = VerifyOptions(steps=args.steps, device="cpu", timeout=300, compat=True)
        jobs = [Job(f"entry{i}.py", f"entry{i}.py", f"entry{i}.py", (str(old), str(new)), options)
                for i in range(args.entries)]
        started = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        ray_pool = RayPool(Engine(ray="local"))
        startup = time.perf_counter() - started
        pool = LocalPool(Engine(jobs=args.cpus))
        engines = {"sequential": lambda js: [run_job(j) for j in js], "pool": pool.run, "ray": ray_pool.run}
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for name, run in engines.items():
                wall, inner, _ = measure(run, jobs)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, inner)
        ray.shutdown()
    base = best["pool"][0]
    print(f"{args.entries} entry points, {args.steps} steps each, {args.cpus} CPUs; fastest of {args.rounds} rounds; "
          f"Ray start-up {startup:.1f} s (not counted below)")
    print(f"{'engine':<12}{'wall s':>9}{'x pool':>9}{'job s':>9}{'overhead/job s':>16}")
    for name, (wall, inner) in best.items():
        slots = 1 if name == "sequential" else args.cpus
        overhead = (wall - inner / slots) / args.entries
        print(f"{name:<12}{wall:>9.1f}{wall / base:>9.2f}{inner / args.entries:>9.1f}{overhead:>16.2f}")


if __name__ == "__main__":
    main()
