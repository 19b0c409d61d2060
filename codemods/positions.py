"""Line and column of the few nodes that were reported, in one cheap code generation pass.

libcst's ``PositionProvider`` records a range for every node of the file
through the metadata machinery, which on a large file costs more than all
rules together. Findings need positions for a handful of nodes, so this pass
generates the code once without keeping it, follows line and column, and
records only the nodes asked for (and the children their positions are
hoisted from), with the same semantics as ``PositionProvider``.
"""
from __future__ import annotations

import re
from contextlib import nullcontext
from typing import Dict, Iterable, Tuple

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
        return False


class _PositionState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line, self.column = 1, 0
        self.before_last = (1, 0)
        self.wanted = wanted
        self.spans: Dict[int, Span] = {}
        self.starts: Dict[int, Tuple[int, int]] = {}

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
            return _NOT_RECORDED
        for child in (start_node, end_node):
            if child is not None:
                self.wanted.add(id(child))
        return _Recording(self, node, start_node, end_node)


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> Dict[int, Span]:
    """``id(node) -> (line, column, end_line, end_column)`` for each of ``nodes``."""
    state = _PositionState(module, {id(node) for node in nodes})
    module._codegen(state)
    return state.spans
