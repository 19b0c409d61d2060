"""Programmatic entry point: run OLD and NEW, compare, decide, attribute.

Each side runs in a mirror of its root: the git repository holding the script,
or ``--root``, so that ``../data`` and the project's packages are there as in
the user's checkout; the script runs from its own folder inside it.

Both scripts run one after the other (never side by side: step times would
mean nothing) on each requested device; NEW is not run when OLD failed or
recorded nothing, as there is nothing to compare it with. Devices: ``auto`` is
CPU, plus CUDA when present; ``all`` is CPU and CUDA plus a cross-device
comparison of OLD on CPU against NEW on CUDA (looser tolerances, see comparer).
"""
from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch

from migrate.progress import Progress

from .attribution import Change, Culprit, diff_changes, load_change_map, rank
from .defaults import CURVE_FRACTION, CURVE_RTOL
from .comparer import (DEFAULT_MEMORY_TOLERANCE, Check, Comparisons, PairComparison, Tolerance, compare_runs,
                       decode_elements)
from .localize import KINDS as LOCALIZED_KINDS, Localization, locate
from .noise import Noise, apply as apply_noise, differences, measure as measure_noise
from .records import EncodedTensor
from .runner import RunOutcome, RunSpec, run_side

EXIT_EQUIVALENT, EXIT_DIFFERENT, EXIT_USAGE, EXIT_NO_COMPARISON = 0, 1, 2, 3
DEVICES = ("auto", "cpu", "cuda", "all")
MODES = ("steps", "curve")


class UsageError(ValueError):
    """Options that cannot work (missing file, bad value): the CLI exits with 2."""


@dataclass(frozen=True)
class VerifyOptions:
    """How to run and compare. ``old_root``/``new_root``: the tree mirrored for each side
    (default: the git repository holding the script, else the script's folder)."""

    script_args: tuple[str, ...] = ()
    steps: int | None = None
    device: str = "auto"
    timeout: float = 600.0
    rtol: float | None = None
    atol: float | None = None
    memory_tolerance: float = DEFAULT_MEMORY_TOLERANCE
    memory_steps: int = 3
    full: bool = False
    compat: bool = False
    old_python: str | None = None
    new_python: str | None = None
    old_root: Path | None = None
    new_root: Path | None = None
    change_map: Path | Sequence[Mapping] | None = None
    seed: int = 0
    compare: Comparisons = Comparisons()
    ignore_output: tuple[str, ...] = ()  # globs (relative to the root, or file names) of written files left out
    echo: bool = False  # show each run's output as it comes
    localize: bool = True  # after a divergence, re-run both up to its step with module hooks
    repeat: int | None = None  # runs of OLD; None: 2 on CUDA or when the first pair is not bitwise equal, else 1
    mode: str = "steps"  # steps: step by step within tolerances; curve: the loss curve, final values (see curve)
    curve_rtol: float = CURVE_RTOL
    curve_fraction: float = CURVE_FRACTION  # of the steps that may lie beyond curve_rtol
    plot: Path | None = None  # write both loss curves as a PNG (matplotlib)


@dataclass
class VerifyResult:
    old: Path
    new: Path
    options: VerifyOptions
    verdict: str  # equivalent | different | error
    exit_code: int
    reason: str
    pairs: list[PairComparison]
    culprits: list[Culprit] = field(default_factory=list)
    localization: Localization | None = None
    noise: list[Noise] = field(default_factory=list)  # OLD against itself, per device it was repeated on
    repeats: list[RunOutcome] = field(default_factory=list)  # OLD's runs beyond the first

    @property
    def runs(self) -> list[RunOutcome]:
        seen: list[RunOutcome] = []
        for pair in self.pairs:
            seen.extend(r for r in (pair.old, pair.new) if not any(r is s for s in seen))
        return seen + self.repeats

    @property
    def divergence_pair(self) -> PairComparison | None:
        return next((p for p in self.pairs if p.first_divergence is not None), None)

    @property
    def first_divergence(self) -> Check | None:
        pair = self.divergence_pair
        return pair.first_divergence if pair else None

    def to_json(self) -> dict:
        first = self.first_divergence
        return _finite({
            "old": str(self.old), "new": str(self.new), "verdict": self.verdict, "exit_code": self.exit_code,
            "reason": self.reason,
            "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self.options).items()
                        if k != "change_map"},
            "first_divergence": None if first is None else {"pair": self.divergence_pair.label, **asdict(first)},
            "noise": [asdict(n) for n in self.noise],
            "localization": None if self.localization is None else asdict(self.localization),
            "culprits": [{**_public(asdict(c.change)), "score": c.score, "reasons": list(c.reasons)}
                         for c in self.culprits],
            "runs": [_run_json(r) for r in self.runs],
            "comparisons": [{
                "pair": p.label, "cross_device": p.cross_device, "old": p.old.spec.label, "new": p.new.spec.label,
                "summary": [{"comparison": name, "ok": ok, "detail": detail} for name, ok, detail in p.summary()],
                "quantities": [{"name": q.name, "kind": q.kind, "param": q.param, "ok": q.ok,
                                "max_abs": q.max_abs, "max_rel": q.max_rel,
                                "checks": [asdict(c) for c in q.checks]} for q in p.quantities],
            } for p in self.pairs],
        })


