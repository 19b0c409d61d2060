"""Tell run-to-run noise from a real change: how much OLD disagrees with itself, and NEW judged against that.

With ``--repeat N`` OLD runs N times. Its runs are compared with each other at
tolerance 0 (as TorchBench and ``torch._dynamo`` first run eager twice): when
they agree bitwise OLD is deterministic and nothing changes. When they do not,
each quantity that varied gets a spread, the largest |Δ| between OLD's first
run and any other over all steps (one step's spread of a scalar loss is too
noisy a sample to bound with), and NEW is judged by the dynamo-style relative
rule ``|NEW - OLD| <= k * spread`` with ``k = NOISE_FACTOR`` (3: with two runs
the spread is one sample of the noise, and the distance of a third sample to
the first is often twice it). Quantities OLD reproduced keep the per-dtype
tolerances; printed text, metrics and files that OLD itself varied in are
shown, not judged (their numbers are the losses and values judged above).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from migrate.words import plural

from .comparer import Check, Comparisons, PairComparison, Tolerance, compare_runs
from .runner import RunOutcome

NOISE_FACTOR = 3.0
EXACT = Tolerance(rtol=0.0, atol=0.0)
TENSOR_KINDS = ("loss", "grad", "value", "eval")
JUDGED_KINDS = TENSOR_KINDS + ("outcome", "metric", "stdout", "stderr", "artifact")  # memory and time vary anyway


@dataclass
class Noise:
    """OLD's agreement with itself on one device (``pair``): ``spread`` per quantity that varied."""

    pair: str
    repeats: int
    deterministic: bool
    spread: dict[str, float] = field(default_factory=dict)
    causes: list[str] = field(default_factory=list)
    factor: float = NOISE_FACTOR
    message: str = ""


def differences(old: RunOutcome, other: RunOutcome, comparisons: Comparisons = Comparisons()) -> list[Check]:
    """The checks in which two runs are not bitwise alike (memory and time left out)."""
    pair = compare_runs("repeat", old, other, EXACT, comparisons=comparisons)
    return [c for q in pair.quantities for c in q.checks if c.ok is False and c.kind in JUDGED_KINDS]


def _causes(runs: Sequence[RunOutcome]) -> list[str]:
    """What the runs show that makes them differ (``child.determinism``'s hints, nondeterministic-op warnings)."""
    causes = []
    seeds = [[h.detail for h in run.hints if h.source == "seed"] for run in runs]
    other = next((s for s in seeds[1:] if s != seeds[0]), seeds[0])
    changing = [f"{a} in one run, {b} in another" for a, b in zip(seeds[0], other) if a != b]
    if changing:
        causes.append(f"the script seeds from a value that changes between runs: {changing[0]}")
    for run in runs[:1]:
        causes += [h.detail for h in run.hints if h.source != "seed" or "without a seed" in h.detail]
        warned = {w.text.strip().splitlines()[0].split(": ", 1)[-1][:160] for w in run.warnings
                  if "deterministic" in w.text}
        causes += [f"a nondeterministic op: {text}" for text in sorted(warned)[:3]]
    return causes


def measure(pair: str, runs: Sequence[RunOutcome], comparisons: Comparisons = Comparisons()) -> Noise:
    """How OLD's runs (``runs[0]`` the one NEW is compared with) disagree."""
    spread: dict[str, float] = {}
    for other in runs[1:]:
        for check in differences(runs[0], other, comparisons):
            spread[check.quantity] = max(spread.get(check.quantity, 0.0), check.max_abs)
    noise = Noise(pair, len(runs), not spread, spread)
    if spread:
        noise.causes = _causes(runs)
        shown = "loss" if "loss" in spread else max(spread, key=spread.get)
        cause = "; ".join(noise.causes) or ("not visible (randomness the harness does not see: the clock, "
                                            "OS entropy, thread timing)")
        noise.message = (f"OLD is not deterministic: {shown} varies by up to {spread[shown]:.2g} between "
                         f"{plural(len(runs), 'identical run')} ({plural(len(spread), 'quantity', 'quantities')} "
                         f"vary); cause: {cause}. NEW is judged against {NOISE_FACTOR:g} × OLD's own spread there")
    return noise


def apply(noise: Noise, pair: PairComparison) -> None:
    """Re-judge NEW's failing checks on the quantities OLD varied in."""
    for quantity in pair.quantities:
        spread = noise.spread.get(quantity.name)
        if spread is None:
            continue
        bound = noise.factor * spread
        for check in quantity.checks:
            if check.ok is not False:
                continue
            if quantity.kind not in TENSOR_KINDS:
                check.ok = None
                check.note = "; ".join(x for x in (check.note, "OLD itself varies here: shown, not judged") if x)
            elif check.max_abs > 0:  # a structural difference (None, shape) has no size to bound
                check.ok = check.max_abs <= bound
                verdict = "within" if check.ok else "beyond"
                check.note = f"{verdict} {noise.factor:g} × OLD's own spread {spread:.2g} (bound {bound:.2g})"
