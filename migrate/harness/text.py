"""Printed text compared the way a person reads it: what is expected to differ between
two runs of the same program is masked, numbers are compared with the run's tolerance.

Normalising a line (``normalise``):

- carriage returns: only what a terminal shows is kept, the text after the last
  ``\\r`` (progress bars redraw their line many times, a different number of times
  in each run); ANSI escape codes are dropped;
- the run's own tree (``<root>``) and the script (``<script>``), temporary paths
  (``<tmp>``), object addresses (``0x…``);
- times: dates, clock times, durations (``0.53s``, ``12 ms``), rates (``30.1it/s``,
  ``512 samples/s``), numbers labelled as times (``time 0.53``, ``ms/batch 45.6``,
  ``eta``, ``elapsed``), progress-bar clocks (``00:01<00:02``); process ids;
- in stderr, Python warnings (``file:line: XWarning: ...`` and their source line):
  a migration is expected to remove deprecation warnings.

Comparing two lines (``compare_lines``): the text around the values must be equal;
each value then matches when it is the same kind (int, float, bool) and the same
type (a plain number, or inside ``tensor(...)`` / ``np.float64(...)``), and for
floats when ``|new - old| <= atol + rtol * |old|`` plus one unit of the last
printed digit (two values within tolerance may round to neighbours). Integers
and booleans must be equal. ``tensor(0.5000)`` against ``0.5`` is a type change.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from migrate.words import plural

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)")
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
TEMP_PATH = re.compile(r"(?<![\w.])/(?:tmp|var/tmp|private/var/folders|var/folders)/[^\s'\":,;)\]}]+")
DATETIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[ T_]\d{2}[:\-]\d{2}[:\-]\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,? +(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w* +\d{1,2}\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
    r"|\b\d+:\d{2}(?=<)|(?<=<)\d+:\d{2}\b|(?<=\[)\d+:\d{2}(?=[,\]])")
_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
DURATION = re.compile(
    rf"(?<![\w.]){_NUMBER}\s*(?:ms|µs|us|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?)\b(?!/)")
RATE = re.compile(
    rf"(?<![\w.]){_NUMBER}\s*(?:it/s|s/it|(?:samples|sample|img|images|ex|examples|tokens|tok|batches|steps)/s(?:ec)?"
    r"|fps)\b", re.IGNORECASE)
TIME_LABEL = re.compile(
    rf"\b((?:time|elapsed|took|duration|eta|speed|throughput|wall|seconds|secs|ms/batch|s/batch|sec/batch|ms/step"
    rf"|s/step|pid|process id)[\"']?\s*[:=]?\s*){_NUMBER}(?:\s*\({_NUMBER}\))?", re.IGNORECASE)
# Data-loading time as the ImageNet example prints it: ``Data 0.001 (0.050)``.
DATA_TIME = re.compile(rf"\b(Data\s+){_NUMBER}\s*\({_NUMBER}\)")
WARNING = re.compile(r"^\S.*:\d+: \w*Warning: ")
_PLAIN_VALUE = (r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])"
                r"|\bnan\b|-?\binf\b|\bTrue\b|\bFalse\b")
# Reprs that show a value's type: the wrapper is dropped and each value inside marked.
TENSOR_REPR = re.compile(r"\btensor\((?P<body>[^()]*?)(?:,\s*(?:grad_fn=<\w+>|requires_grad=True|device='[^']*'"
                         r"|dtype=torch\.\w+|size=\([^)]*\)))*\)|\btensor\((?P<open>.*)$")
NUMPY_REPR = re.compile(r"\b(?:np|numpy)\.(?:float|int|uint|bool)\w*\((?P<body>[^()]*)\)")
_WRAPPERS = {"\x01": "tensor", "\x02": "numpy"}
VALUE = re.compile(rf"(?P<wrapper>[\x01\x02])?(?P<value>{_PLAIN_VALUE})")


@dataclass(frozen=True)
class Value:
    text: str
    kind: str  # int | float | bool
    wrapper: str  # "" for a plain value, "tensor" or "numpy"

    @property
    def number(self) -> float:
        return 1.0 if self.text == "True" else 0.0 if self.text == "False" else float(self.text)

    @property
    def unit(self) -> float:
        """One unit of the last printed digit."""
        mantissa, _, exponent = self.text.lower().partition("e")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return 10.0 ** (int(exponent or 0) - decimals)

    def shown(self) -> str:
        return {"tensor": f"tensor({self.text})", "numpy": f"np.float64({self.text})"}.get(self.wrapper, self.text)


@dataclass(frozen=True)
class Line:
    """A normalised line: ``skeleton`` is its text with every value replaced by ``#``."""

    number: int  # 1-based line number in the stream
    shown: str  # the line as a terminal shows it (escape codes dropped)
    skeleton: str
    values: tuple[Value, ...]
    labels: tuple[str, ...]  # for each value, the words just before it ('' when there are none)