def _public(change: dict) -> dict:
    return {k: v for k, v in change.items() if k not in ("evidence", "old_evidence")}


def _run_json(run: RunOutcome) -> dict:
    return {
        "label": run.spec.label, "script": str(run.spec.script), "device": run.spec.device,
        "python": run.spec.python, "status": run.status, "reason": run.reason, "returncode": run.returncode,
        "wall_time": run.wall_time, "steps": run.complete_steps, **{
            kind: None if record is None else record.to_dict()
            for kind, record in (("header", run.header), ("memory", run.memory), ("exception", run.exception),
                                 ("end", run.end))},
        "output_bytes": run.output_bytes,
        "leftover_processes": run.leftover_processes, "stdout_tail": run.stdout_tail[-4000:],
        "stderr_tail": run.stderr_tail[-4000:],
        "root": str(run.spec.root),
        "evaluation_calls": [{"site": f.site, "module": f.module, "after_step": f.after_step,
                              "grad_mode": f.grad_mode, "training": f.training} for f in run.forwards],
        "scalars": [s.to_dict() for s in run.scalars],
        "logs": [log.to_dict() for log in run.logs],
        "files": [{"path": a.path, "change": a.change, "format": a.format, "size": a.size, "sha256": a.sha256,
                   "error": a.error} for a in run.artifacts],
        "losses": [[_loss_values(loss.tensor) for loss in s.losses] for s in run.steps],
        "step_times": [s.time for s in run.steps],
    }


def _loss_values(encoded: EncodedTensor) -> list[float]:
    return [float(v) for v in decode_elements(encoded.elements, encoded.dtype).real]


