"""TM511's analysis, on the semantic model: may a value be non-contiguous (``Layout``), flow-sensitively
within its scope, and is a view of it written in place (``Fate``)."""
from __future__ import annotations

import enum
from typing import Dict, List, Optional

import libcst as cst

from codemods import torchapi
from codemods.model import BindingKind, Scope, SemanticModel
from codemods.names import dotted
from codemods.walk import walk


class Layout(enum.IntEnum):
    CONTIGUOUS = 0
    STRIDED = 1  # not contiguous, dims in stride order (expanded, narrowed): elementwise results are contiguous
    PERMUTED = 2  # dims out of stride order (transposed): elementwise results keep that order (TensorIterator)


class Fate(enum.IntEnum):
    READ = 0
    UNKNOWN = 1
    WRITE = 2  # written in place (or through ``out=``)


_BLOCKS = (cst.IndentedBlock, cst.Module, cst.SimpleStatementSuite)
_READS = (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation, cst.BooleanOperation,
          cst.Return, cst.Expr, cst.Index, cst.FormattedStringExpression, cst.Yield, cst.AugAssign, cst.Lambda)
_PASS_THROUGH = (cst.Element, cst.List, cst.Tuple, cst.IfExp)
_TARGET_HOLDERS = (cst.Element, cst.Tuple, cst.List, cst.StarredElement)


def in_place(method: str) -> bool:
    return method.endswith("_") and not method.startswith("_")


