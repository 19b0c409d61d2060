"""Present a VerifyResult: a rich table for people, Markdown for the ``migrate``
command's summary, JSON with everything, JUnit XML with one test case per
compared quantity (so CI shows which gradient broke). Each comparison (steps,
evaluation, stdout, stderr, metrics, files, memory) has its own line in every form."""
from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .attribution import user_frames
from .comparer import Check, PairComparison, Quantity
from .curve import loss_curve, sparkline
from .verify import VerifyResult, where

MAX_PASSING_ROWS = 30  # a big model has thousands of tensors; failing rows are always all shown
_VERDICT_TEXT = {"equivalent": "EQUIVALENT", "different": "NOT EQUIVALENT", "error": "NO COMPARISON POSSIBLE"}
_VERDICT_STYLE = {"equivalent": "bold green", "different": "bold red", "error": "bold yellow"}


def _ok_text(ok: bool | None) -> str:
    return {True: "ok", False: "DIFFERS", None: "info"}[ok]


def _where(check: Check) -> str:
    if check.at:
        return check.at if check.step is None or check.kind == "eval" else f"step {check.step}, {check.at}"
    return "whole run" if check.step is None else f"step {check.step}"


def comparison_line(result: VerifyResult) -> str:
    """One line naming each comparison's verdict, for a summary table row (``migrate``'s card)."""
    pair = result.divergence_pair or (result.pairs[0] if result.pairs else None)
    if pair is None or not pair.quantities:
        return "-"
    mark = {True: "ok", False: "DIFFERS", None: "-"}
    return ", ".join(f"{name} {mark[ok]}" for name, ok, detail in pair.summary() if not detail.startswith("off"))


def _stream_blocks(result: VerifyResult) -> list[str]:
    """The first differing line of each printed stream, with its number and both texts."""
    lines = []
    for pair in result.pairs:
        for q in pair.quantities:
            bad = q.first_bad
            if q.kind in ("stdout", "stderr") and bad is not None:
                step = "" if bad.step is None else f" (step {bad.step})"
                lines += [f"{pair.label} {q.name}, {bad.at}{step}: {bad.note}", f"  OLD: {_plain(bad.old)}", f"  NEW: {_plain(bad.new)}"]
    return lines


def _rows(pair: PairComparison) -> tuple[list[Quantity], int]:
    """Quantities to show: every failing one, then passing ones up to the limit."""
    failing = [q for q in pair.quantities if q.ok is False]
    others = [q for q in pair.quantities if q.ok is not False]
    shown = failing + others[:MAX_PASSING_ROWS]
    return sorted(shown, key=pair.quantities.index), len(others) - len(others[:MAX_PASSING_ROWS])


def _culprit_lines(result: VerifyResult) -> list[str]:
    lines = []
    for culprit in result.culprits:
        change = culprit.change
        span = f"{change.line}" if change.end_line == change.line else f"{change.line}-{change.end_line}"
        text = (change.text.strip().splitlines() or [change.summary])[0].strip()
        rule = f"[{change.code}] {change.summary}: " if change.code else ""
        why = "; ".join(culprit.reasons) or "no specific evidence"
        lines.append(f"{Path(change.file).name}:{span} {rule}`{text}` ({why})")
    return lines


def _plain(text: str) -> str:
    """``text`` as a terminal would show it, without the script's colour and cursor codes."""
    return Text.from_ansi(text).plain


def _short(text: str, limit: int = 160) -> str:
    text = _plain(text)
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _curves(result: VerifyResult) -> list[tuple[str, list[float], list[float]]]:
    """(pair, OLD's loss curve, NEW's) for each pair where both ran."""
    return [(p.label, loss_curve(p.old), loss_curve(p.new)) for p in result.pairs if p.quantities]


def _curve_lines(result: VerifyResult) -> list[str]:
    """Both loss curves as sparklines on one scale, with their first and last values."""
    lines = []
    for label, old, new in _curves(result):
        finite = [v for v in old + new if math.isfinite(v)]
        if not finite:
            continue
        low, high = min(finite), max(finite)
        for side, curve in (("OLD", old), ("NEW", new)):
            ends = f"{curve[0]:.4g} → {curve[-1]:.4g} over {len(curve)} steps" if curve else "no steps"
            lines.append(f"{label} {side} {sparkline(curve, low, high)}  {ends}")
    return lines


