"""Name the module where two runs part ways: pure, from the records of the localisation re-runs.

``verify`` re-runs both scripts up to the step k of the first divergence with
``RunSpec.layers = k``: every module call of step k (inputs, outputs, own
parameters and buffers) and every parameter gradient, in the order backward
computed them. Calls are paired by qualified name and occurrence; when the two
runs do not name the same modules (a renamed attribute or variable), by call
order.

Walking the calls in completion order (a layer returns before the block
holding it), the first call whose output differs is the answer:
- its inputs and weights equal: the module itself computes something else
  (``output``); with the changes of NEW, the changed lines inside its class's
  ``forward`` are named;
- its inputs differ: code between module calls computed them (``input``: the
  forward of the module it ran inside, or the script);
- its weights differ (``weights``): they were initialised or loaded differently.
When every module output agrees, a gradient divergence is placed at the first
parameter, in backward order, whose gradient differs (``gradient``); otherwise
the difference lies outside module calls (``outside``) or in the update
(``update``: forward and gradients agree, values do not).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .attribution import Change, _same_file
from .comparer import Check, Tolerance, compare_tensors
from .records import Layer, Output, ParamGrad
from .runner import RunOutcome

KINDS = ("loss", "grad", "value", "eval")  # divergences a re-run with module hooks can place


@dataclass
class Localization:
    """Where in the model the first divergence arises (``where``: see the module docstring, or
    ``unavailable`` when the re-runs could not tell)."""

    pair: str
    step: int
    where: str
    module: str | None = None
    module_class: str = ""
    param: str | None = None
    max_abs: float = 0.0
    matched_by: str = "name"
    calls: int = 0
    message: str = ""
    lines: list[str] = field(default_factory=list)  # changed lines of NEW inside the module's forward


def _keyed(layers: Sequence[Layer]) -> list[tuple[tuple[str, int], Layer]]:
    seen: dict[str, int] = {}
    keyed = []
    for layer in layers:
        seen[layer.name] = seen.get(layer.name, 0) + 1
        keyed.append(((layer.name, seen[layer.name]), layer))
    return keyed


def _pairs(old: list[tuple[tuple[str, int], Layer]], new: list[tuple[tuple[str, int], Layer]]
           ) -> tuple[list[tuple[Layer, Layer]], str]:
    """(OLD, NEW) calls paired by name and occurrence when both runs made the same, else by call order."""
    if {k for k, _ in old} == {k for k, _ in new}:
        by_key = dict(new)
        return [(o, by_key[k]) for k, o in old], "name"
    return [(o, n) for (_, o), (_, n) in zip(old, new)], "call order"


def _worst(old: Sequence[Output], new: Sequence[Output], tol: Tolerance) -> Check:
    """The worst of the paired tensors (a different structure differs)."""
    if [x.path for x in old] != [x.path for x in new]:
        return Check(None, "", "eval", False, note="another structure")
    worst = Check(None, "", "eval", True)
    for a, b in zip(old, new):
        check = compare_tensors(a.tensor, b.tensor, tol)
        if (worst.ok and not check.ok) or (worst.ok == check.ok and check.max_abs > worst.max_abs):
            worst = check
    return worst


def _state(layers: Sequence[Layer]) -> dict[str, dict]:
    """Each module's state as recorded at its first call of the step."""
    return {layer.name: layer.state for layer in layers if layer.state is not None}


def _state_check(old: dict | None, new: dict | None, tol: Tolerance) -> Check:
    old, new = old or {}, new or {}
    if sorted(old) != sorted(new):
        return Check(None, "", "value", False, note=f"OLD has {sorted(old)}, NEW {sorted(new)}")
    return _worst([Output(k, old[k]) for k in sorted(old)], [Output(k, new[k]) for k in sorted(new)], tol)


def _changed_lines(source: str, run: RunOutcome, changes: Sequence[Change]) -> list[str]:
    """The changes of NEW inside ``source`` (``file:first-last`` in the run's tree)."""
    if not source:
        return []
    file, _, span = source.rpartition(":")
    first, last = (int(x) for x in span.split("-"))
    path = run.spec.root.resolve() / file
    found = []
    for change in changes:
        if _same_file(change.file, path) and change.line <= last and change.end_line >= first:
            text = (change.text.strip().splitlines() or [change.summary])[0].strip()
            span_text = str(change.line) if change.end_line == change.line else f"{change.line}-{change.end_line}"
            found.append(f"{path.name}:{span_text} `{text}`" + (f" [{change.code}]" if change.code else ""))
    return found


def _module_text(layer: Layer) -> str:
    return f"{layer.name} ({layer.module})"


