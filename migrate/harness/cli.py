"""``torch-migrate verify``: the typer command. Registered by the main app with
``app.command("verify")(verify)``; everything after ``--`` goes to both scripts.

The harness (torch) is imported when the command runs, not when it is defined:
``torch-migrate --help`` lists this command and must start at once."""
from __future__ import annotations

import sys
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from migrate.harness.defaults import CURVE_FRACTION, CURVE_RTOL
from migrate.progress import for_stderr


class Mode(str, Enum):
    steps = "steps"
    curve = "curve"


class Device(str, Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"
    all = "all"


_FILE = dict(exists=True, dir_okay=False, readable=True)


def verify(
    old: Annotated[Path, typer.Argument(metavar="OLD", help="The original (legacy) training script.", **_FILE)],
    new: Annotated[Path, typer.Argument(metavar="NEW", help="The migrated training script.", **_FILE)],
    script_args: Annotated[Optional[list[str]], typer.Argument(
        metavar="ARGS...", help="Arguments for both scripts, after `--` (e.g. `-- --epochs 1`).", show_default=False)] = None,
    steps: Annotated[Optional[int], typer.Option(
        min=1, help="Stop both runs after N steps: optimizer.step() calls of any optimizer, or backward() calls "
                    "in scripts without one. Steps count from 1.")] = None,
    device: Annotated[Device, typer.Option(
        help="auto: cpu, plus cuda when present; all: cpu and cuda, plus OLD-cpu vs NEW-cuda.")] = Device.auto,
    timeout: Annotated[float, typer.Option(
        min=0.001, help="Seconds per run; a run that takes longer is killed with its whole process tree.")] = 600.0,
    rtol: Annotated[Optional[float], typer.Option(
        min=0.0, help="Relative tolerance for every dtype (default: per dtype as torch.testing.assert_close, "
                      "float32 1.3e-6).")] = None,
    atol: Annotated[Optional[float], typer.Option(
        min=0.0, help="Absolute tolerance for every dtype (default: per dtype, float32 1e-5).")] = None,
    memory_tolerance: Annotated[Optional[float], typer.Option(
        min=0.0, help="Allowed relative growth of NEW's peak memory over OLD's.", show_default="0.1")] = None,
    memory_steps: Annotated[int, typer.Option(
        min=0, help="CPU: steps watched by the memory profiler (0: do not measure CPU memory).")] = 3,
    full: Annotated[bool, typer.Option(
        "--full", help="Record every tensor whole (default: whole up to 4096 elements, else a fingerprint).")] = False,
    compat: Annotated[bool, typer.Option(
        "--compat", help="Run OLD with the PyTorch 0.3 compatibility layer (`.data[0]`, volatile, async=, ...).")] = False,
    old_python: Annotated[Optional[str], typer.Option(
        help="Interpreter for OLD (e.g. a venv with an old PyTorch).")] = None,
    new_python: Annotated[Optional[str], typer.Option(
        help="Interpreter for NEW (default: this one).")] = None,
    root: Annotated[Optional[Path], typer.Option(
        help="The tree each run sees a copy of (default: the git repository holding the script, else its folder).",
        exists=True, file_okay=False)] = None,
    ignore_output: Annotated[Optional[list[str]], typer.Option(
        "--ignore-output", metavar="GLOB", help="Leave written files matching GLOB out of the comparison "
                                                "(repeatable; a path from the script's folder or the root, or a file name).")] = None,
    compare_evaluation: Annotated[bool, typer.Option(
        "--compare-evaluation/--no-compare-evaluation", help="Compare evaluation forward passes (outputs of module calls "
                                                 "outside training steps).")] = True,
    compare_stdout: Annotated[bool, typer.Option("--compare-stdout/--no-compare-stdout",
                                                 help="Compare what the scripts print, line by line.")] = True,
    compare_stderr: Annotated[bool, typer.Option("--compare-stderr/--no-compare-stderr",
                                                 help="Compare stderr (warnings left out).")] = True,
    compare_metrics: Annotated[bool, typer.Option(
        "--compare-metrics/--no-compare-metrics",
        help="Compare logged metrics as series (printed, logging, TensorBoard add_scalar).")] = True,
    compare_artifacts: Annotated[bool, typer.Option(
        "--compare-artifacts/--no-compare-artifacts",
        help="Compare the files the scripts write (checkpoints, images, .npy, text).")] = True,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Show each run's output as it comes.")] = False,
    change_map: Annotated[Optional[Path], typer.Option(
        help="JSON change map written by `torch-migrate rewrite`, to name the lines responsible.", **_FILE)] = None,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Write the full result as JSON.")] = None,
    junit: Annotated[Optional[Path], typer.Option(help="Write JUnit XML: one test case per quantity.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for torch, random and numpy in both runs.")] = 0,
    repeat: Annotated[Optional[int], typer.Option(
        min=1, help="Run OLD N times; if it disagrees with itself, judge NEW against k=3 times OLD's own spread "
                    "(default: 2 on CUDA or when the first pair is not bitwise equal, else 1).",
        show_default=False)] = None,
    mode: Annotated[Mode, typer.Option(
        help="steps: step by step within tolerances; curve: the loss curve within --curve-rtol with at most "
             "--curve-fraction of the steps beyond it, final parameters and metrics (runs never bitwise alike).")
    ] = Mode.steps,
    curve_rtol: Annotated[float, typer.Option(min=0.0, help="--mode curve: relative tolerance per step (Megatron's).")
                          ] = CURVE_RTOL,
    curve_fraction: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="--mode curve: fraction of steps that may lie beyond --curve-rtol.")] = CURVE_FRACTION,
    plot: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Write both loss curves as a PNG (needs matplotlib).", dir_okay=False)] = None,
    localize: Annotated[bool, typer.Option(
        "--localize/--no-localize", help="After a divergence, re-run both to its step with module hooks and name "
                                         "the first module (or parameter) that differs.")] = True,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress on stderr (the report is unchanged).")] = False,
    pair: Annotated[Optional[list[str]], typer.Option(
        "--pair", metavar="OLD:NEW", help="Another pair to verify with the same options (repeatable); the pairs run "
                                          "side by side (--jobs, --ray), each in its own copy.")] = None,
    jobs: Annotated[Optional[int], typer.Option(
        "-j", "--jobs", min=0, metavar="N", show_default=False,
        help="Pairs verified side by side on this machine (default and 0: one per GPU for GPU jobs, CPU jobs as "
             "cores and memory allow; with --ray: at most N in flight).")] = None,
    ray: Annotated[Optional[str], typer.Option(
        "--ray", metavar="ADDRESS", help="Verify the pairs on Ray: `auto` (the cluster this machine belongs to), "
                                         "`ray://HEAD:10001`, or `local` (start a Ray instance here). Needs "
                                         "pip install \"torch-migrate[ray]\".")] = None,
    shared_dir: Annotated[Optional[Path], typer.Option(
        "--shared-dir", metavar="DIR", file_okay=False,
        help="With --ray: copy the trees to DIR, mounted at the same path on every node, instead of shipping "
             "them with the jobs.")] = None,
) -> None:
    """Run OLD and NEW with the same seeds and compare losses, gradients, values
    and peak memory step by step, evaluation forward passes, printed output,
    logged metrics and written files; report the first divergence.

    Exit status: 0 equivalent; 1 not equivalent (including NEW raising or
    crashing where OLD did not); 2 usage error; 3 no comparison possible (OLD
    failed or recorded nothing, so NEW was not run; or a run timed out).
    """
    from . import report
    from .comparer import DEFAULT_MEMORY_TOLERANCE, Comparisons
    from .verify import EXIT_USAGE, UsageError, VerifyOptions, verify_scripts

    options = VerifyOptions(
        script_args=tuple(script_args or ()), steps=steps, device=device.value, timeout=timeout, rtol=rtol,
        atol=atol, memory_tolerance=DEFAULT_MEMORY_TOLERANCE if memory_tolerance is None else memory_tolerance,
        memory_steps=memory_steps, full=full, compat=compat, old_python=old_python, new_python=new_python,
        old_root=root, new_root=root, change_map=change_map, seed=seed,
        compare=Comparisons(evaluation=compare_evaluation, stdout=compare_stdout, stderr=compare_stderr,
                            metrics=compare_metrics, artifacts=compare_artifacts),
        ignore_output=tuple(ignore_output or ()), echo=verbose, repeat=repeat, localize=localize,
        mode=mode.value, curve_rtol=curve_rtol, curve_fraction=curve_fraction, plot=plot)
    pairs = [(old, new)] + [_pair(text) for text in pair or ()]
    if len(pairs) > 1 or jobs is not None or ray is not None:
        _verify_many(pairs, options, jobs, ray, shared_dir, json_path, junit, plot, quiet or verbose)
    try:
        # -v shows the runs' own output as it comes: a live progress display would fight it
        with for_stderr(quiet or verbose) as progress:
            progress.phase(f"verify: {old} against {new}")
            result = verify_scripts(old, new, options, progress=progress)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_USAGE) from None
    report.render(result)
    if json_path is not None:
        report.write_json(result, json_path)
    if junit is not None:
        report.write_junit(result, junit)
    if plot is not None:
        report.write_plot(result, plot)
    raise typer.Exit(result.exit_code)


