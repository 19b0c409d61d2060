"""Line and column of the few nodes that were reported, in one cheap code generation pass; and the lines of
every statement of a tree, for the guard.

libcst's ``PositionProvider`` records a range for every node of the file
through the metadata machinery, which on a large file costs more than all
rules together. Findings need positions for a handful of nodes, so this pass
generates the code once, notes where in the tokens the nodes asked for (and
the children their positions are hoisted from) start and end, and counts
lines and columns up to those places only, with the same semantics as
``PositionProvider``.

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
from contextlib import contextmanager, nullcontext
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

import libcst as cst
from libcst._nodes.expression import _BaseParenthesizedNode
from libcst._nodes.internal import CodegenState

NEWLINE = re.compile(r"\r\n?|\n")
Span = Tuple[int, int, int, int]  # start line (1-based), start column (0-based), end line, end column
_NOT_RECORDED = nullcontext()


class _Recording:
    """A reported node's syntactic span, in token indices (hoisted from ``start_node``/``end_node`` as
    ``PositionProvider`` does); a statement's marks too, when the statements are asked for."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self):
        self.start = self.state.mark()

    def __exit__(self, *exc):
        state = self.state
        start = state.spans[id(self.start_node)][0] if self.start_node is not None else self.start
        end = state.spans[id(self.end_node)][1] if self.end_node is not None else state.mark()
        state.spans[id(self.node)] = (start, end)
        if state.statement_marks is not None and type(self.node) in _STATEMENTS:  # a reported statement
            state.statement_marks[id(self.node)] = (self.start, state.mark())
        return False


class _Marks:
    """A statement's syntactic start and end, in token indices (``statement_marks``)."""

    __slots__ = ("state", "node", "start")

    def __init__(self, state, node):
        self.state, self.node = state, node

    def __enter__(self):
        self.start = self.state.mark()

    def __exit__(self, *exc):
        self.state.statement_marks[id(self.node)] = (self.start, self.state.mark())
        return False


_STATEMENTS = frozenset({cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.If, cst.For, cst.While, cst.With,
                         cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.FunctionDef,
                         cst.ClassDef, cst.Match, cst.MatchCase, cst.Decorator})


class _State(CodegenState):
    """libcst's code generation, keeping the token index where each wanted node (and, with ``statements``,
    each statement) starts and ends; lines and columns are counted afterwards, only between those indices
    (``line_columns``), so a token costs a list append. No context manager is opened for other nodes."""

    def __init__(self, module: cst.Module, wanted: set, statements: bool, keep_text: bool):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.add_token = self.tokens.append  # the list's own method: no Python frame per token
        self.wanted = wanted
        self.spans: Dict[int, Tuple[int, int]] = {}
        self.statement_marks: Optional[Dict[int, Tuple[int, int]]] = {} if statements else None
        self.keep_text = keep_text

    def mark(self) -> int:
        return len(self.tokens)

    def pop_trailing_newline(self) -> None:
        """A module without a final newline drops the one its last statement printed; its positions count it
        (as ``PositionProvider``'s do: the Module ends on the line after)."""
        if self.keep_text:
            super().pop_trailing_newline()

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if id(node) in self.wanted:
            for child in (start_node, end_node):
                if child is not None:
                    self.wanted.add(id(child))
            return _Recording(self, node, start_node, end_node)
        if self.statement_marks is not None and type(node) in _STATEMENTS:
            return _Marks(self, node)
        return _NOT_RECORDED

    def line_columns(self) -> Dict[int, Tuple[int, int]]:
        """Line (1-based) and column of each token index marked."""
        marks = {mark for span in self.spans.values() for mark in span}
        if self.statement_marks:
            marks.update(mark for span in self.statement_marks.values() for mark in span)
        found, line, column, previous, tokens = {}, 1, 0, 0, self.tokens
        for mark in sorted(marks):
            chunk = "".join(tokens[previous:mark])
            if "\r" in chunk:
                segments = NEWLINE.split(chunk)
                line += len(segments) - 1
                column = len(segments[-1]) if len(segments) > 1 else column + len(chunk)
            else:
                newlines = chunk.count("\n")
                if newlines:
                    line += newlines
                    column = len(chunk) - chunk.rfind("\n") - 1
                else:
                    column += len(chunk)
            found[mark], previous = (line, column), mark
        return found

    def statements(self, module: cst.Module, at: Dict[int, Tuple[int, int]]) -> Optional[List["Statement"]]:
        return _statements(module, {key: (at[start][0], at[end][0])
                                    for key, (start, end) in self.statement_marks.items()})