def write_plot(result: VerifyResult, path: Path) -> None:
    """Both loss curves of each pair as a PNG (matplotlib, checked for by ``verify``)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(8, 4.5))
    for label, old, new in _curves(result):
        axes.plot(range(1, len(old) + 1), old, label=f"OLD ({label})")
        axes.plot(range(1, len(new) + 1), new, label=f"NEW ({label})", linestyle="--")
    axes.set_xlabel("step")
    axes.set_ylabel("loss")
    axes.set_title(f"{result.old.name} vs {result.new.name}")
    axes.legend()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def _noise_lines(result: VerifyResult) -> list[str]:
    """OLD against itself, where it ran more than once."""
    return [f"{n.pair}: {n.message}" if not n.deterministic else
            f"{n.pair}: OLD agrees with itself bitwise over {n.repeats} identical runs" for n in result.noise]


def _divergence_lines(result: VerifyResult) -> list[str]:
    first = result.first_divergence
    if first is None:
        return []
    lines = [f"{result.divergence_pair.label}: {first.quantity} {where(first)}",
             f"OLD {first.old or '-'}  NEW {first.new or '-'}"]
    if first.kind in ("loss", "grad", "value"):
        lines.append(f"max abs error {first.max_abs:.3g}, max rel error {first.max_rel:.3g}")
    if first.note:
        lines.append(_short(first.note, 400))
    found = result.localization
    if found is not None:
        lines.append(f"{found.pair} {found.message}" + (f" (modules matched by {found.matched_by})"
                                                          if found.matched_by != "name" else ""))
        lines += [f"  changed inside it: {line}" for line in found.lines]
    frames = user_frames(result.divergence_pair.new) if first.kind == "outcome" else []
    if frames:
        path, line = frames[0]
        source = path.read_text(errors="replace").splitlines()[line - 1:line] if path.is_file() else []
        lines.append(f"NEW failed at {path.name}:{line}" + (f": {source[0].strip()}" if source else ""))
    return lines


def _differences(q: Quantity) -> tuple[str, str]:
    """Max abs and rel difference, in the quantity's unit."""
    if q.kind == "time":
        return f"{q.max_abs * 1e3:.3g} ms", f"{q.max_rel:.1%}"
    if q.kind == "memory":
        return f"{q.max_abs / 2**20:.3g} MiB", f"{q.max_rel:.1%}"
    return f"{q.max_abs:.3g}", f"{q.max_rel:.3g}"


