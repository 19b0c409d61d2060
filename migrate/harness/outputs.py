"""Comparisons beyond the training steps: evaluation forward passes, printed output,
logged metrics and the files a run wrote. Each returns Checks for ``comparer``.

Where a check sits (``Check.step``): an evaluation call or a printed line made after
step k-1 finished belongs to step k, as everything else the recorder sees; files
belong to the whole run.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migrate.words import plural

from . import text
from .comparer import Check, Tolerance, compare_tensors
from .records import Artifact, Entry, Forward, Scalar
from .runner import RunOutcome

IMAGE_TOLERANCE = Tolerance(rtol=0.0, atol=1.0)  # one level of 255: a value within tolerance may round either way
SHOWN = 160  # characters of a line shown in a check


def _window(after_step: int) -> str:
    return "before step 1" if after_step == 0 else f"after step {after_step}"


def _float_tolerance(tol: Tolerance) -> tuple[float, float]:
    """Printed and logged numbers come from float32 tensors as a rule."""
    return tol.for_dtype("float32")


# ---------------------------------------------------------------- evaluation
TRAINING = "backward"  # the grad mode of a call a backward reached (recorded without outputs)


def _sites(forwards: Sequence[Forward]) -> list[tuple[str, list[Forward]]]:
    """Calls grouped by call site, sites in order of their first call, calls in call order."""
    grouped: dict[str, list[Forward]] = {}
    for forward in sorted(forwards, key=lambda f: f.call):
        grouped.setdefault(forward.site, []).append(forward)
    return list(grouped.items())


def _trained_only(site: tuple[str, list[Forward]] | None) -> bool:
    """A site (or none) where every call was a training call: nothing evaluated there."""
    return site is None or all(call.grad_mode == TRAINING for call in site[1])


def _compare_call(o: Forward, n: Forward, tol: Tolerance) -> Check:
    if [x.path for x in o.outputs] != [x.path for x in n.outputs]:
        return Check(None, "", "eval", False, old=plural(len(o.outputs), "tensor"), new=plural(len(n.outputs), "tensor"),
                     note="the output has another structure")
    worst = None
    for a, b in zip(o.outputs, n.outputs):
        check = compare_tensors(a.tensor, b.tensor, tol)
        check.param = a.path
        if worst is None or (worst.ok and not check.ok) or (worst.ok == check.ok and check.max_abs > worst.max_abs):
            worst = check
    return worst


def compare_evaluation(old: RunOutcome, new: RunOutcome, tol: Tolerance) -> list[Check]:
    """Sites are paired in order of their first call (a migration moves lines), calls at a
    site in order; one check per site and window between steps."""
    checks = []
    old_sites, new_sites = _sites(old.forwards), _sites(new.forwards)
    for i in range(max(len(old_sites), len(new_sites))):
        if _trained_only(old_sites[i] if i < len(old_sites) else None) and \
                _trained_only(new_sites[i] if i < len(new_sites) else None):
            continue  # training calls (sites stay paired in order of their first call)
        if i >= len(old_sites) or i >= len(new_sites):
            site, calls = (new_sites if i >= len(old_sites) else old_sites)[i]
            side = "NEW" if i >= len(old_sites) else "OLD"
            calls = [call for call in calls if call.grad_mode != TRAINING]
            first = calls[0]
            checks.append(Check(first.after_step + 1, f"eval {first.module} at {site}", "eval", False,
                                old="-" if side == "NEW" else plural(len(calls), "call"),
                                new="-" if side == "OLD" else plural(len(calls), "call"),
                                at=_window(first.after_step), note=f"evaluation calls only in {side}"))
            continue
        (site_o, calls_o), (site_n, calls_n) = old_sites[i], new_sites[i]
        name = f"eval {calls_n[0].module} at {site_n}" + (f" (OLD {site_o})" if site_o != site_n else "")
        windows: dict[int, list[tuple[Forward | None, Forward | None]]] = {}
        for k in range(max(len(calls_o), len(calls_n))):
            o = calls_o[k] if k < len(calls_o) else None
            n = calls_n[k] if k < len(calls_n) else None
            windows.setdefault((o or n).after_step, []).append((o, n))
        for after_step, calls in sorted(windows.items()):
            if all(o and n and o.grad_mode == n.grad_mode == TRAINING for o, n in calls):
                continue
            check = _compare_window(calls, tol)
            check.step, check.quantity, check.kind = after_step + 1, name, "eval"
            check.at = f"{_window(after_step)}, {plural(len(calls), 'call')}" + (f", {check.at}" if check.at else "")
            checks.append(check)
    return checks


def _compare_window(calls: list[tuple[Forward | None, Forward | None]], tol: Tolerance) -> Check:
    """The calls at one site between two steps: the first that differs, else the summary."""
    summary = Check(None, "", "eval", True)
    trained = []  # calls one run back-propagated through and the other evaluated
    for k, (o, n) in enumerate(calls, 1):
        if o is None or n is None:
            return Check(None, "", "eval", False, old="-" if o is None else "called", new="-" if n is None else "called",
                         at=f"call {k}", note=f"{'OLD' if o is None else 'NEW'} made fewer evaluation calls here")
        if TRAINING in (o.grad_mode, n.grad_mode):
            if o.grad_mode != n.grad_mode:
                trained.append(f"{'NEW' if n.grad_mode == TRAINING else 'OLD'} back-propagated through call {k}")
            continue
        check = _compare_call(o, n, tol)
        modes = "" if (o.grad_mode, o.training) == (n.grad_mode, n.training) else \
            f"OLD ran it {_mode(o)}, NEW {_mode(n)}"
        if not check.ok:
            check.at = f"call {k}" + (f", output{check.param}" if check.param else "")
            check.note = "; ".join(x for x in (check.note, modes) if x)
            return check
        summary = Check(None, "", "eval", True, max_abs=max(summary.max_abs, check.max_abs),
                        max_rel=max(summary.max_rel, check.max_rel), old=check.old, new=check.new,
                        note=modes or summary.note)
    if trained:  # not a verdict of its own: what that changes shows in the gradients, memory and errors
        summary.ok = None if summary.ok else summary.ok
        more = f" and {len(trained) - 1} more" if len(trained) > 1 else ""
        summary.note = "; ".join(x for x in (summary.note, f"{trained[0]}{more}, which the other run evaluated") if x)
    return summary


def _mode(forward: Forward) -> str:
    return f"{forward.grad_mode}, {'train' if forward.training else 'eval'}()"


# ---------------------------------------------------------------- printed output
def _step_of_line(run: RunOutcome, stream: str, line: int) -> int | None:
    """The step a printed line belongs to: the first whose end came after it was written."""
    marks = run.step_lines.get(stream, [])
    for k, mark in enumerate(marks, 1):
        if mark is not None and mark >= line:
            return k
    return len(marks) + 1 if marks and line else None


def _context(run: RunOutcome) -> text.Context:
    return text.Context.of(str(run.spec.root.resolve()), str(run.spec.script.resolve()))


def normalised(run: RunOutcome, stream: str) -> tuple[list[text.Line], int]:
    """The stream's lines, normalised; stderr without the warnings the run showed (and how many)."""
    output = getattr(run, stream)
    if stream != "stderr":
        return text.normalise(output, _context(run))[0], 0
    shown = 0
    for warning in run.warnings:
        block = warning.text.replace(run.run_dir, str(run.spec.root)) if run.run_dir else warning.text
        if block in output:
            output, shown = output.replace(block, "", 1), shown + 1
    lines, dropped = text.normalise(output, _context(run), drop_warnings=True)
    return lines, shown + dropped