def _kind(text: str) -> str:
    if text in ("True", "False"):
        return "bool"
    return "float" if any(c in text for c in ".eEn") else "int"


_SEGMENT = re.compile(r"<\w+>|[|,;:=\t()\[\]]")


def _label(prefix: str) -> str:
    """The words just before a value, in its own segment of the line ('' when there are none)."""
    for segment in reversed(_SEGMENT.split(prefix)):
        words = re.findall(r"[A-Za-z][\w/@%-]*", segment)
        if words:
            return " ".join(words[-3:])
        if segment.strip(" #/"):
            return ""
    return ""


def _mark(marker: str):
    plain = re.compile(_PLAIN_VALUE)
    return lambda match: plain.sub(lambda value: marker + value.group(0), match.group("body") or match.group("open")
                                   or "")


def parse(number: int, shown: str, masked: str) -> Line:
    masked = NUMPY_REPR.sub(_mark("\x02"), TENSOR_REPR.sub(_mark("\x01"), masked))
    values, labels, skeleton, last = [], [], [], 0
    for match in VALUE.finditer(masked):
        prefix = masked[last:match.start()]
        skeleton += [prefix, "#"]
        labels.append(_label(prefix))
        values.append(Value(match.group("value"), _kind(match.group("value")),
                            _WRAPPERS.get(match.group("wrapper") or "", "")))
        last = match.end()
    skeleton.append(masked[last:])
    return Line(number, shown, "".join(skeleton).replace("\x01", "").replace("\x02", ""), tuple(values),
                tuple(labels))


@dataclass(frozen=True)
class Context:
    """What is known to differ between the two runs' texts: their own paths."""

    paths: tuple[tuple[str, str], ...] = ()  # (text, placeholder), longest first

    @classmethod
    def of(cls, root: str, script: str) -> Context:
        pairs = [(root, "<root>"), (script, "<script>")]
        name = script.rsplit("/", 1)[-1]
        if name:
            pairs.append((name, "<script>"))
        return cls(tuple(sorted((p for p in pairs if p[0]), key=lambda p: -len(p[0]))))


def mask(text: str, context: Context) -> str:
    for path, placeholder in context.paths:
        text = text.replace(path, placeholder)
    text = TEMP_PATH.sub("<tmp>", text)
    text = ADDRESS.sub("0x…", text)
    text = DATETIME.sub("<time>", text)
    text = RATE.sub("<rate>", text)
    text = DURATION.sub("<duration>", text)
    text = TIME_LABEL.sub(lambda m: m.group(1) + "<time>", text)
    return DATA_TIME.sub(lambda m: m.group(1) + "<time>", text)


_TIME_COLUMN = re.compile(r"^(?:time|times|timestamp|date|datetime|elapsed|duration|wall|seconds|secs?|s|ms|"
                          r"\w*_time|time_\w*|\w*_seconds|\w*_sec)$", re.IGNORECASE)


def mask_table(lines: list[str]) -> list[str]:
    """A CSV/TSV log: columns whose header names a time are masked in every row."""
    if not lines:
        return lines
    separator = "\t" if "\t" in lines[0] else ","
    header = [h.strip().strip('"') for h in lines[0].split(separator)]
    timed = [i for i, h in enumerate(header) if _TIME_COLUMN.match(h)]
    if len(header) < 2 or not timed or any(re.fullmatch(_NUMBER, h) for h in header):
        return lines
    masked = [lines[0]]
    for line in lines[1:]:
        fields = line.split(separator)
        masked.append(separator.join("<time>" if i in timed else f for i, f in enumerate(fields)))
    return masked


