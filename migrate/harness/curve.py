"""``--mode curve``: judge runs that can never be bitwise alike (Hogwild, RL with environment
randomness, long GPU runs) by their loss curves, final parameters and final metrics.

- The loss curve (each step's loss, averaged over the step's backward calls) passes when at
  most ``fraction`` of the steps both runs made have ``|NEW - OLD| > rtol * |OLD|``. Defaults:
  rtol 0.05 as Megatron's regression tests, which allow about 1 % of sampled steps to fail; over
  the tens of steps a verify run makes, 1 % allows none, so 5 % (one step in twenty: a single
  unlucky batch) is the default.
- Each parameter's final value passes when its relative L2 distance ``|NEW - OLD| / |OLD|`` is
  within rtol (elementwise, noise in a few small weights would fail a bound that is not).
- Each TensorBoard scalar's last value passes within rtol.
Everything else (evaluation outputs, printed text, files) is shown, not judged: step by step it
differs by design.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from .comparer import Check, _fmt, decode_elements
from .defaults import CURVE_FRACTION, CURVE_RTOL
from .records import EncodedTensor
from .runner import RunOutcome

SPARK = "▁▂▃▄▅▆▇█"


def loss_curve(run: RunOutcome) -> list[float]:
    """Each complete step's loss: the mean over its backward calls (and the elements of each root)."""
    curve = []
    for step in run.steps:
        if step.complete and step.losses:
            values = [float(decode_elements(loss.tensor.elements, loss.tensor.dtype).real.mean())
                      for loss in step.losses]
            curve.append(sum(values) / len(values))
    return curve


def _relative(a: float, b: float) -> float:
    return 0.0 if a == b else abs(b - a) / abs(a) if a else math.inf


def _curve_check(old: list[float], new: list[float], rtol: float, fraction: float) -> Check:
    n = min(len(old), len(new))
    if n == 0:
        return Check(None, "loss curve", "loss", None, note="no steps to compare")
    failing = [k for k in range(n) if not _relative(old[k], new[k]) <= rtol]
    ok = len(failing) <= fraction * n
    diffs = [abs(new[k] - old[k]) for k in range(n)]
    return Check(None if ok else failing[0] + 1, "loss curve", "loss", ok, max_abs=max(diffs),
                 max_rel=max(_relative(old[k], new[k]) for k in range(n)),
                 old=f"{_fmt(old[0])} → {_fmt(old[n - 1])}", new=f"{_fmt(new[0])} → {_fmt(new[n - 1])}",
                 note=f"{len(failing)} of {n} steps beyond rtol {rtol:g} (at most {fraction:.0%} may be)")


def _final_value(name: str, old: EncodedTensor | None, new: EncodedTensor | None, rtol: float) -> Check:
    quantity = f"final value {name}"
    if old is None or new is None or old.shape != new.shape:
        return Check(None, quantity, "value", old is None and new is None, param=name,
                     note="missing or reshaped in one run")
    a, b = decode_elements(old.elements, old.dtype), decode_elements(new.elements, new.dtype)
    distance, norm = float((b - a).norm()), float(a.norm())
    rel = distance / norm if norm else (math.inf if distance else 0.0)
    return Check(None, quantity, "value", rel <= rtol, param=name, max_abs=float((b - a).abs().max()) if a.numel() else 0.0,
                 max_rel=rel, old=f"norm {_fmt(norm)}", new=f"norm {_fmt(float(b.norm()))}",
                 note=f"relative L2 distance {rel:.2g}, rtol {rtol:g}")


def _final_scalars(old: RunOutcome, new: RunOutcome, rtol: float) -> list[Check]:
    last_o, last_n = ({s.tag: s.value for s in run.scalars} for run in (old, new))
    checks = []
    for tag in sorted(set(last_o) & set(last_n)):
        a, b = last_o[tag], last_n[tag]
        rel = math.inf if a is None or b is None else _relative(a, b)
        checks.append(Check(None, f"final tensorboard: {tag}", "metric", rel <= rtol, max_rel=rel,
                            max_abs=math.inf if rel == math.inf else abs(b - a), old=str(a), new=str(b),
                            note=f"last value, rtol {rtol:g}"))
    return checks


def compare_curve(old: RunOutcome, new: RunOutcome, rtol: float = CURVE_RTOL,
                  fraction: float = CURVE_FRACTION) -> list[Check]:
    checks = [_curve_check(loss_curve(old), loss_curve(new), rtol, fraction)]
    last = min(old.complete_steps, new.complete_steps)
    so = next((s for s in old.steps if s.step == last and s.complete), None)
    sn = next((s for s in new.steps if s.step == last and s.complete), None)
    if so is not None and sn is not None and so.values and sn.values:
        checks += [_final_value(name, so.values.get(name), sn.values.get(name), rtol)
                   for name in list(so.values) + [k for k in sn.values if k not in so.values]]
    return checks + _final_scalars(old, new, rtol)


def sparkline(values: Sequence[float], low: float, high: float, width: int = 60) -> str:
    """``values`` as block characters on the scale low..high, averaged into at most ``width`` columns."""
    if not values:
        return ""
    columns = min(width, len(values))
    buckets = [values[len(values) * i // columns:max(len(values) * (i + 1) // columns, len(values) * i // columns + 1)]
               for i in range(columns)]
    span = (high - low) or 1.0
    means = [sum(b) / len(b) for b in buckets]
    return "".join(SPARK[min(len(SPARK) - 1, int((m - low) / span * len(SPARK)))] if math.isfinite(m) else "·"
                   for m in means)
