"""Fast read-only traversal of a libcst tree.

libcst's ``visit`` rebuilds every node on the way back up (it is made for
transforms), which costs more than the parse itself on a typical file.
Analyses only read, so they walk the dataclass fields directly: about five
times faster. Children come in field order, which is source order but for
decorators, moved before the function or class they decorate, and a few fields
libcst declares out of source order (``IfExp``'s test before its body, an
``except``'s body before its type, a function's body before its return
annotation, a class's body before its bases); no analysis depends on those.

Layout nodes (whitespace, comments, punctuation, operator tokens) are left
out of every walk: they are more than half of a tree's nodes, and no analysis
finds anything in them by walking (an operator is read as ``node.operator``,
a comment through ``leading_lines``).
"""
from __future__ import annotations

import contextlib
import dataclasses
import re
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import libcst as cst

LAYOUT = frozenset(
    cls for cls in vars(cst).values()
    if isinstance(cls, type) and cls.__module__ in ("libcst._nodes.op", "libcst._nodes.whitespace")) | {
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Asynchronous}

_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}
_DECORATED = (cst.FunctionDef, cst.ClassDef)


def child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of ``node_type`` that may hold child nodes other than layout (``lpar``, ``comma`` and
    ``whitespace_*`` are declared to hold layout only; ``Name.value`` and the like only text), decorators
    first."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        names = []
        for field in dataclasses.fields(node_type):
            declared = str(field.type)
            classes = [getattr(cst, name, None) for name in re.findall(r"libcst\._nodes\.\w+\.(\w+)", declared)]
            holds_nodes = classes or "ForwardRef" in declared  # else str, bool, a Literal of strings
            if holds_nodes and not (classes and all(cls in LAYOUT for cls in classes)):
                names.append(field.name)
        if issubclass(node_type, _DECORATED):
            names.remove("decorators")
            names.insert(0, "decorators")
        fields = _CHILD_FIELDS[node_type] = tuple(names)
    return fields


_IS_CONTENT: Dict[type, bool] = {}


def is_content(value: object) -> bool:
    """A node that is not layout (``isinstance`` without the ABC machinery, which dominates a walk)."""
    value_type = type(value)
    known = _IS_CONTENT.get(value_type)
    if known is None:
        known = _IS_CONTENT[value_type] = issubclass(value_type, cst.CSTNode) and value_type not in LAYOUT
    return known


def _compute_children(node: cst.CSTNode) -> Tuple[cst.CSTNode, ...]:
    found = []
    for name in _CHILD_FIELDS.get(type(node)) or child_fields(type(node)):
        value = getattr(node, name)
        if type(value) is list or type(value) is tuple:
            found.extend(item for item in value if is_content(item))
        elif is_content(value):
            found.append(value)
    return tuple(found)


_INDEX: Dict[int, Tuple[cst.CSTNode, Tuple[cst.CSTNode, ...]]] = {}  # id(node) -> (node, its children)
_PARENTS: Dict[int, cst.CSTNode] = {}  # id(node) -> its parent, for the tree being processed
_CHAINS: Dict[int, Tuple[cst.CSTNode, ...]] = {}  # id(node) -> ``chain(node)``, for the tree being processed


def parent(node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The parent of ``node`` in the tree ``indexed`` is running for (``None`` for the root, or a node not in it)."""
    found = _PARENTS.get(id(node))
    if found is None:
        return None
    known = _INDEX.get(id(node))
    return found if known is not None and known[0] is node else None


def chain(node: cst.CSTNode) -> Tuple[cst.CSTNode, ...]:
    """The nodes from the root down to ``node``, itself last. Memoized per node for the tree being processed and
    made from the nearest memoized ancestor's chain, so the chains of nodes in one block or one expression cost
    one step each instead of a walk to the root."""
    missing, current = [], node
    while current is not None:
        found = _CHAINS.get(id(current))
        if found is not None and found[-1] is current:  # checked by identity: an id reused by a new node
            break
        missing.append(current)
        current = parent(current)
    else:
        found = ()
    for current in reversed(missing):
        found = _CHAINS[id(current)] = (*found, current)
    return found


def children(node: cst.CSTNode) -> Tuple[cst.CSTNode, ...]:
    """The child nodes of ``node`` (layout left out), from the index of the tree being processed when it
    holds them (checked by identity: an id reused by a new node never finds an old node's children)."""
    known = _INDEX.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    return _compute_children(node)


class Index(NamedTuple):
    """Every node's children and parent under a root (by ``id``), and the nodes in ``walk``'s order; ``shared``:
    some node object occurs twice (a fix may place one object in two spots of the tree it builds; libcst
    allows it, but a node then has two parents, so such a tree is re-read from its text instead)."""

    children: Dict[int, Tuple[cst.CSTNode, Tuple[cst.CSTNode, ...]]]
    parents: Dict[int, cst.CSTNode]
    order: List[cst.CSTNode]
    shared: bool


def build_index(root: cst.CSTNode) -> Index:
    """The ``Index`` of ``root``'s tree. ``_compute_children`` is inlined, loops and all: this loop meets every
    node of every file, and a call (or a generator) per node was more than half its time."""
    index, parents, order, stack = {}, {}, [], [root]
    pop, push, append = stack.pop, stack.extend, order.append
    fields_of, known_content = _CHILD_FIELDS, _IS_CONTENT
    linked = 0  # child links made; more than the parents recorded when a node object occurs twice
    while stack:
        node = pop()
        append(node)
        fields = fields_of.get(type(node))
        if fields is None:
            fields = child_fields(type(node))
        found = []
        for name in fields:  # none for a leaf such as Name or Integer
            value = getattr(node, name)
            if type(value) is list or type(value) is tuple:
                for item in value:
                    content = known_content.get(type(item))
                    if content or (content is None and is_content(item)):
                        found.append(item)
            else:
                content = known_content.get(type(value))
                if content or (content is None and is_content(value)):
                    found.append(value)
        if found:
            kids = tuple(found)
            linked += len(kids)
            for kid in kids:
                parents[id(kid)] = node
            push(reversed(kids))
            index[id(node)] = (node, kids)
        else:
            index[id(node)] = (node, ())
    return Index(index, parents, order, len(parents) != linked)


@contextlib.contextmanager
def indexed(root: Union[cst.CSTNode, Index]) -> Iterator[None]:
    """Compute every node's children (and parent) under ``root`` once (or take them from ``build_index``), for
    all the walks made inside the block.

    Each rule family walks the whole file for its own analysis; finding a
    node's children (its dataclass fields, filtered) costs more than the
    visit itself, so the engine pays for it once per file.
    """
    global _INDEX, _PARENTS, _CHAINS
    built = root if isinstance(root, Index) else build_index(root)
    saved, _INDEX, _PARENTS, _CHAINS = (_INDEX, _PARENTS, _CHAINS), built.children, built.parents, {}
    try:
        yield
    finally:
        _INDEX, _PARENTS, _CHAINS = saved


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself included), parents before children, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a read-only visitor (``visit_*`` returning False skips children)."""
    if visitor.on_visit(node):
        for child in children(node):
            visit(child, visitor)
    visitor.on_leave(node)