def _finite(obj):
    """JSON has no infinities: write them as strings."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _validate(old: Path, new: Path, options: VerifyOptions) -> None:
    for label, path in (("OLD", old), ("NEW", new)):
        if not path.is_file():
            raise UsageError(f"{label} script {path} is not a file")
    for label, folder, script in (("OLD", options.old_root, old), ("NEW", options.new_root, new)):
        if folder is not None and not Path(folder).is_dir():
            raise UsageError(f"--root {folder} is not a folder")
        if folder is not None and Path(folder).resolve() not in script.resolve().parents:
            raise UsageError(f"{label} script {script} is not inside the root {folder}")
    if options.device not in DEVICES:
        raise UsageError(f"--device must be one of {', '.join(DEVICES)}")
    if options.device in ("cuda", "all") and not torch.cuda.is_available():
        raise UsageError(f"--device {options.device} needs CUDA, and torch.cuda.is_available() is False here")
    for name, python in (("--old-python", options.old_python), ("--new-python", options.new_python)):
        if python is not None and not shutil.which(python):
            raise UsageError(f"{name} {python} is not an executable")
    numbers = {"--steps": options.steps, "--timeout": options.timeout, "--rtol": options.rtol,
               "--atol": options.atol, "--memory-tolerance": options.memory_tolerance,
               "--memory-steps": options.memory_steps}
    for name, value in numbers.items():
        if value is not None and value < 0:
            raise UsageError(f"{name} must not be negative")
    if options.mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}")
    if options.plot is not None and importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot needs matplotlib, which is not installed in this environment "
                         "(pip install matplotlib), or leave --plot out: the report has the curves as sparklines")
    if not 0 <= options.curve_fraction <= 1 or options.curve_rtol < 0:
        raise UsageError("--curve-fraction lies between 0 and 1 and --curve-rtol is not negative")
    if options.steps == 0 or options.timeout == 0:
        raise UsageError("--steps and --timeout must be positive")


def _devices(option: str) -> list[str]:
    if option == "auto":
        return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    return ["cpu", "cuda"] if option == "all" else [option]


def _changes(old: Path, new: Path, options: VerifyOptions) -> list[Change]:
    if options.change_map is None:
        return diff_changes(old, new)
    try:
        return load_change_map(options.change_map, Path(options.new_root or new.parent))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--change-map: {exc}") from None


# Failures of legacy code on current PyTorch (and Python), which --compat or an old PyTorch addresses.
_LEGACY_FAILURE = re.compile(r"invalid index of a 0-dim|volatile|async|unexpected keyword|has no attribute|"
                             r"Weights only load failed|expected .*dtype|Byte|view size is not compatible")


def _outside_root(old: RunOutcome, message: str) -> bool:
    """The file a FileNotFoundError names lies outside the tree the run sees."""
    named = re.search(r"'([^']+)'", message)
    if named is None:
        return False
    path = Path(os.path.normpath(old.spec.script.resolve().parent / named.group(1)))
    return old.spec.root.resolve() not in path.parents


def _hint(old: RunOutcome) -> str:
    """What to try when OLD failed, where the failure says it."""
    exc = old.exception
    if exc is not None and exc.type in ("FileNotFoundError", "NotADirectoryError") and _outside_root(old, exc.message):
        return (f" (the run sees a copy of {old.spec.root}; a file outside it is not there: "
                "--root names a folder higher up)")
    if old.spec.compat or old.spec.python != sys.executable:
        return ""
    if exc is not None and (exc.type == "SyntaxError" or _LEGACY_FAILURE.search(exc.message)):
        return " (if OLD needs an old PyTorch: try --compat, or --old-python with one)"
    return ""


def where(check: Check) -> str:
    """Where a check sits, in words: the step, and within it what ``at`` says."""
    if check.kind in ("eval", "artifact") and check.at:
        return check.at if check.kind == "eval" else f"in {check.at}"
    step = "over the whole run" if check.step is None else f"at step {check.step}"
    return f"{step}, {check.at}" if check.at else step


def _decide(pairs: list[PairComparison]) -> tuple[str, int, str]:
    runs = [r for p in pairs for r in (p.old, p.new)]
    for run in runs:
        if run.status == "timeout":
            return "error", EXIT_NO_COMPARISON, f"{run.spec.label} {run.reason}"
    for pair in pairs:
        old = pair.old
        if old.status != "ok":
            return "error", EXIT_NO_COMPARISON, f"OLD {old.reason}{_hint(old)}: no comparison possible"
        if not old.recorded_anything:
            return "error", EXIT_NO_COMPARISON, ("OLD finished without any optimizer step or backward call, "
                                                  "evaluation call, output or written file: nothing to compare")
    for pair in pairs:
        first = pair.first_divergence
        if first is None:
            continue
        if first.kind == "outcome":
            return "different", EXIT_DIFFERENT, f"{pair.label}: {first.note}"
        detail = f"OLD {first.old}, NEW {first.new}" + (f" ({first.note})" if first.note else "")
        return "different", EXIT_DIFFERENT, f"{pair.label}: {first.quantity} differs {where(first)}: {detail}"
    steps = pairs[0].old.complete_steps
    return "equivalent", EXIT_EQUIVALENT, (f"equivalent over {steps} step{'' if steps == 1 else 's'} on "
                                           f"{', '.join(p.label for p in pairs)}")


def verify_scripts(old: Path, new: Path, options: VerifyOptions = VerifyOptions(),
                   progress: Progress = Progress()) -> VerifyResult:
    """Run OLD and NEW and compare them, telling ``progress`` about each run. Raises UsageError for
    options that cannot work."""
    return verify_pipeline([(old, new)], options, progress)[0]


def plan_runs(entries: Sequence[tuple[Path, Path]], options: VerifyOptions) -> dict[tuple[str, str], list[RunSpec]]:
    """The runs to make, per (side, device): each list runs in order in one mirror of its side's
    root (``run_side``). A plain, picklable description: where they run is the caller's choice."""
    common = dict(args=tuple(options.script_args), steps=options.steps, timeout=options.timeout,
                  full=options.full, memory_steps=options.memory_steps, seed=options.seed,
                  evaluation=options.compare.evaluation, metrics=options.compare.metrics,
                  artifacts=options.compare.artifacts, ignore_output=tuple(options.ignore_output), echo=options.echo)
    plan: dict[tuple[str, str], list[RunSpec]] = {}
    for device in _devices(options.device):
        for index, side, folder, python, compat in (
                (0, "old", options.old_root, options.old_python or sys.executable, options.compat),
                (1, "new", options.new_root, options.new_python or sys.executable, False)):
            scripts = [Path(pair[index]) for pair in entries]
            root = Path(folder) if folder else project_root(scripts[0])
            outside = [str(s) for s in scripts if root.resolve() not in s.resolve().parents]
            if outside:
                raise UsageError(f"{side.upper()} entry points of one pipeline share one root; {', '.join(outside)} "
                                 f"not inside {root}: pass --root")
            plan[side, device] = [RunSpec(label=f"{side}-{device}", script=script, root=root, python=python,
                                          device=device, compat=compat, **common) for script in scripts]
    return plan