def _short(line: text.Line | None) -> str:
    if line is None:
        return "(no line)"
    shown = line.shown.strip()
    return shown if len(shown) <= SHOWN else shown[:SHOWN - 1] + "…"


def compare_stream(old: RunOutcome, new: RunOutcome, stream: str, tol: Tolerance) -> Check:
    rtol, atol = _float_tolerance(tol)
    (lines_o, warned_o), (lines_n, warned_n) = normalised(old, stream), normalised(new, stream)
    found = text.compare_streams(lines_o, lines_n, rtol, atol)
    warned = f"; warnings left out: OLD {warned_o}, NEW {warned_n}" if warned_o or warned_n else ""
    truncated = "; compared the first 16 MiB" if old.output_truncated or new.output_truncated else ""
    if found is None:
        return Check(None, stream, stream, True, old=f"{len(lines_o)} lines", new=f"{len(lines_n)} lines",
                     note=(warned + truncated).lstrip("; "))
    where = found.new or found.old
    number = where.number if where else 0
    side_run = new if found.new else old
    return Check(_step_of_line(side_run, stream, number), stream, stream, False, max_abs=found.difference.max_abs,
                 max_rel=found.difference.max_rel, old=_short(found.old), new=_short(found.new),
                 at=f"line {found.old.number if found.old else '-'}"
                    + (f" (NEW line {found.new.number})" if found.new and found.old and
                       found.new.number != found.old.number else ""),
                 note=f"{found.difference.what}; {plural(found.differing, 'line')} differ{warned}{truncated}")