class Layouts:
    """Which values of a scope may be non-contiguous, flow-sensitively within the scope: a name's layout is
    that of the bindings that can reach the use (back to the latest one in a block around it)."""

    def __init__(self, ctx) -> None:
        self.model: SemanticModel = ctx.model
        self._order: Dict[int, Dict[int, int]] = {}
        self._loads: Dict[int, Dict[str, List[cst.Name]]] = {}
        self.memo: Dict[int, Layout] = {}

    def _index(self, scope: Scope) -> Dict[int, int]:
        key = id(scope.node)
        if key not in self._order:
            self._order[key] = {id(n): i for i, n in enumerate(walk(scope.node))}
        return self._order[key]

    def layout(self, node: cst.CSTNode) -> Layout:
        kind = type(node)
        if kind is cst.Name:
            return max((self._binding_layout(b) for b in self._reaching(node)), default=Layout.CONTIGUOUS)
        if kind is cst.Attribute:
            if node.attr.value in torchapi.PERMUTING_ATTRIBUTES:
                return Layout.PERMUTED
            return self.layout(node.value) if node.attr.value == "data" else Layout.CONTIGUOUS
        if kind is cst.Subscript:  # slices keep the stride order
            return self.layout(node.value)
        if kind is cst.Call and type(node.func) is cst.Attribute:
            return self._call_layout(node)
        if kind is cst.BinaryOperation and type(node.operator) is not cst.MatrixMultiply:
            return self._elementwise([node.left, node.right])
        if kind is cst.Comparison:
            return self._elementwise([node.left, *(c.comparator for c in node.comparisons)])
        if kind is cst.UnaryOperation:
            return self._elementwise([node.expression])
        if kind is cst.IfExp:
            return max(self.layout(node.body), self.layout(node.orelse))
        return Layout.CONTIGUOUS

    def _call_layout(self, node: cst.Call) -> Layout:
        method = node.func.attr.value
        operands = [a.value for a in node.args if a.keyword is None and not a.star]
        if (self.model.qualname(node.func) or "").startswith("torch."):
            receiver = operands.pop(0) if operands else None  # torch.transpose(x, 0, 1), F.relu(x)
        else:
            receiver = node.func.value
        if method in torchapi.PERMUTING_METHODS:
            return Layout.PERMUTED
        if method == "contiguous" or receiver is None:
            return Layout.CONTIGUOUS
        if method in torchapi.STRIDING_METHODS:
            return max(Layout.STRIDED, self.layout(receiver))
        if method in torchapi.LAYOUT_ALIASES or in_place(method):
            return self.layout(receiver)
        if method in torchapi.ELEMENTWISE:
            return self._elementwise([receiver, *operands])
        return Layout.CONTIGUOUS

    def _elementwise(self, operands) -> Layout:
        return Layout.PERMUTED if any(self.layout(o) is Layout.PERMUTED for o in operands) else Layout.CONTIGUOUS

    def _binding_layout(self, binding) -> Layout:
        if binding.kind is not BindingKind.ASSIGN or binding.value is None:
            return Layout.CONTIGUOUS
        key = id(binding.value)
        if key not in self.memo:
            self.memo[key] = Layout.CONTIGUOUS  # a cycle through this binding adds nothing
            self.memo[key] = self.layout(binding.value)
        return self.memo[key]

    def _block(self, binding) -> int:
        if binding.kind is BindingKind.PARAMETER:
            return id(self.model.parent(self.model.parent(binding.node)).body) \
                if type(self.model.parent(self.model.parent(binding.node))) is cst.FunctionDef else 0
        node = binding.node
        while node is not None and type(node) not in _BLOCKS:
            node = self.model.parent(node)
        return id(node)

    def _reaching(self, use: cst.Name) -> list:
        """The bindings of ``use`` that can reach it: back to the latest one in a block around it."""
        scope = self.model.scope_of(use)
        found, bindings = self.model.lookup(use.value, scope)
        if not bindings:
            return []
        bindings = [b for b in bindings if b.kind is not BindingKind.AUGMENTED]
        if found is not scope:
            return bindings
        order = self._index(scope)
        start = order.get(id(use), 0)
        around = {id(n) for n in [use, *self.model.ancestors(use)]}
        before = [b for b in bindings if b.kind is BindingKind.PARAMETER or (
            order.get(id(b.node), start) < start and id(b.node) not in around)]
        if not before:
            return bindings  # read before any binding: a loop-carried value, or none of this scope
        reaching = []
        for binding in reversed(before):
            reaching.append(binding)
            if self._block(binding) in around:
                break
        return reaching

    # -- is the viewed result written in place --------------------------------------------------------------
    def fate(self, node: cst.CSTNode, depth: int = 0) -> Fate:
        """What happens to the value of ``node``, followed through aliasing methods, slices and names."""
        parent = self.model.parent
        while True:
            up = parent(node)
            grand = parent(up) if up is not None else None
            if type(up) is cst.Attribute and up.value is node:
                if type(grand) is cst.Call and grand.func is up:
                    method = up.attr.value
                    if in_place(method):
                        return Fate.WRITE
                    if method in torchapi.FRESH_RESULTS:
                        return Fate.READ
                    node = grand
                elif _is_target(up, grand):
                    return Fate.WRITE
                elif up.attr.value in ("data", "T", "mT"):
                    node = up
                else:
                    return Fate.READ
            elif type(up) is cst.Subscript and up.value is node:
                if _is_target(up, grand):
                    return Fate.WRITE
                node = up
            elif type(up) is cst.Arg and type(grand) is cst.Call:
                keyword = up.keyword.value if up.keyword is not None else ""
                function = type(grand.func) is cst.Name or self.model.qualname(grand.func) is not None
                last = (dotted(grand.func) or "").rpartition(".")[2]
                first = grand.args[0] is up
                return Fate.WRITE if keyword == "out" or (function and first and in_place(last)) else Fate.READ
            elif isinstance(up, _PASS_THROUGH):
                node = up
            elif type(up) in (cst.Assign, cst.AnnAssign) and up.value is node:
                targets = [t.target for t in up.targets] if type(up) is cst.Assign else [up.target]
                if not all(type(t) is cst.Name for t in targets):
                    return Fate.UNKNOWN
                return max(self._name_fate(t, depth) for t in targets)
            elif isinstance(up, _READS):
                return Fate.READ
            else:
                return Fate.UNKNOWN

    def _name_fate(self, target: cst.Name, depth: int) -> Fate:
        scope = self.model.scope_of(target)
        _, bindings = self.model.lookup(target.value, scope)
        if any(b.kind is BindingKind.AUGMENTED for b in bindings or ()):
            return Fate.WRITE  # `v += 1` on a tensor is in place
        if depth >= 2:
            return Fate.UNKNOWN
        return max((self.fate(load, depth + 1) for load in self._loads_of(scope).get(target.value, ())),
                   default=Fate.READ)

    def _loads_of(self, scope: Scope) -> Dict[str, List[cst.Name]]:
        key = id(scope.node)
        if key not in self._loads:
            loads: Dict[str, List[cst.Name]] = {}
            for node in walk(scope.node):
                if type(node) is cst.Name and self._is_load(node) and self.model.scope_of(node) is scope:
                    loads.setdefault(node.value, []).append(node)
            self._loads[key] = loads
        return self._loads[key]

    def _is_load(self, name: cst.Name) -> bool:
        up = self.model.parent(name)
        if type(up) is cst.Attribute and up.attr is name or type(up) is cst.Arg and up.keyword is name or type(
                up) in (cst.Param, cst.FunctionDef, cst.ClassDef, cst.AsName, cst.ImportAlias):
            return False
        node = name
        while type(up) in _TARGET_HOLDERS:
            node, up = up, self.model.parent(up)
        return not (type(up) is cst.AssignTarget or type(up) in (cst.For, cst.CompFor) and up.target is node)


def _is_target(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    return type(parent) is cst.AssignTarget or (type(parent) in (cst.AugAssign, cst.AnnAssign)
                                                and parent.target is node)