def _table(title: str, columns: tuple[str, ...]) -> Table:
    """Long cells (parameter names, values) wrap onto more lines rather than being cut, also when piped."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _steps_source(result: VerifyResult) -> str:
    steps = result.options.steps
    return f"--steps {steps}" if steps else "no --steps: each script ran to its end"


def render(result: VerifyResult, console: Console | None = None) -> None:
    """The report, on stdout unless ``console`` says otherwise."""
    console = console or Console(highlight=False, soft_wrap=True)  # lines whole; tables fit the width
    runs = _table("Runs", ("run", "status", "steps", "wall", "peak memory", "detail"))
    for run in result.runs:
        peak = run.memory.peak_bytes if run.memory else None
        runs.add_row(run.spec.label, run.status, str(run.complete_steps), f"{run.wall_time:.1f} s",
                     "-" if peak is None else f"{peak / 2**20:.2f} MiB", _short(run.reason))
    console.print(runs)
    for pair in (p for p in result.pairs if p.quantities):
        summary = _table(f"Comparisons ({pair.label})", ("comparison", "verdict", "detail"))
        for name, ok, detail in pair.summary():
            summary.add_row(name, _ok_text(ok) if ok is not None else "-", detail,
                            style={False: "red", None: "dim"}.get(ok, ""))
        console.print(summary)
    for pair in (p for p in result.pairs if p.quantities):
        table = _table(f"OLD vs NEW ({pair.label})", ("quantity", "steps", "OLD", "NEW", "max abs", "max rel", "verdict"))
        rows, hidden = _rows(pair)
        for q in rows:
            shown = q.shown
            style = {False: "red", None: "dim"}.get(q.ok, "")
            steps = "run" if shown.step is None else _where(shown) if q.ok is False else str(len(q.checks))
            table.add_row(q.name, steps, shown.old, shown.new, *_differences(q), _ok_text(q.ok), style=style)
        if hidden:
            table.add_row(f"... {hidden} more equivalent quantities (see --json)", "", "", "", "", "", "", style="dim")
        console.print(table)
    for run in result.runs:
        if run.status in ("failed", "crashed") and run.stderr_tail.strip():
            console.print(f"[bold]{run.spec.label} stderr (end):[/bold]")
            console.print("\n".join(_plain(run.stderr_tail).rstrip().splitlines()[-8:]), markup=False, highlight=False)
    divergence = _divergence_lines(result)
    sections = [("Printed output", _stream_blocks(result)),
                ("Loss curves", _curve_lines(result) if result.options.mode == "curve" else []),
                ("Run-to-run noise", _noise_lines(result)), ("First divergence", divergence),
                ("Most likely responsible changes in NEW", _culprit_lines(result) if divergence else [])]
    for title, lines in sections:
        if lines:
            console.print(f"[bold]{title}[/bold]")
            for line in lines:
                console.print(f"  {line}", markup=False, highlight=False)
    verdict = Text(_VERDICT_TEXT[result.verdict], style=_VERDICT_STYLE[result.verdict])
    source = f" ({_steps_source(result)})" if result.verdict == "equivalent" else ""
    console.print(verdict + f" (exit {result.exit_code}): {_short(result.reason, 300)}{source}", highlight=False)


def to_markdown(result: VerifyResult) -> str:
    lines = [f"**{_VERDICT_TEXT[result.verdict]}** (exit {result.exit_code}): {_short(result.reason, 300)}", "",
             "| run | status | steps | detail |", "|---|---|---|---|"]
    lines += [f"| {r.spec.label} | {r.status} | {r.complete_steps} | {_short(r.reason)} |" for r in result.runs]
    for pair in (p for p in result.pairs if p.quantities):
        lines += ["", f"Comparisons ({pair.label}):", "", "| comparison | verdict | detail |", "|---|---|---|"]
        lines += [f"| {name} | {_ok_text(ok) if ok is not None else '-'} | {detail} |"
                  for name, ok, detail in pair.summary()]
        rows, hidden = _rows(pair)
        lines += ["", f"OLD vs NEW ({pair.label}):", "",
                  "| quantity | OLD | NEW | max abs | max rel | verdict |", "|---|---|---|---|---|---|"]
        lines += [f"| {_cell(q.name)} | {_cell(q.shown.old)} | {_cell(q.shown.new)} | {' | '.join(_differences(q))} | "
                  f"{_ok_text(q.ok)} |" for q in rows]
        if hidden:
            lines.append(f"| ... {hidden} more equivalent | | | | | |")
    streams = _stream_blocks(result)
    if streams:
        lines += ["", "Printed output:", "", "```"] + streams + ["```"]
    if result.options.mode == "curve":
        lines += ["", "Loss curves:", "", "```"] + _curve_lines(result) + ["```"]
    noise = _noise_lines(result)
    if noise:
        lines += ["", "Run-to-run noise:", ""] + [f"- {line}" for line in noise]
    divergence = _divergence_lines(result)
    if divergence:
        lines += ["", "First divergence:", ""] + [f"- {line}" for line in divergence]
    culprits = _culprit_lines(result)
    if culprits:
        lines += ["", "Most likely responsible changes in NEW:", ""] + [f"- {line}" for line in culprits]
    return "\n".join(lines) + "\n"


def _cell(value: str) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return value.replace("|", "\\|").replace("\n", " ")


def write_json(result: VerifyResult, path: Path) -> None:
    Path(path).write_text(json.dumps(result.to_json(), indent=2, default=str))


def write_junit(result: VerifyResult, path: Path) -> None:
    suite = ET.Element("testsuite", name="torch-migrate verify")
    cases = failures = errors = 0
    if result.verdict == "error":
        case = ET.SubElement(suite, "testcase", classname="verify", name="comparison possible")
        ET.SubElement(case, "error", message=_plain(result.reason))
        cases, errors = 1, 1
    for pair in result.pairs:
        for switch in pair.comparisons.off():
            case = ET.SubElement(suite, "testcase", classname=f"verify.{pair.label}", name=switch)
            ET.SubElement(case, "skipped", message=f"--no-compare-{switch}")
            cases += 1
        for q in pair.quantities:
            case = ET.SubElement(suite, "testcase", classname=f"verify.{pair.label}.{q.kind}", name=q.name)
            cases += 1
            bad = q.first_bad
            if bad is not None:
                failures += 1
                ET.SubElement(case, "failure", message=_plain(f"{_where(bad)}: OLD {bad.old}, NEW {bad.new}. {bad.note}".strip()))
            elif q.ok is None:
                ET.SubElement(case, "system-out").text = f"OLD {q.shown.old}, NEW {q.shown.new} {q.shown.note}"
    for noise in result.noise:  # not the migration's fault, so not a failure: said where CI shows it
        case = ET.SubElement(suite, "testcase", classname=f"verify.{noise.pair}.noise", name="OLD deterministic")
        ET.SubElement(case, "system-out").text = noise.message or f"bitwise equal over {noise.repeats} runs"
        cases += 1
    found = result.localization
    if found is not None:
        case = ET.SubElement(suite, "testcase", classname=f"verify.{found.pair}.localization",
                             name=found.module or found.param or found.where)
        ET.SubElement(case, "failure", message=_plain("; ".join([found.message, *found.lines])))
        cases, failures = cases + 1, failures + 1
    suite.set("skipped", str(sum(len(p.comparisons.off()) for p in result.pairs)))
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