def normalise(text: str, context: Context, drop_warnings: bool = False) -> tuple[list[Line], int]:
    """The stream's lines, normalised, and how many warnings (a header line and its source line) were left out."""
    lines, dropped, skip_source = [], 0, False
    for number, raw in enumerate(text.split("\n"), 1):
        shown = ANSI.sub("", raw.rstrip("\r").rsplit("\r", 1)[-1])
        if drop_warnings:
            if skip_source and shown.startswith("  "):
                skip_source = False
                continue
            skip_source = bool(WARNING.match(shown))
            if skip_source:
                dropped += 1
                continue
        lines.append(parse(number, shown, mask(shown, context)))
    while lines and not lines[-1].shown.strip():  # the final newline, or trailing blank lines
        lines.pop()
    return lines, dropped


@dataclass(frozen=True)
class Difference:
    """Why two lines (or two values) differ; ``type_change`` for tensor(0.5) against 0.5."""

    what: str
    type_change: bool = False
    max_abs: float = 0.0
    max_rel: float = 0.0


def compare_values(a: Value, b: Value, rtol: float, atol: float) -> Difference | None:
    if a.wrapper != b.wrapper or a.kind != b.kind:
        return Difference(f"printed value changed type: {a.shown()} in OLD, {b.shown()} in NEW", type_change=True)
    if a.text == b.text:
        return None
    if a.kind != "float":
        return Difference(f"{a.text} in OLD, {b.text} in NEW", max_abs=abs(a.number - b.number),
                          max_rel=abs(a.number - b.number) / abs(a.number) if a.number else float("inf"))
    x, y = a.number, b.number
    if x != x or y != y or x in (float("inf"), float("-inf")) or y in (float("inf"), float("-inf")):
        return Difference(f"{a.text} in OLD, {b.text} in NEW", max_abs=float("inf"), max_rel=float("inf"))
    diff = abs(x - y)
    rel = diff / abs(x) if x else float("inf")
    if diff <= atol + rtol * abs(x) + max(a.unit, b.unit):
        return None
    return Difference(f"{a.text} in OLD, {b.text} in NEW", max_abs=diff, max_rel=rel)


def compare_lines(a: Line, b: Line, rtol: float, atol: float) -> Difference | None:
    if a.skeleton != b.skeleton:
        return Difference("text differs")
    worst = None
    for x, y in zip(a.values, b.values):
        difference = compare_values(x, y, rtol, atol)
        if difference is not None and (worst is None or difference.type_change > worst.type_change
                                       or difference.max_abs > worst.max_abs):
            worst = difference
    return worst


@dataclass(frozen=True)
class StreamDifference:
    old: Line | None  # None: OLD has no such line
    new: Line | None
    difference: Difference
    differing: int  # lines that differ in all


def compare_streams(old: Sequence[Line], new: Sequence[Line], rtol: float, atol: float) -> StreamDifference | None:
    """The first differing line (by position) and how many differ."""
    first, count = None, abs(len(old) - len(new))
    for a, b in zip(old, new):
        difference = compare_lines(a, b, rtol, atol)
        if difference is not None:
            count += 1
            first = first or StreamDifference(a, b, difference, 0)
    if first is None and len(old) != len(new):
        k = min(len(old), len(new))
        extra = "NEW" if len(new) > len(old) else "OLD"
        first = StreamDifference(old[k] if k < len(old) else None, new[k] if k < len(new) else None,
                                 Difference(f"{extra} printed {plural(abs(len(new) - len(old)), 'more line')}"), 0)
    if first is None:
        return None
    return StreamDifference(first.old, first.new, first.difference, count)


def series(lines: Iterable[Line]) -> dict[tuple[str, int], list[tuple[Line, Value]]]:
    """Labelled numbers as series: (line skeleton, index of the value in it) -> occurrences in order."""
    found: dict[tuple[str, int], list[tuple[Line, Value]]] = {}
    for line in lines:
        for i, (value, label) in enumerate(zip(line.values, line.labels)):
            if label and value.kind != "bool":
                found.setdefault((line.skeleton, i), []).append((line, value))
    return found