def project_root(script: Path) -> Path:
    """The git repository holding ``script`` (a ``.git`` folder, or file for a worktree), else its folder."""
    folder = script.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def run_locally(plan: dict[tuple[str, str], list[RunSpec]],
                progress: Progress = Progress()) -> dict[tuple[str, str], list[RunOutcome]]:
    """One run at a time (step times would mean nothing side by side), OLD before NEW on each
    device; a NEW run whose OLD gave nothing to compare with is not made (it could take as long)."""
    def finished(run: RunOutcome) -> None:
        progress.run_finished(run.status, run.complete_steps, run.wall_time)

    outcomes: dict[tuple[str, str], list[RunOutcome]] = {}
    for (side, device), specs in plan.items():
        def announce(spec: RunSpec, specs: list[RunSpec] = specs, first: bool = not outcomes) -> None:
            if first:  # the entry point's first run: say which of how many
                progress.phase(f"verifying {spec.script.name} (entry point {specs.index(spec) + 1} of {len(specs)})")
            progress.run_started(spec.label.split("-")[0].upper(), spec.script.name, spec.device, spec.steps)

        skip = [None if old.comparable else "not run: OLD gave nothing to compare with"
                for old in outcomes["old", device]] if side == "new" else []
        outcomes[side, device] = run_side(specs, skip, on_start=announce, on_step=progress.step, on_end=finished)
    return outcomes


def verify_pipeline(entries: Sequence[tuple[Path, Path]], options: VerifyOptions = VerifyOptions(),
                    progress: Progress = Progress()) -> list[VerifyResult]:
    """Verify each (OLD, NEW) entry point; the entries of a side run in order in one mirror, so
    one may read what an earlier one wrote. One result per entry point."""
    entries = [(Path(old), Path(new)) for old, new in entries]
    for old, new in entries:
        _validate(old, new, options)
    plan = plan_runs(entries, options)
    outcomes = run_locally(plan, progress)
    repeats = repeat_old(plan, outcomes, options, progress)
    results = [judge(old, new, options, {key: runs[i] for key, runs in outcomes.items()},
                     {device: [runs[i] for runs in more] for device, more in repeats.items()})
               for i, (old, new) in enumerate(entries)]
    for i, result in enumerate(results):
        if options.localize:
            localize(result, entries[:i + 1], options, progress)
    for i, result in enumerate(results):
        failed = [old.name for (old, _), earlier in zip(entries[:i], results) if earlier.verdict == "error"]
        if failed and result.verdict == "error":
            result.reason += f" (it runs after {', '.join(failed)}, which could not be compared either)"
    return results


def _run_more(specs: Sequence[RunSpec], progress: Progress) -> list[RunOutcome]:
    """Runs beyond the planned ones (re-runs), told to ``progress`` like those."""
    return run_side(specs, on_start=lambda spec: progress.run_started(spec.label, spec.script.name, spec.device,
                                                                       spec.steps),
                    on_step=progress.step,
                    on_end=lambda run: progress.run_finished(run.status, run.complete_steps, run.wall_time))


def repeats_wanted(options: VerifyOptions, device: str, old: Sequence[RunOutcome], new: Sequence[RunOutcome]) -> int:
    """``--repeat``, or by default 2 where runs can differ by themselves (CUDA) or OLD and NEW are
    not bitwise alike (noise or a change: another run of OLD tells which), else 1."""
    if options.repeat is not None:
        return options.repeat
    if options.mode == "curve":  # such runs are never bitwise alike: the curve tolerance judges them
        return 1
    if device == "cuda":
        return 2
    return 1 if all(not differences(o, n, options.compare) for o, n in zip(old, new) if n.status != "skipped") else 2


