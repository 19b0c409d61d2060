"""Compare two runs' records step by step and find the first divergence.

Tolerances follow ``torch.testing.assert_close``: element ``new`` matches
``old`` when ``|new - old| <= atol + rtol * |old|`` (NaN matches NaN), with
per-dtype defaults (rtol, atol):

    float16 (1e-3, 1e-5)   bfloat16 (1.6e-2, 1e-5)   float32 (1.3e-6, 1e-5)
    float64 (1e-7, 1e-7)   integers and bool: exact

Across devices (``--device all``: OLD on CPU vs NEW on CUDA) kernels differ,
so the defaults are looser: float16 (1e-2, 1e-3), bfloat16 (5e-2, 1e-3),
float32 (1e-3, 1e-4), float64 (1e-5, 1e-6). ``--rtol``/``--atol`` replace
either for every dtype.

Tensors recorded as fingerprints (above ``FULL_LIMIT`` elements, without
``--full``) compare their sampled elements with the same rule and their sums
with the bound it implies: ``|Δsum|, |ΔL1| <= n*atol + rtol*L1``,
``|ΔL2| <= sqrt(n)*atol + rtol*L2``, min/max like elements.

Peak memory fails when NEW exceeds OLD by more than ``memory_tolerance``
(relative; using less is fine). Wall time is shown, never judged: it is too
noisy on shared machines.

Beyond the steps (``outputs``, each switched by ``Comparisons``): evaluation
forward passes, stdout and stderr, logged metrics, and the files each run wrote.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import torch

from migrate.words import plural

from .records import EncodedTensor, Step
from .runner import RunOutcome

DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}
CROSS_DEVICE_TOLERANCES = {
    "float16": (1e-2, 1e-3), "bfloat16": (5e-2, 1e-3), "float32": (1e-3, 1e-4), "float64": (1e-5, 1e-6),
    "complex64": (1e-3, 1e-4), "complex128": (1e-5, 1e-6),
}
DEFAULT_MEMORY_TOLERANCE = 0.10
# Where a check sits inside a step, so that "first" follows the order things happen in: an evaluation
# call in step k's window ran before step k's loss; what the step printed or logged comes after it.
# Within a step: what the step computed, then how it ended (a crash explains the values it never logged), then
# what it logged and printed.
_ORDER = {"eval": 0, "loss": 1, "grad": 2, "value": 3, "outcome": 4, "metric": 5, "stdout": 6, "stderr": 7,
          "artifact": 8, "memory": 9, "time": 10}
KIND_NAMES = {"loss": "losses", "grad": "gradients", "value": "parameter values", "eval": "evaluation",
              "stdout": "stdout", "stderr": "stderr", "metric": "metrics", "artifact": "files written",
              "outcome": "outcome", "memory": "peak memory", "time": "time per step"}


@dataclass(frozen=True)
class Tolerance:
    rtol: float | None = None
    atol: float | None = None
    cross_device: bool = False

    def for_dtype(self, dtype: str) -> tuple[float, float]:
        table = CROSS_DEVICE_TOLERANCES if self.cross_device else DEFAULT_TOLERANCES
        rtol, atol = table.get(dtype, (0.0, 0.0))
        return (rtol if self.rtol is None else self.rtol, atol if self.atol is None else self.atol)


@dataclass
class Check:
    """One comparison at one step (``step`` None: the whole run)."""

    step: int | None
    quantity: str
    kind: str  # a key of _ORDER
    ok: bool | None  # None: shown for information only
    param: str | None = None
    max_abs: float = 0.0
    max_rel: float = 0.0
    old: str = ""
    new: str = ""
    note: str = ""
    at: str = ""  # where within the step or run, when the step does not say it all ("line 12", "after step 3")

    @property
    def position(self) -> tuple[float, int]:
        return (math.inf if self.step is None else self.step, _ORDER[self.kind])


@dataclass
class Quantity:
    """All checks of one quantity (``loss``, ``grad model.fc.weight``, ...) across steps."""

    name: str
    kind: str
    param: str | None
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool | None:
        judged = [c.ok for c in self.checks if c.ok is not None]
        return all(judged) if judged else None

    @property
    def first_bad(self) -> Check | None:
        return next((c for c in self.checks if c.ok is False), None)

    @property
    def shown(self) -> Check:
        """The check a one-line summary shows: the first failing one, else the last."""
        return self.first_bad or self.checks[-1]

    @property
    def max_abs(self) -> float:
        return max(c.max_abs for c in self.checks)

    @property
    def max_rel(self) -> float:
        return max(c.max_rel for c in self.checks)


@dataclass(frozen=True)
class Comparisons:
    """What is compared besides the training steps, outcome and memory (each can be switched off)."""

    evaluation: bool = True
    stdout: bool = True
    stderr: bool = True
    metrics: bool = True
    artifacts: bool = True

    def off(self) -> list[str]:
        return [name for name, on in vars(self).items() if not on]


# Comparison -> the Check kinds it produces.
COMPARISON_KINDS = {"evaluation": "eval", "stdout": "stdout", "stderr": "stderr", "metrics": "metric",
                    "artifacts": "artifact"}


@dataclass
class PairComparison:
    label: str
    old: RunOutcome
    new: RunOutcome
    cross_device: bool
    quantities: list[Quantity]
    comparisons: Comparisons = Comparisons()

    def summary(self) -> list[tuple[str, bool | None, str]]:
        """(comparison, verdict, detail) per kind of check, in the order they are made:
        verdict None for a comparison switched off or with nothing recorded."""
        rows = []
        for kind in _ORDER:
            quantities = [q for q in self.quantities if q.kind == kind]
            switch = next((name for name, k in COMPARISON_KINDS.items() if k == kind), None)
            if switch and not getattr(self.comparisons, switch):
                rows.append((KIND_NAMES[kind], None, f"off (--no-compare-{switch})"))
            elif quantities:
                bad = [q for q in quantities if q.ok is False]
                checks = sum(len(q.checks) for q in quantities)
                detail = f"{len(bad)} of {len(quantities)} differ" if bad else f"{len(quantities)} compared"
                rows.append((KIND_NAMES[kind], False if bad else (None if all(q.ok is None for q in quantities)
                                                                 else True), f"{detail}, {plural(checks, 'check')}"))
            elif switch:
                rows.append((KIND_NAMES[kind], None, "nothing recorded"))
        return rows

    @property
    def first_divergence(self) -> Check | None:
        bad = [c for q in self.quantities for c in q.checks if c.ok is False]
        return min(bad, key=lambda c: c.position) if bad else None


# ---------------------------------------------------------------- tensors
def decode_elements(values, dtype: str) -> torch.Tensor:
    if isinstance(values, (bytes, bytearray)):
        flat = torch.frombuffer(bytearray(values), dtype=getattr(torch, dtype)) if values else torch.zeros(0)
    else:
        flat = torch.tensor(values)
    return flat.to(torch.complex128 if flat.is_complex() else torch.float64)


def _unravel(index: int, shape: list[int]) -> list[int]:
    coords = []
    for size in reversed(shape):
        coords.append(index % size if size else 0)
        index = index // size if size else 0
    return coords[::-1]


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def compare_tensors(old: EncodedTensor | None, new: EncodedTensor | None, tol: Tolerance) -> Check:
    """Returns a Check with only the comparison filled in (the caller names it)."""
    if old is None or new is None:
        if old is None and new is None:
            return Check(None, "", "grad", True, old="None", new="None")
        return Check(None, "", "grad", False, old=_summary(old), new=_summary(new),
                     note="None in OLD" if old is None else "None in NEW")
    if old.shape != new.shape or old.dtype != new.dtype:
        return Check(None, "", "grad", False, old=_summary(old), new=_summary(new), note="shape or dtype differs")
    rtol, atol = tol.for_dtype(old.dtype)
    sampled = old.is_fingerprint
    a = decode_elements(old.elements, old.dtype)
    b = decode_elements(new.elements, new.dtype)
    same = (a == b) | (a.isnan() & b.isnan())
    zero = torch.zeros((), dtype=torch.float64)
    diff = torch.where(same, zero, (b - a).abs().nan_to_num(math.inf))  # NaN against a number: infinitely off
    close = diff <= atol + rtol * a.abs()
    bad = ~same & (~close | a.isinf() | b.isinf() | a.isnan() | b.isnan())  # NaN and inf only match themselves
    rel = torch.where(same, zero, (diff / a.abs()).nan_to_num(math.inf))
    check = Check(None, "", "grad", not bool(bad.any()))
    if a.numel():
        worst = int(torch.where(bad, diff, -1.0).argmax()) if bad.any() else int(diff.argmax())
        check.max_abs, check.max_rel = float(diff.max()), float(rel.max())
        if a.numel() == 1:
            check.old, check.new = _fmt(a[0].item()), _fmt(b[0].item())
        elif check.ok:  # nothing to point at: the size of the tensor says enough
            check.old, check.new = (f"norm {_fmt(_norm(enc, x))}" for enc, x in ((old, a), (new, b)))
        else:  # the worst element, where a sign flip or a wrong entry shows
            where = _unravel(old.sample_index[worst] if sampled else worst, old.shape)
            check.old, check.new = f"{_fmt(a[worst].item())} at {where}", f"{_fmt(b[worst].item())} at {where}"
    if sampled:
        _check_stats(check, old, new, rtol, atol)
    return check


def _check_stats(check: Check, old: EncodedTensor, new: EncodedTensor, rtol: float, atol: float) -> None:
    """The sample can miss a change elsewhere; the sums cannot."""
    so, sn = old.stats, new.stats
    if not so:
        return
    n = old.numel
    bounds = {"sum": n * atol + rtol * so["l1"], "l1": n * atol + rtol * so["l1"],
              "l2": math.sqrt(n) * atol + rtol * so["l2"],
              "min": atol + rtol * abs(so["min"]), "max": atol + rtol * abs(so["max"])}
    for stat, bound in bounds.items():
        delta = abs(sn[stat] - so[stat])
        if not delta <= bound and not (so[stat] == sn[stat]):
            check.ok = False
            check.note = f"{stat} differs: {_fmt(so[stat])} vs {_fmt(sn[stat])}"
            check.max_abs = max(check.max_abs, delta / n if stat in ("sum", "l1") else delta)
            return


def _norm(enc: EncodedTensor, elements: torch.Tensor) -> float:
    return enc.stats["l2"] if enc.is_fingerprint and enc.stats else float(elements.norm())


def _summary(enc: EncodedTensor | None) -> str:
    return "None" if enc is None else f"{enc.dtype}{list(enc.shape)}"


# ---------------------------------------------------------------- steps
class _Collector:
    def __init__(self) -> None:
        self.quantities: dict[str, Quantity] = {}

    def add(self, check: Check) -> None:
        quantity = self.quantities.setdefault(check.quantity, Quantity(check.quantity, check.kind, check.param))
        quantity.checks.append(check)

    def tensor(self, step: int, kind: str, param: str, old, new, tol: Tolerance, quantity: str | None = None):
        check = compare_tensors(old, new, tol)
        check.step, check.kind, check.param = step, kind, param
        check.quantity = quantity or f"{kind} {param}"
        self.add(check)


def _loss_name(index: int) -> str:
    return "loss" if index == 0 else f"loss #{index + 1}"


def _aligned_params(o: Step, n: Step) -> tuple[list[tuple[str, str, str]], list[str], list[str]]:
    """(display, old key, new key) for parameters in both steps, then names only in OLD / NEW.
    Same names: match by name. A renamed variable changes every name, so then
    match by optimizer slot (``opt0.group0.param3``)."""
    old_names, new_names = list(o.grads), list(n.grads)
    if set(old_names) == set(new_names):
        return [(name, name, name) for name in old_names], [], []
    new_by_slot = {slot: name for name, slot in n.slots.items()}
    pairs, only_old = [], []
    for name in old_names:
        other = new_by_slot.pop(o.slots.get(name), None)
        if other is None:
            only_old.append(name)
        else:
            pairs.append((name if name == other else f"{name} → {other}", name, other))
    return pairs, only_old, sorted(new_by_slot.values())


def _compare_step(c: _Collector, k: int, o: Step, n: Step, tol: Tolerance) -> None:
    for i, (lo, ln) in enumerate(zip(o.losses, n.losses)):
        c.tensor(k, "loss", None, lo.tensor, ln.tensor, tol, quantity=_loss_name(i))
    if not (o.complete and n.complete):
        return
    if len(o.losses) != len(n.losses):
        c.add(Check(k, "backward calls per step", "loss", False, old=str(len(o.losses)),
                    new=str(len(n.losses)), note="a different number of backward()/grad() calls"))
    pairs, only_old, only_new = _aligned_params(o, n)
    for display, ko, kn in pairs:
        c.tensor(k, "grad", display, o.grads[ko], n.grads[kn], tol)
    for display, ko, kn in pairs:
        c.tensor(k, "value", display, o.values.get(ko), n.values.get(kn), tol)
    for name in only_old:
        c.add(Check(k, f"grad {name}", "grad", False, param=name, old="present", new="missing",
                    note="parameter stepped in OLD but not in NEW"))
    for name in only_new:
        c.add(Check(k, f"grad {name}", "grad", False, param=name, old="missing", new="present",
                    note="parameter stepped in NEW but not in OLD"))


def _outcome_check(old: RunOutcome, new: RunOutcome) -> Check:
    """How each run ended, placed at the step where they part ways."""
    n_old, n_new = old.complete_steps, new.complete_steps
    if new.status != "ok" and old.status == "ok":
        return Check(new.failed_step, "outcome", "outcome", False, old="ok", new=new.status, note=f"NEW {new.reason}")
    if old.status != "ok":
        same = (new.status == old.status and new.failed_step == old.failed_step
                and _exception_type(new) == _exception_type(old))
        return Check(old.failed_step, "outcome", "outcome", same, old=old.status, new=new.status,
                     note=f"OLD {old.reason}; NEW {new.reason}")
    if n_old != n_new:
        return Check(min(n_old, n_new) + 1, "outcome", "outcome", False, old=f"{n_old} steps", new=f"{n_new} steps",
                     note=f"OLD made {n_old} steps, NEW {n_new}")
    return Check(None, "outcome", "outcome", True, old=f"{n_old} steps", new=f"{n_new} steps", note=new.reason)


def _exception_type(run: RunOutcome) -> str | None:
    return run.exception.type if run.exception else None


def _memory_check(old: RunOutcome, new: RunOutcome, tolerance: float) -> Check | None:
    mo, mn = old.memory, new.memory
    if mo is None or mn is None or mo.peak_bytes is None or mn.peak_bytes is None:
        return None
    po, pn = mo.peak_bytes, mn.peak_bytes
    growth = (pn - po) / po if po else (math.inf if pn else 0.0)
    window = f"over {plural(mo.steps, 'step')}" if mo.steps == mn.steps else f"over {mo.steps} vs {plural(mn.steps, 'step')}"
    return Check(None, "peak memory", "memory", growth <= tolerance, max_abs=float(abs(pn - po)),
                 max_rel=abs(growth), old=_bytes(po), new=_bytes(pn),
                 note=f"{growth:+.1%}, tolerance +{tolerance:.0%}; {mo.method} {window}")


def _typical_step_time(run: RunOutcome) -> tuple[float, str] | None:
    """Median step time, leaving out step 1 (it includes start-up) and the steps the
    memory profiler slowed down, when steps remain."""
    times = [s.time for s in run.steps if s.complete]
    profiled = run.memory.steps if run.memory and run.memory.method.startswith("torch.profiler") else 0
    first = max(1, profiled)
    if len(times) > first:
        return statistics.median(times[first:]), f"steps {first + 1}-{len(times)}"
    return (statistics.median(times), "all steps, start-up and profiling included") if times else None


def _time_check(old: RunOutcome, new: RunOutcome) -> Check | None:
    to, tn = _typical_step_time(old), _typical_step_time(new)
    if to is None or tn is None:
        return None
    return Check(None, "time per step (median)", "time", None, old=f"{to[0] * 1e3:.1f} ms", new=f"{tn[0] * 1e3:.1f} ms",
                 max_abs=abs(tn[0] - to[0]), max_rel=abs(tn[0] - to[0]) / to[0] if to[0] else 0.0,
                 note=f"NEW/OLD {tn[0] / to[0]:.2f}x over {tn[1]}" if to[0] else "")


def _bytes(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def _shown(check: Check) -> Check:
    """A check shown but not judged (curve mode: step by step, such runs differ by design)."""
    if check.ok is False:
        check.ok, check.note = None, "; ".join(x for x in (check.note, "not judged in curve mode") if x)
    return check


def compare_runs(label: str, old: RunOutcome, new: RunOutcome, tol: Tolerance,
                 memory_tolerance: float = DEFAULT_MEMORY_TOLERANCE,
                 comparisons: Comparisons = Comparisons(), curve: tuple[float, float] | None = None) -> PairComparison:
    """``curve``: (rtol, allowed fraction of failing steps) to judge by the loss curve (``curve``)."""
    from . import outputs  # it builds on this module's checks and tensors
    from .curve import compare_curve

    c = _Collector()
    if new.status == "skipped":
        return PairComparison(label, old, new, tol.cross_device, [], comparisons)
    shown = _shown if curve else (lambda check: check)
    old_steps = {s.step: s for s in old.steps}
    new_steps = {s.step: s for s in new.steps}
    if curve:
        for check in compare_curve(old, new, *curve):
            c.add(check)
    else:
        for k in sorted(set(old_steps) & set(new_steps)):
            _compare_step(c, k, old_steps[k], new_steps[k], tol)
    # A run that died evaluated, logged, printed and wrote less: the outcome says it. What both did before
    # the end counts (steps up to the last one both completed); the streams and files are whole-run.
    same_end = old.status == new.status == "ok"
    last = min(old.complete_steps, new.complete_steps)
    for wanted, compare in ((comparisons.evaluation, outputs.compare_evaluation),
                            (comparisons.metrics, outputs.compare_metrics)):
        for check in compare(old, new, tol) if wanted else ():
            if same_end or (check.step is not None and check.step <= last):
                c.add(shown(check))
    c.add(_outcome_check(old, new))
    for stream in ("stdout", "stderr"):
        if getattr(comparisons, stream) and same_end:
            c.add(shown(outputs.compare_stream(old, new, stream, tol)))
    if comparisons.artifacts and same_end:
        for check in outputs.compare_artifacts(old, new, tol):
            c.add(shown(check))
    if not tol.cross_device:  # memory and time are different quantities on different devices
        for check in (_memory_check(old, new, memory_tolerance), _time_check(old, new)):
            if check is not None:
                c.add(check)
    return PairComparison(label, old, new, tol.cross_device, list(c.quantities.values()), comparisons)
