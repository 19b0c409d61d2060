"""The guard: a rewrite is written only if it compiles and changed no statement that no applied fix reported.

``check_rewrite`` compares the statements of the old and new text (by their lines, then by their ``ast``)
and returns where the untouched ones went (``Anchor``); ``placed`` uses those anchors to carry line spans
from one text to the other (the change map of a fixed point's passes).
"""
from __future__ import annotations

import ast
import bisect
import io
import sys
from typing import TYPE_CHECKING, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from codemods.finding import Finding

if TYPE_CHECKING:  # the guard itself stays free of libcst (a run the cache serves imports neither)
    from codemods.positions import Statement


class BrokenRewrite(Exception):
    """The new text must not be written: ``line`` (1-based, in the old text or, if ``in_new``, the new) and why."""

    def __init__(self, line: int, message: str, internal: bool = True, in_new: bool = False):
        super().__init__(message)
        self.line, self.message, self.internal, self.in_new = line, message, internal, in_new


class Uncompilable(BrokenRewrite):
    """The new text does not compile; ``reason`` is Python's message."""

    def __init__(self, line: int, reason: str):
        super().__init__(line, f"produced code that does not compile ({reason})", in_new=True)
        self.reason = reason


class Unit(NamedTuple):
    """A statement (a compound statement by its header alone): its lines and its ``ast`` node."""

    first: int
    last: int
    node: ast.AST
    header: bool = False  # a compound statement: only its header is the unit


def _dump(unit: Unit) -> str:
    """The unit's ``ast``, line numbers left out; a compound statement's blocks emptied (they are units of
    their own)."""
    node = unit.node
    if unit.header:
        node = type(node)(**{name: ([] if name in _BLOCKS else value) for name, value in ast.iter_fields(node)})
    return ast.dump(node)


class Anchor(NamedTuple):
    """A statement no fix touched: its lines in the old text and in the new one."""

    old_first: int
    old_last: int
    new_first: int
    new_last: int


_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")


def _units(body: Sequence[ast.AST]) -> Iterator[Unit]:
    """Statements in source order; imports are left out (the engine adds and removes them as fixes ask)."""
    for node in body:
        kind = type(node)
        if kind is ast.Import or kind is ast.ImportFrom:
            continue
        blocks = _BLOCKS_OF.get(kind)
        if blocks is None:
            blocks = _BLOCKS_OF[kind] = tuple(name for name in _BLOCKS if name in kind._fields)
        first = _first_line(node)
        inner = [block for block in (getattr(node, name) for name in blocks) if block]
        if not inner:
            yield Unit(first, node.end_lineno, node)
            continue
        # blocks come in source order (body, handlers, else, finally), so the first child starts first
        yield Unit(first, max(first, _first_line(inner[0][0]) - 1), node, header=True)
        for block in inner:
            yield from _units(block)


_BLOCKS_OF: dict = {}  # statement type -> the fields of _BLOCKS it has


def _first_line(node: ast.AST) -> int:
    """A statement's first line, decorators included (a match case has no position of its own)."""
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        return decorators[0].lineno
    return getattr(node, "lineno", None) or node.pattern.lineno