# ---------------------------------------------------------------- metrics
@dataclass(frozen=True)
class _Point:
    """One value of a metric series: ``where`` is a line number (print, logging) or a step count (TensorBoard)."""

    value: text.Value
    label: str
    origin: str  # the line's text or the add_scalar call, for the note
    where: int


def _series_checks(source: str, old: dict[object, list[_Point]], new: dict[object, list[_Point]],
                   step_of: Callable[[int], int | None], tol: Tolerance, unpaired: bool) -> list[Check]:
    """Series present in both runs, value by value. A series in one run only is reported when
    ``unpaired`` (print lines that changed are the stdout comparison's)."""
    rtol, atol = _float_tolerance(tol)
    checks, names = [], {}
    for key in list(old) + [k for k in new if k not in old]:
        seq_o, seq_n = old.get(key, []), new.get(key, [])
        first = (seq_o or seq_n)[0]
        names[first.label] = names.get(first.label, 0) + 1
        name = f"{source}: {first.label}" + (f" #{names[first.label]}" if names[first.label] > 1 else "")
        if not (seq_o and seq_n):
            if unpaired:
                checks.append(Check(step_of(first.where) if seq_o else None, name, "metric", False,
                                    old=f"{len(seq_o)} values", new=f"{len(seq_n)} values",
                                    note=f"logged by {'OLD' if seq_o else 'NEW'} only; {first.origin}"))
            continue
        check = Check(None, name, "metric", True, old=f"{len(seq_o)} values", new=f"{len(seq_n)} values",
                      note=first.origin)
        for k, (a, b) in enumerate(zip(seq_o, seq_n), 1):
            difference = text.compare_values(a.value, b.value, rtol, atol)
            if difference is not None:
                check = Check(step_of(a.where), name, "metric", False, max_abs=difference.max_abs,
                              max_rel=difference.max_rel, old=a.value.shown(), new=b.value.shown(),
                              at=f"value {k} of {len(seq_o)}", note=f"{difference.what}; {first.origin}")
                break
        else:
            if len(seq_o) != len(seq_n):
                check = Check(step_of(seq_o[min(len(seq_o), len(seq_n)) - 1].where), name, "metric", False,
                              old=f"{len(seq_o)} values", new=f"{len(seq_n)} values",
                              note=f"logged a different number of times; {first.origin}")
        checks.append(check)
    return checks


def _labelled(lines: list[text.Line]) -> dict[object, list[_Point]]:
    """Series keyed by line skeleton and position of the value in it."""
    found = {}
    for key, occurrences in text.series(lines).items():
        line = occurrences[0][0]
        found[key] = [_Point(value, line.labels[key[1]], f"in `{line.skeleton.strip()[:80]}`", entry.number)
                      for entry, value in occurrences]
    return found


def _scalar_series(scalars: Sequence[Scalar]) -> dict[object, list[_Point]]:
    found: dict[object, list[_Point]] = {}
    for scalar in scalars:
        value = text.Value("nan" if scalar.value is None else repr(float(scalar.value)), "float", "")
        found.setdefault(scalar.tag, []).append(
            _Point(value, scalar.tag, f"add_scalar, global_step {scalar.global_step}", scalar.after_step))
    return found


def compare_metrics(old: RunOutcome, new: RunOutcome, tol: Tolerance) -> list[Check]:
    """Numbers the script prints (stdout), logs (``logging``) and writes to TensorBoard, as series."""
    checks = _series_checks("print", _labelled(normalised(old, "stdout")[0]), _labelled(normalised(new, "stdout")[0]),
                            lambda line: _step_of_line(old, "stdout", line), tol, unpaired=False)
    logged = [_labelled([text.parse(k, log.message, text.mask(log.message, _context(run)))
                         for k, log in enumerate(run.logs, 1)]) for run in (old, new)]
    checks += _series_checks("logging", *logged, lambda k: old.logs[k - 1].after_step + 1, tol, unpaired=True)
    checks += _series_checks("tensorboard", _scalar_series(old.scalars), _scalar_series(new.scalars),
                             lambda after_step: after_step + 1, tol, unpaired=True)
    return checks