def _usage(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(2)


def _pair(text: str) -> tuple[Path, Path]:
    parts = text.split(":")
    if len(parts) != 2 or not all(parts):
        _usage(f"--pair takes OLD:NEW, two script paths, not {text!r}")
    for part in parts:
        if not Path(part).is_file():
            _usage(f"--pair {text}: {part} is not a file")
    return Path(parts[0]), Path(parts[1])


def _verify_many(pairs, options, jobs, ray, shared_dir, json_path, junit, plot, quiet) -> None:
    """Each pair a job (``harness.jobs``), side by side on this machine or on Ray: the report of each,
    then one line per pair; the exit status is the worst."""
    import json

    from . import report
    from .fanout import Engine, RayMissing, RayUnreachable, open_engine
    from .jobs import Job
    from .verify import project_root

    if shared_dir is not None and ray is None:
        _usage("--shared-dir goes with --ray")
    if len(pairs) > 1 and (junit is not None or plot is not None):
        _usage("--junit and --plot take one pair (--json writes every pair's result)")
    if isinstance(options.change_map, Path):  # read here: the job may run where the file is not
        options = replace(options, change_map=json.loads(options.change_map.read_text()))
    made = []
    for old, new in pairs:
        roots = [Path(r).resolve() if r else project_root(s) for r, s in ((options.old_root, old), (options.new_root, new))]
        for root, script in zip(roots, (old, new)):
            if root not in script.resolve().parents:
                _usage(f"{script} is not inside the root {root}")
        made.append(Job(f"{old} vs {new}", str(old.resolve().relative_to(roots[0])),
                        str(new.resolve().relative_to(roots[1])), (str(roots[0]), str(roots[1])),
                        replace(options, old_root=None, new_root=None)))
    try:
        with open_engine(Engine(jobs=jobs or 0, ray=ray, shared_dir=shared_dir)) as pool, for_stderr(quiet) as progress:
            results = pool.run(made, progress)
    except (RayMissing, RayUnreachable) as exc:
        _usage(str(exc))
    for result in results:
        print(f"\nverify {result.name}: {result.verify.verdict}")
        report.render(result.verify)
    print()
    for result in results:
        print(f"{result.name}: {result.verify.verdict}: {result.verify.reason}")
    if json_path is not None:
        if len(results) == 1:
            report.write_json(results[0].verify, json_path)
        else:
            json_path.write_text(json.dumps([r.verify.to_json() for r in results], indent=2, default=str))
    if junit is not None:
        report.write_junit(results[0].verify, junit)
    if plot is not None:
        report.write_plot(results[0].verify, plot)
    raise typer.Exit(max(r.verify.exit_code for r in results))