def repeat_old(plan: Mapping[tuple[str, str], list[RunSpec]], outcomes: Mapping[tuple[str, str], list[RunOutcome]],
               options: VerifyOptions, progress: Progress = Progress()) -> dict[str, list[list[RunOutcome]]]:
    """OLD's further runs per device (each a whole pipeline), where OLD gave something to compare."""
    more: dict[str, list[list[RunOutcome]]] = {}
    for (side, device), specs in plan.items():
        old, new = outcomes["old", device], outcomes["new", device]
        if side != "old" or not all(run.comparable for run in old):
            continue
        wanted = repeats_wanted(options, device, old, new)
        if wanted > 1:
            progress.phase(f"running OLD {wanted - 1} more time(s) on {device}: does it agree with itself?")
        more[device] = [_run_more([replace(spec, label=f"old-{device}#{k}", echo=False) for spec in specs], progress)
                        for k in range(2, wanted + 1)]
    return more


def localize(result: VerifyResult, pipeline: Sequence[tuple[Path, Path]], options: VerifyOptions,
             progress: Progress = Progress()) -> None:
    """Re-run OLD and NEW up to the step of the first divergence with module hooks and set
    ``result.localization`` (the last entry of ``pipeline`` is the result's; those before it run
    first, plainly, as they wrote what it reads). A cross-device divergence (OLD on the CPU, NEW on CUDA)
    re-runs each side on its own device and compares layers with the cross-device tolerances: the report
    names the first layer whose GPU numerics leave them."""
    pair, first = result.divergence_pair, result.first_divergence
    if first is None or first.kind not in LOCALIZED_KINDS or first.step is None or options.mode == "curve":
        return
    if any(not noise.deterministic for noise in result.noise):
        result.localization = Localization(pair.label, first.step, "unavailable", message=(
            f"step {first.step}: not localised: OLD is not deterministic, so module outputs differ between any two runs"))
        return
    progress.phase(f"localizing the divergence at step {first.step}: re-running OLD and NEW with module hooks")
    plan = plan_runs(pipeline, replace(options, echo=False))
    reruns = {}
    for side in ("old", "new"):
        device = getattr(pair, side).spec.device
        *before, last = plan[side, device]
        steps = first.step if first.step <= getattr(pair, side).complete_steps else last.steps
        watched = replace(last, label=f"{side}-{device}-layers", steps=steps, layers=first.step, evaluation=False,
                          metrics=False, artifacts=False, memory_steps=0)
        reruns[side] = _run_more([*before, watched], progress)[-1]
    result.localization = locate(pair.label, first, reruns["old"], reruns["new"], Tolerance(options.rtol, options.atol,
                                 cross_device=pair.cross_device), _changes(result.old, result.new, options))


def judge(old: Path, new: Path, options: VerifyOptions, runs: Mapping[tuple[str, str], RunOutcome],
          repeats: Mapping[str, Sequence[RunOutcome]] = {}) -> VerifyResult:
    """Compare one entry point's runs ((side, device) -> outcome; ``repeats``: device -> OLD's further
    runs), decide, attribute: no running here."""
    tol = Tolerance(options.rtol, options.atol)
    devices = _devices(options.device)
    curve = (options.curve_rtol, options.curve_fraction) if options.mode == "curve" else None
    pairs = [compare_runs(device, runs["old", device], runs["new", device], tol, options.memory_tolerance,
                          options.compare, curve) for device in devices]
    if options.device == "all":
        cross = Tolerance(options.rtol, options.atol, cross_device=True)
        pairs.append(compare_runs("cpu→cuda", runs["old", "cpu"], runs["new", "cuda"], cross,
                                  comparisons=options.compare, curve=curve))
    noises = [measure_noise(pair.label, [pair.old, *repeats[pair.label]], options.compare) for pair in pairs
              if repeats.get(pair.label) and not pair.cross_device]
    for noise in noises:
        if not noise.deterministic and curve is None:
            apply_noise(noise, next(p for p in pairs if p.label == noise.pair))
    verdict, code, reason = _decide(pairs)
    if verdict == "equivalent" and curve is None and any(not n.deterministic for n in noises):
        reason += ", within OLD's own run-to-run noise (OLD is not deterministic)"
    result = VerifyResult(old, new, options, verdict, code, reason, pairs, noise=noises,
                          repeats=[run for more in repeats.values() for run in more])
    if verdict == "different":
        result.culprits = rank(_changes(old, new, options), result.first_divergence, result.divergence_pair.new)
    return result
