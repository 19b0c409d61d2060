"""Line and column of the few nodes that were reported, in one cheap code generation pass; and the lines of
every statement of a tree, for the guard.

libcst's ``PositionProvider`` records a range for every node of the file
through the metadata machinery, which on a large file costs more than all
rules together. Findings need positions for a handful of nodes, so this pass
generates the code once without keeping it, follows line and column, and
records only the nodes asked for (and the children their positions are
hoisted from), with the same semantics as ``PositionProvider``.

The guard (``migrate.guard``) compares the statements of a file before and after a rewrite. ``statements``
gives them from the trees the rewrite already has, each with its lines and a key that is equal in both trees
for a statement no fix rebuilt (the same node object, or a compound statement whose header fields are), so
that it need not parse the two texts again: the old tree's come with the findings' positions, the new
tree's with its text (``code``, which is also a faster ``module.code``: libcst's default code generation
opens a generator-based context for every node that has a position).
"""
from __future__ import annotations

import dataclasses
import re
from contextlib import nullcontext
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState

NEWLINE = re.compile(r"\r\n?|\n")
Span = Tuple[int, int, int, int]  # start line (1-based), start column (0-based), end line, end column
_NOT_RECORDED = nullcontext()


class _Recording:
    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self):
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc):
        state = self.state
        start = state.spans[id(self.start_node)][:2] if self.start_node is not None else self.start
        end = state.spans[id(self.end_node)][2:] if self.end_node is not None else (state.line, state.column)
        state.spans[id(self.node)] = (*start, *end)
        if state.statement_marks is not None and type(self.node) in _STATEMENTS:  # a reported statement
            state.statement_marks[id(self.node)] = [self.start[0], state.line]
        return False


class _Marks:
    """Where each statement starts and ends (``statement_marks`` ``id(node) -> [start, end]``), in the state's
    own measure: a line, or an index into the tokens."""

    __slots__ = ("state", "node")

    def __init__(self, state, node):
        self.state, self.node = state, node

    def __enter__(self):
        self.state.statement_marks[id(self.node)] = [self.state.mark(), None]

    def __exit__(self, *exc):
        self.state.statement_marks[id(self.node)][1] = self.state.mark()
        return False


_STATEMENTS = frozenset({cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.If, cst.For, cst.While, cst.With,
                         cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.FunctionDef,
                         cst.ClassDef, cst.Match, cst.MatchCase, cst.Decorator})


class _TextState(CodegenState):
    """``module.code`` without a context manager per node; with ``statements``, each statement's marks."""

    def __init__(self, module: cst.Module, statements: bool):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.statement_marks: Optional[Dict[int, list]] = {} if statements else None

    def mark(self) -> int:
        return len(self.tokens)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if self.statement_marks is not None and type(node) in _STATEMENTS:
            return _Marks(self, node)
        return _NOT_RECORDED


class _PositionState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set, statements: bool = False):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line, self.column = 1, 0
        self.before_last = (1, 0)
        self.wanted = wanted
        self.spans: Dict[int, Span] = {}
        self.starts: Dict[int, Tuple[int, int]] = {}
        self.statement_marks: Optional[Dict[int, list]] = {} if statements else None

    def mark(self) -> int:
        return self.line

    def _advance(self, value: str) -> None:
        self.before_last = (self.line, self.column)
        if "\n" in value or "\r" in value:
            segments = NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_token(self, value: str) -> None:
        self._advance(value)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self._advance(token)

    def pop_trailing_newline(self) -> None:
        self.line, self.column = self.before_last

    # Nodes without a syntactic position get the whitespace-inclusive one, as in PositionProvider.
    def before_codegen(self, node) -> None:
        if id(node) in self.wanted:
            self.starts[id(node)] = (self.line, self.column)

    def after_codegen(self, node) -> None:
        key = id(node)
        if key in self.wanted and key not in self.spans:
            self.spans[key] = (*self.starts[key], self.line, self.column)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if id(node) not in self.wanted:
            if self.statement_marks is not None and type(node) in _STATEMENTS:
                return _Marks(self, node)
            return _NOT_RECORDED
        for child in (start_node, end_node):
            if child is not None:
                self.wanted.add(id(child))
        return _Recording(self, node, start_node, end_node)


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode], statements: bool = False):
    """``id(node) -> (line, column, end_line, end_column)`` for each of ``nodes``; with ``statements``, also
    the module's ``statements`` (``(spans, statements)``)."""
    state = _PositionState(module, {id(node) for node in nodes}, statements)
    module._codegen(state)
    if not statements:
        return state.spans
    return state.spans, _statements(module, state.statement_marks)