class _Parenthesized:
    """What libcst's ``_parenthesize`` does (the parentheses around an expression's code, its syntactic
    position between them), as a plain context manager: libcst's is generator-based, a fifth of the time of
    code generation."""

    __slots__ = ("node", "state", "inner")

    def __init__(self, node, state):
        self.node, self.state = node, state

    def __enter__(self):
        for lpar in self.node.lpar:
            lpar._codegen(self.state)
        self.inner = self.state.record_syntactic_position(self.node)
        self.inner.__enter__()

    def __exit__(self, kind, value, traceback):
        self.inner.__exit__(kind, value, traceback)
        if kind is None:  # as the generator: an exception inside leaves the closing parentheses out
            for rpar in self.node.rpar:
                rpar._codegen(self.state)
        return False


def _parenthesize(node, state):
    if type(state) is not _State or node.lpar or node.rpar or id(node) in state.wanted:
        return _Parenthesized(node, state)
    return _NOT_RECORDED  # most expressions: no parentheses, no position asked for


@contextmanager
def libcst_method(owner: type, name: str, replacement) -> Iterator[None]:
    """``owner.name`` (a libcst class's own method) is ``replacement`` while the block runs, for every node of
    that class: the rules and code generation run on one thread at a time, so no other caller sees it."""
    original = owner.__dict__[name]
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _codegen(node, state, **kwargs) -> None:
    """``CSTNode._codegen`` for a ``_State``: a wanted node without a syntactic position gets the
    whitespace-inclusive one, as in PositionProvider; any other node costs no call to the state (libcst's
    calls its ``before_codegen`` and ``after_codegen`` for every node). Another state (libcst's own, in a
    thread that prints code while ours runs) gets libcst's steps."""
    if type(state) is not _State:
        state.before_codegen(node)
        node._codegen_impl(state, **kwargs)
        state.after_codegen(node)
        return
    key = id(node)
    if key not in state.wanted:
        node._codegen_impl(state, **kwargs)
        return
    start = len(state.tokens)
    node._codegen_impl(state, **kwargs)
    if key not in state.spans:
        state.spans[key] = (start, len(state.tokens))


@contextmanager
def codegen_methods() -> Iterator[None]:
    """libcst's ``_parenthesize`` and ``_codegen`` replaced by this module's for the block (any state still
    gets libcst's output and positions: only a ``_State`` takes the short ways)."""
    with libcst_method(_BaseParenthesizedNode, "_parenthesize", _parenthesize), \
            libcst_method(cst.CSTNode, "_codegen", _codegen):
        yield


def _generate(module: cst.Module, state: _State) -> None:
    """``module``'s code generation into ``state``, with this module's ``codegen_methods``."""
    with codegen_methods():
        module._codegen(state)


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode], statements: bool = False):
    """``id(node) -> (line, column, end_line, end_column)`` for each of ``nodes``; with ``statements``, also
    the module's ``statements`` (``(spans, statements)``)."""
    state = _State(module, {id(node) for node in nodes}, statements, keep_text=False)
    _generate(module, state)
    at = state.line_columns()
    spans: Dict[int, Span] = {key: (*at[start], *at[end]) for key, (start, end) in state.spans.items()}
    return (spans, state.statements(module, at)) if statements else spans


def code(module: cst.Module, statements: bool = False):
    """``module.code``; with ``statements``, ``(code, the module's statements)``."""
    state = _State(module, set(), statements, keep_text=True)
    _generate(module, state)
    text = "".join(state.tokens)
    return (text, state.statements(module, state.line_columns())) if statements else text


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


def _statements(module: cst.Module, marks: Dict[int, Tuple[int, int]]) -> Optional[List[Statement]]:
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