def _forward(pair: str, step: int, old: RunOutcome, new: RunOutcome, tol: Tolerance,
             changes: Sequence[Change]) -> Localization | None:
    pairs, matched = _pairs(_keyed(old.layers), _keyed(new.layers))
    states_old, states_new = _state(old.layers), _state(new.layers)
    for o, n in pairs:
        out = _worst(o.outputs, n.outputs, tol)
        if out.ok:
            continue
        base = dict(pair=pair, step=step, module=o.name, module_class=o.module, max_abs=out.max_abs,
                    matched_by=matched, calls=len(pairs))
        renamed = f" (NEW: {n.name})" if n.name != o.name else ""
        inputs = _worst(o.inputs, n.inputs, tol)
        if not inputs.ok:
            base["max_abs"] = inputs.max_abs
            inside = f"in the forward of {o.parent}" if o.parent else "in the script, before the call"
            lines = _changed_lines(_source_of(new.layers, n.parent), new, changes)
            return Localization(**base, where="input", lines=lines, message=(
                f"step {step}: first difference at the input of {_module_text(o)}{renamed}, max |Δ| "
                f"{inputs.max_abs:.2g}: computed outside module calls, {inside}"))
        weights = _state_check(states_old.get(o.name), states_new.get(n.name), tol)
        if not weights.ok:
            base["max_abs"] = weights.max_abs
            return Localization(**base, where="weights", message=(
                f"step {step}: first difference at {_module_text(o)}{renamed}: its parameters or buffers "
                f"differ before the call (max |Δ| {weights.max_abs:.2g}{'; ' + weights.note if weights.note else ''}): "
                f"initialised, loaded or updated differently"))
        return Localization(**base, where="output", lines=_changed_lines(n.source, new, changes), message=(
            f"step {step}: first difference at {_module_text(o)}{renamed} output, max |Δ| {out.max_abs:.2g}; "
            f"inputs and weights equal"))
    return None


def _source_of(layers: Sequence[Layer], name: str) -> str:
    return next((layer.source for layer in layers if layer.name == name), "")


def _backward(pair: str, step: int, old: RunOutcome, new: RunOutcome, tol: Tolerance) -> Localization | None:
    """The first parameter, in backward order, whose gradient differs or reaches one run only."""
    def keyed(grads: Sequence[ParamGrad]) -> dict[tuple[str, int], tuple[int, ParamGrad]]:
        seen: dict[str, int] = {}
        found = {}
        for position, grad in enumerate(grads):
            seen[grad.name] = seen.get(grad.name, 0) + 1
            found[grad.name, seen[grad.name]] = (position, grad)
        return found

    ko, kn = keyed(old.param_grads), keyed(new.param_grads)
    order = sorted(set(ko) | set(kn), key=lambda k: ((ko.get(k) or kn.get(k))[0], k))
    for key in order:
        o, n = ko.get(key), kn.get(key)
        name = key[0]
        base = dict(pair=pair, step=step, where="gradient", param=name, module=name.rpartition(".")[0],
                    calls=len(old.layers))
        if o is None or n is None:
            only = "NEW" if o is None else "OLD"
            return Localization(**base, message=(
                f"step {step}: module outputs agree; first gradient difference in backward order at {name}: "
                f"backward reaches it in {only} only (a detach or requires_grad moved?)"))
        check = compare_tensors(o[1].tensor, n[1].tensor, tol)
        if not check.ok:
            return Localization(**base, max_abs=check.max_abs, message=(
                f"step {step}: module outputs agree; first gradient difference in backward order at {name}, "
                f"max |Δ| {check.max_abs:.2g}"))
    return None


def locate(pair: str, divergence: Check, old: RunOutcome, new: RunOutcome, tol: Tolerance,
           changes: Sequence[Change] = ()) -> Localization:
    """Where the divergence ``divergence`` (at step k) arises, from re-runs of OLD and NEW with layers = k."""
    step = divergence.step
    if not old.layers and not new.layers:
        why = f"OLD {old.reason}; NEW {new.reason}" if "ok" not in (old.status, new.status) else \
            "no module call was made during that step"
        return Localization(pair, step, "unavailable", message=f"step {step}: no module to point at ({why})")
    found = _forward(pair, step, old, new, tol, changes)
    if found is None and divergence.kind in ("grad", "value"):
        found = _backward(pair, step, old, new, tol)
    if found is not None:
        return found
    calls = len(old.layers)
    if divergence.kind == "value":
        return Localization(pair, step, "update", calls=calls, message=(
            f"step {step}: the {calls} module calls and all gradients agree: the parameter update differs "
            f"(optimizer settings or a hand-written update)"))
    return Localization(pair, step, "outside", calls=calls, message=(
        f"step {step}: all {calls} module calls agree: the difference arises outside modules "
        f"(the script's code between the model and its {divergence.quantity})"))