def code(module: cst.Module, statements: bool = False):
    """``module.code``; with ``statements``, ``(code, the module's statements)``."""
    state = _TextState(module, statements)
    module._codegen(state)
    text = "".join(state.tokens)
    if not statements:
        return text
    lines = _lines_at(state.tokens, {mark for marks in state.statement_marks.values() for mark in marks})
    return text, _statements(module, {key: [lines[start], lines[end]]
                                      for key, (start, end) in state.statement_marks.items()})


def _lines_at(tokens: List[str], marks: set) -> Dict[int, int]:
    """The line each token index (a mark) falls on: one join of the tokens between consecutive marks."""
    lines, line, previous = {}, 1, 0
    for mark in sorted(marks):
        chunk = "".join(tokens[previous:mark])
        line += chunk.count("\n") + (chunk.count("\r") - chunk.count("\r\n") if "\r" in chunk else 0)
        lines[mark], previous = line, mark
    return lines


class Statement(NamedTuple):
    """A statement as the guard compares it (a compound statement by its header: up to its first child)."""

    first: int  # first line, decorators included
    last: int
    key: object  # equal in two trees of one rewrite for a statement no fix rebuilt
    header: bool = False


# A compound statement's fields that are not its header (ast has neither the blocks nor the comments).
_NOT_HEADER = frozenset({"body", "orelse", "handlers", "finalbody", "cases", "leading_lines",
                         "lines_after_decorators"})
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _header_key(node: cst.CSTNode) -> tuple:
    """The header's fields by identity (a sequence by its items': the fixes rebuild the sequences of a node
    on their path), so that a statement whose body alone was rebuilt keeps its key."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node) if f.name not in _NOT_HEADER)
    values = [getattr(node, name) for name in names]
    return (type(node), *(tuple(map(id, value)) if isinstance(value, (tuple, list)) else id(value)
                          for value in values))


def _statements(module: cst.Module, marks: Dict[int, list]) -> Optional[List[Statement]]:
    """The module's statements in source order, as ``migrate.guard`` takes them (lines of imports left out:
    the engine adds and removes imports as fixes ask); None where keys would not tell statements apart (a node
    object twice in the tree) or a block was left empty (code generation prints a ``pass`` of no node)."""
    found: List[Statement] = []

    def first_line(node) -> int:
        decorators = getattr(node, "decorators", None)
        return marks[id(decorators[0] if decorators else node)][0]

    def block(statements) -> None:
        for node in statements:
            if type(node) is cst.SimpleStatementLine:
                if not all(type(small) in (cst.Import, cst.ImportFrom) for small in node.body):
                    found.append(Statement(*marks[id(node)], id(node)))
            else:
                compound(node)

    def suite(body) -> None:
        if type(body) is cst.SimpleStatementSuite:
            found.append(Statement(*marks[id(body)], id(body)))
        else:
            block(body.body)

    def compound(node) -> None:
        first = first_line(node)
        if type(node) is cst.Match:
            found.append(Statement(first, max(first, first_line(node.cases[0]) - 1), _header_key(node), True))
            for case in node.cases:
                compound(case)
            return
        body = node.body
        child = marks[id(body)][0] if type(body) is cst.SimpleStatementSuite else first_line(body.body[0])
        found.append(Statement(first, max(first, child - 1), _header_key(node), True))
        suite(body)
        for handler in getattr(node, "handlers", ()):
            compound(handler)  # `except E:` is a header of its own, as in ast
        orelse = getattr(node, "orelse", None)
        if type(orelse) is cst.If:
            compound(orelse)  # elif
        elif orelse is not None:
            suite(orelse.body)
        final = getattr(node, "finalbody", None)
        if final is not None:
            suite(final.body)

    try:
        block(module.body)
    except (KeyError, IndexError):
        return None
    return found if len({statement.key for statement in found}) == len(found) else None