def _merged(ranges: Iterable[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """Line ranges, sorted, overlapping ones joined."""
    merged: List[Tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _overlaps(unit: Unit, touched: List[Tuple[int, int]], starts: List[int]) -> bool:
    index = bisect.bisect_right(starts, unit.last) - 1  # the last range starting before the unit ends
    return index >= 0 and touched[index][1] >= unit.first


def text_lines(text: str) -> List[str]:
    """Lines as Python counts them (``str.splitlines`` also splits at form feeds and U+2028)."""
    return io.StringIO(text, newline="").readlines()


def python_name() -> str:
    return f"Python {sys.version_info.major}.{sys.version_info.minor}"


def check_rewrite(old: str, new: str, findings: Sequence[Finding],
                  statements: Optional[Tuple[Sequence[Statement], Sequence[Statement]]] = None) -> List[Anchor]:
    """Refuse a rewrite that does not compile or that changed code no applied fix reported.

    A fix may change the statements its finding's lines overlap, add
    statements, and add or remove imports; every other statement of ``old``
    must still be in ``new``, in order, with the same ``ast`` (lines that
    libcst reprinted verbatim are not compared further). Returns those
    statements' lines in both texts (the anchors of the change map); raises
    ``BrokenRewrite``.

    ``statements``: both texts' statements from the trees that print them (``codemods.positions``). Where
    each statement to keep is there in the new tree as the node it was (so printed from the same node, at
    most indented anew), nothing is parsed but the compile; otherwise both texts are compared by ``ast``.
    """
    touched = _merged((f.line, f.end_line or f.line) for f in findings if f.applied)
    starts = [start for start, _ in touched]
    if statements is not None:
        try:
            compile(new, "<new>", "exec", dont_inherit=True)
        except SyntaxError as error:
            raise Uncompilable(error.lineno or 1, error.msg) from None
        anchors = _kept(*statements, touched, starts)
        if anchors is not None:
            return anchors
    try:
        new_tree = ast.parse(new)
        if statements is None:  # else compiled above
            compile(new_tree, "<new>", "exec", dont_inherit=True)
    except SyntaxError as error:
        raise Uncompilable(error.lineno or 1, error.msg) from None
    try:
        old_tree = ast.parse(old)
    except SyntaxError as error:
        try:
            old_tree = ast.parse(old, feature_version=(3, 6))  # `async` as a keyword argument, before TM203
        except SyntaxError:
            raise BrokenRewrite(error.lineno or 1, f"cannot check the rewrite: {python_name()} cannot parse the "
                                f"original ({error.msg})", internal=False) from None
    old_lines, new_lines = text_lines(old), text_lines(new)
    candidates = _units(new_tree.body)
    anchors = []
    for unit in _units(old_tree.body):
        if _overlaps(unit, touched, starts):
            continue
        text, dump = old_lines[unit.first - 1:unit.last], None
        for candidate in candidates:
            if new_lines[candidate.first - 1:candidate.last] == text:
                break
            if type(candidate.node) is not type(unit.node):
                continue  # no dump needed to tell an `if` from a call
            dump = dump or _dump(unit)
            if _dump(candidate) == dump:
                break
        else:
            raise BrokenRewrite(unit.first, f"changed or removed code that no fix reported (line {unit.first}: "
                                f"`{old_lines[unit.first - 1].strip()}`)")
        anchors.append(Anchor(unit.first, unit.last, candidate.first, candidate.last))
    return anchors


def _kept(old: Sequence[Statement], new: Sequence[Statement], touched: List[Tuple[int, int]],
          starts: List[int]) -> Optional[List[Anchor]]:
    """The anchors, if every statement of ``old`` no fix touched is in ``new``, in order, by its key."""
    candidates = iter(new)
    anchors = []
    for unit in old:
        if _overlaps(unit, touched, starts):
            continue
        for candidate in candidates:
            if candidate.key == unit.key:
                break
        else:
            return None
        anchors.append(Anchor(unit.first, unit.last, candidate.first, candidate.last))
    return anchors


def placed(anchors: List[Anchor], spans: Sequence[Tuple[int, int]], old_lines: int,
            new_lines: int) -> List[Tuple[int, int]]:
    """Where each ``(line, end_line)`` span of the old text lies in the new one: exactly inside a statement no
    fix touched, otherwise between the untouched statements around it."""
    lasts = [anchor.old_last for anchor in anchors]
    firsts = [anchor.old_first for anchor in anchors]

    def inside(line: int) -> Optional[int]:
        index = bisect.bisect_right(firsts, line) - 1
        if index >= 0 and anchors[index].old_last >= line:
            return anchors[index].new_first + line - anchors[index].old_first
        return None

    found = []
    for line, end in spans:
        before = bisect.bisect_left(lasts, line)
        after = bisect.bisect_right(firsts, end)
        prev = anchors[before - 1] if before else None
        nxt = anchors[after] if after < len(anchors) else None
        start = inside(line)
        if start is None and prev is not None:
            start = prev.new_last + line - prev.old_last
        elif start is None:
            start = nxt.new_first - (nxt.old_first - line) if nxt is not None else line
        stop = inside(end)
        if stop is None:
            stop = nxt.new_first - (nxt.old_first - end) if nxt is not None else new_lines - (old_lines - end)
        start = max(1, start)
        found.append((start, max(start, stop)))
    return found