# ---------------------------------------------------------------- files
def _compare_entry(a: Entry, b: Entry, tol: Tolerance, image: bool) -> Check:
    if a.type != b.type:
        shown = lambda e: f"{e.type} {e.value}" if e.tensor is None else f"{e.type} {e.tensor.dtype}{e.tensor.shape}"
        return Check(None, "", "artifact", False, old=shown(a), new=shown(b), note="type changed")
    if a.tensor is not None or b.tensor is not None:
        return compare_tensors(a.tensor, b.tensor, IMAGE_TOLERANCE if image else tol)
    if a.value == b.value:
        return Check(None, "", "artifact", True, old=str(a.value)[:SHOWN], new=str(b.value)[:SHOWN])
    if isinstance(a.value, float) and isinstance(b.value, float):
        rtol, atol = _float_tolerance(tol)
        diff = abs(a.value - b.value)
        ok = diff <= atol + rtol * abs(a.value) or (math.isnan(a.value) and math.isnan(b.value))
        return Check(None, "", "artifact", ok, max_abs=diff, max_rel=diff / abs(a.value) if a.value else math.inf,
                     old=repr(a.value), new=repr(b.value))
    if isinstance(a.value, str) and isinstance(b.value, str):  # reprs: addresses and paths may differ
        context = text.Context()
        same = text.mask(a.value, context) == text.mask(b.value, context)
        return Check(None, "", "artifact", same, old=a.value[:SHOWN], new=b.value[:SHOWN])
    return Check(None, "", "artifact", False, old=repr(a.value)[:SHOWN], new=repr(b.value)[:SHOWN])


def _file_checks(name: str, o: Artifact, n: Artifact, old: RunOutcome, new: RunOutcome, tol: Tolerance) -> list[Check]:
    def check(ok, old_text="", new_text="", note="", at="") -> Check:
        return Check(None, name, "artifact", ok, old=old_text, new=new_text, note=note, at=at)

    if o.format != n.format:
        return [check(False, o.format, n.format, note="written in another format")]
    if o.error or n.error or o.format == "binary":
        same = o.sha256 == n.sha256
        return [check(same, f"{o.size} bytes", f"{n.size} bytes",
                      note="same bytes" if same else "bytes differ" + (f" (not readable: {o.error or n.error})"
                                                                        if o.error or n.error else ""))]
    if o.format == "text":
        return [_text_file_check(name, o, n, old, new, tol)]
    if o.format == "missing":
        return [check(True, "deleted", "deleted")]
    old_entries, new_entries = {e.key: e for e in o.entries}, {e.key: e for e in n.entries}
    checks = []
    for key in old_entries:
        if key not in new_entries:
            checks.append(check(False, old_entries[key].type, "missing", note="key only in OLD", at=key or "(file)"))
            continue
        result = _compare_entry(old_entries[key], new_entries[key], tol, o.format == "image")
        result.quantity, result.kind, result.param, result.at = name, "artifact", key, key or "(file)"
        checks.append(result)
    checks += [check(False, "missing", new_entries[key].type, note="key only in NEW", at=key)
               for key in new_entries if key not in old_entries]
    return checks or [check(True, "empty", "empty")]


def _text_file_check(name: str, o: Artifact, n: Artifact, old: RunOutcome, new: RunOutcome, tol: Tolerance) -> Check:
    if o.lines is None or n.lines is None:
        same = o.sha256 == n.sha256
        return Check(None, name, "artifact", same, old=f"{o.size} bytes", new=f"{n.size} bytes",
                     note="too long to compare by line: " + ("same bytes" if same else "bytes differ"))
    rtol, atol = _float_tolerance(tol)
    found = text.compare_streams(text.normalise("\n".join(text.mask_table(o.lines)), _context(old))[0],
                                 text.normalise("\n".join(text.mask_table(n.lines)), _context(new))[0], rtol, atol)
    if found is None:
        return Check(None, name, "artifact", True, old=f"{len(o.lines)} lines", new=f"{len(n.lines)} lines")
    return Check(None, name, "artifact", False, max_abs=found.difference.max_abs, max_rel=found.difference.max_rel,
                 old=_short(found.old), new=_short(found.new),
                 at=f"line {(found.old or found.new).number}",
                 note=f"{found.difference.what}; {plural(found.differing, 'line')} differ")


def compare_artifacts(old: RunOutcome, new: RunOutcome, tol: Tolerance) -> list[Check]:
    """Files by path: written by one run only, or with other content."""
    by_path_o, by_path_n = {a.path: a for a in old.artifacts}, {a.path: a for a in new.artifacts}
    checks = []
    for path in sorted(set(by_path_o) | set(by_path_n)):
        o, n = by_path_o.get(path), by_path_n.get(path)
        name = f"file {path}"
        if o is None or n is None:
            written = o or n
            checks.append(Check(None, name, "artifact", False, old="-" if o is None else f"{o.change} {o.format}",
                                new="-" if n is None else f"{n.change} {n.format}",
                                note=f"{'NEW' if o is None else 'OLD'} {'deleted' if written.change == 'deleted' else 'wrote'}"
                                     f" it, {'OLD' if o is None else 'NEW'} did not"))
            continue
        checks += _file_checks(name, o, n, old, new, tol)
    return checks
