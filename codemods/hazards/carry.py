"""TM601's analysis: how a value derives from a state carried across iterations (``Carry``), and the
state a module keeps in ``self`` between calls."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemods.hazards.analysis import (COMPREHENSIONS, DEFERRED, Chain, Facts, PLAIN_BUILTINS, SCALAR_METHODS,
                                       bound_targets, is_tensor_source, last_name, requires_grad_source, running_nodes,
                                       self_name)
from codemods.hazards.flow import Flow, PARAM
from codemods.names import dotted
from codemods.syntax import literal, method_name
from codemods.torchapi import DERIVING_METHODS, NO_GRAPH_ATTRIBUTES, NO_GRAPH_TENSOR_METHODS, NOT_MATH, VARIABLE
from codemods.walk import children, parent




# ---------------------------------------------------------------------------
# TM601: recurrent state carried with its graph
# ---------------------------------------------------------------------------
DETACHING_WORDS = ("detach", "repackage")


class Carry:
    """How an expression derives from a carried state ``H``: 0 not at all, 1 without adding graph (aliases,
    tensor methods, containers), 2 through a module call or math with parameters (so it carries a graph)."""

    def __init__(self, facts: Facts, chain: Chain, params: Set[str]):
        self.facts = facts
        self.qualname = facts.qualname
        self.chain = chain
        self.params = params  # dotted names that are parameters or modules (math with them builds a graph)

    def level(self, node: cst.CSTNode, tainted: Dict[str, int]) -> int:
        kind = type(node)  # not isinstance: node classes are final, and their ABCMeta check is slow
        name = dotted(node) if kind is cst.Name or kind is cst.Attribute else None
        if name is not None and name in tainted:
            return tainted[name]
        if kind is cst.Attribute:
            if node.attr.value in NO_GRAPH_ATTRIBUTES:
                return 0
            return self.level(node.value, tainted)
        if kind is cst.Subscript:
            return self.level(node.value, tainted)
        if kind is cst.Tuple or kind is cst.List:
            return max((self.level(e.value, tainted) for e in node.elements), default=0)
        if kind is cst.IfExp:
            return max(self.level(node.body, tainted), self.level(node.orelse, tainted))
        if kind is cst.UnaryOperation:
            return self.level(node.expression, tainted)
        if kind is cst.BinaryOperation:
            return self._math([node.left, node.right], tainted)
        if kind is cst.AugAssign:  # x += v computes x + v
            return self._math([node.target, node.value], tainted)
        if kind in COMPREHENSIONS:
            inner = dict(tainted)
            comp = node.for_in
            while comp is not None:
                source = self.level(comp.iter, inner)
                for target in bound_targets(comp.target):
                    if source:
                        inner[dotted(target) or ""] = source
                comp = comp.inner_for_in
            return max((self.level(getattr(node, part), inner) for part in ("elt", "key", "value")
                        if getattr(node, part, None) is not None), default=0)
        if kind is cst.Call:
            return self._call(node, tainted)
        return 0

    def _math(self, operands: Sequence[cst.CSTNode], tainted: Dict[str, int]) -> int:
        levels = [self.level(o, tainted) for o in operands]
        top = max(levels, default=0)
        if top == 1 and any(lv == 0 and self._param(o) for lv, o in zip(levels, operands)):
            return 2
        return top

    def _param(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` reads a parameter (not through ``.data``/``.grad``)."""
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) in self.params:
            return True
        if isinstance(node, cst.Attribute) and node.attr.value in ("data", "grad"):
            return False
        return any(self._param(child) for child in children(node) if not isinstance(child, cst.Lambda))

    def _call(self, node: cst.Call, tainted: Dict[str, int]) -> int:
        func = node.func
        name = dotted(func) or ""
        method = method_name(node)
        qualified = self.qualname(func)
        if any(word in last_name(name).lower() for word in DETACHING_WORDS) or qualified in VARIABLE:
            return 0
        if method in SCALAR_METHODS or method in NO_GRAPH_TENSOR_METHODS or name in PLAIN_BUILTINS:
            return 0
        args = [a.value for a in node.args]
        arg_level = max((self.level(a, tainted) for a in args), default=0)
        if self.facts.callee(func, self.chain) == "module":
            return 2 if arg_level else 0
        if qualified is not None:
            if qualified.startswith("torch.") and not qualified.startswith(NOT_MATH):
                flat = args + [e.value for a in args if isinstance(a, (cst.List, cst.Tuple)) for e in a.elements]
                return self._math(flat, tainted)
            return 0
        if isinstance(func, cst.Attribute):
            receiver = self.level(func.value, tainted)
            if receiver:
                return max(receiver, arg_level)
            return 0
        if name in ("tuple", "list"):
            return arg_level
        return 0


def state_name(name: str) -> bool:
    """A name that can hold recurrent state: ``h`` or ``self.h``."""
    return name.count(".") == 0 or (name.count(".") == 1 and name.startswith("self."))


def carry_assignments(facts: "Facts", region: cst.CSTNode
                       ) -> List[Tuple[cst.CSTNode, List[str], Optional[cst.CSTNode]]]:
    """(statement, bound names, value) for every binding in ``region`` (in ``running_nodes`` order): value is
    the bound expression, the ``AugAssign`` itself for ``x += v``, None for a fresh binding (a loop or with
    target). Kept per region and per block, so an outer loop reuses what its inner loops found."""
    found = facts.assignments.get(id(region))
    if found is None:
        found = []
        _collect_assignments(facts, region, found)
        facts.assignments[id(region)] = found
    return found


def _collect_assignments(facts: "Facts", node: cst.CSTNode, found: list) -> None:
    kind = type(node)
    if kind is cst.Assign:
        names = [dotted(t) for target in node.targets for t in bound_targets(target.target)]
        found.append((node, [n for n in names if n], node.value))
    elif kind in _BINDINGS and (kind is not cst.AnnAssign or node.value is not None):
        target, value = _BINDINGS[kind](node)
        if target is not None:
            found.append((node, [n for n in (dotted(t) for t in bound_targets(target)) if n], value))
    for child in children(node):
        if type(child) is cst.IndentedBlock:
            found.extend(carry_assignments(facts, child))
        elif type(child) not in DEFERRED:
            _collect_assignments(facts, child, found)


# Binding statements other than ``Assign``: node -> (target or None, value).
_BINDINGS = {
    cst.AnnAssign: lambda node: (node.target, node.value),
    cst.AugAssign: lambda node: (node.target, node),
    cst.For: lambda node: (node.target, None),
    cst.CompFor: lambda node: (node.target, None),
    cst.WithItem: lambda node: (node.asname.name if node.asname is not None else None, None),
    cst.NamedExpr: lambda node: (node.target, node.value),
}


def _order(facts: "Facts", node: cst.CSTNode, first: Dict[str, bool]) -> None:
    """Add to ``first`` (dotted name -> read before bound) every name read or bound under ``node``, in
    execution order, unless already there. A block's own answer is kept and merged: its first occurrences
    are the ones that count."""
    kind = type(node)
    if kind in DEFERRED:
        return
    if kind is cst.IndentedBlock:
        block = facts.first_uses.get((id(node),))
        if block is None:
            block = facts.first_uses[(id(node),)] = {}
            for child in children(node):
                _order(facts, child, block)
        for name, read in block.items():
            first.setdefault(name, read)
    elif kind is cst.Assign or kind is cst.AnnAssign:
        if node.value is not None:
            _order(facts, node.value, first)
        for target in ([t.target for t in node.targets] if kind is cst.Assign else [node.target]):
            _stores(facts, target, first)
    elif kind is cst.AugAssign:
        _order(facts, node.target, first)
        _order(facts, node.value, first)
        _stores(facts, node.target, first)
    elif kind is cst.For:
        _order(facts, node.iter, first)
        _stores(facts, node.target, first)
        for part in (node.body, node.orelse):
            if part is not None:
                _order(facts, part, first)
    elif kind is cst.Name or kind is cst.Attribute:
        name = dotted(node)
        if name:
            first.setdefault(name, True)
        if kind is cst.Attribute:
            _order(facts, node.value, first)
    else:
        for child in children(node):
            _order(facts, child, first)


def _stores(facts: "Facts", target: cst.CSTNode, first: Dict[str, bool]) -> None:
    kind = type(target)
    if kind is cst.Tuple or kind is cst.List:
        for element in target.elements:
            _stores(facts, element.value, first)
    elif kind is cst.StarredElement:
        _stores(facts, target.value, first)
    elif (kind is cst.Name or kind is cst.Attribute) and dotted(target):
        first.setdefault(dotted(target), False)
        if kind is cst.Attribute:
            _order(facts, target.value, first)
    else:
        _order(facts, target, first)


def read_first(facts: "Facts", region: Sequence[cst.CSTNode], name: str) -> bool:
    """Whether ``name`` is read in ``region`` before it is bound there (it is live when the region starts)."""
    key = tuple(id(part) for part in region)
    first = facts.first_uses.get(key)
    if first is None:
        first = {}
        for part in region:
            _order(facts, part, first)
        facts.first_uses[key] = first
    return first.get(name, False)


def taint(carry: Carry, facts: Facts, chain: Chain, assignments, seed: str) -> Dict[str, int]:
    tainted = {seed: 1}
    changed = True
    while changed:
        changed = False
        for stmt, names, value in assignments:
            if value is None or facts.in_nograd(stmt, chain):
                continue
            level = carry.level(value, tainted)
            for name in names:
                if name != seed and level > tainted.get(name, 0):
                    tainted[name] = level
                    changed = True
    return tainted


def param_names(facts: Facts, flow: Flow, chain: Chain) -> Set[str]:
    """Names in ``chain``'s scope (and ``self.x`` attributes) that hold parameters or modules."""
    names = facts.param_names.get(id(chain[0]))
    if names is None:
        names = facts.param_names[id(chain[0])] = _scope_param_names(facts, flow, chain)
    return names


def _scope_param_names(facts: Facts, flow: Flow, chain: Chain) -> Set[str]:
    names: Set[str] = set()
    owner = facts._method_class(chain)
    for scope_id in {id(chain[0]), id(facts.module)}:
        for name in facts.bound.get(scope_id, ()):
            if any(kind == "value" and is_tensor_source(facts.qualname, value) and requires_grad_source(facts, value)
                   for kind, value, _ in facts.binds[(scope_id, name)]):
                names.add(name)
    if owner is not None:
        me = self_name(next(s for s in chain if isinstance(s, cst.FunctionDef)))
        for (cls_name, attr) in facts.self_attrs:
            if cls_name == owner.name.value:
                value = flow._class_attr(cls_name, attr)
                if value == PARAM or (value is not None and value.kind == "module"):
                    names.add(f"{me}.{attr}")
    return names


def surely_tensor(facts: Facts, node: cst.CSTNode, assignments, depth: int = 0) -> bool:
    """An expression that is one tensor (so ``.detach()`` can be appended): math on torch calls."""
    if depth > 8:
        return False
    if isinstance(node, cst.BinaryOperation):
        return any(surely_tensor(facts, side, assignments, depth + 1) for side in (node.left, node.right))
    if isinstance(node, cst.Call):
        qualified = facts.qualname(node.func) or ""
        if qualified.startswith("torch.") and last_name(qualified) in (
                "mm", "matmul", "bmm", "tanh", "sigmoid", "relu", "cat", "stack", "addmm", "exp", "add", "mul"):
            return True
        return method_name(node) in DERIVING_METHODS and surely_tensor(facts, node.func.value, assignments, depth + 1)
    if isinstance(node, cst.Name):
        values = [value for _, names, value in assignments if node.value in names]
        return len(values) == 1 and values[0] is not None and surely_tensor(facts, values[0], assignments, depth + 1)
    return False


def resettable(facts: Facts, cls_name: str, bindings) -> bool:
    """The class offers its callers a way to reset the state: a ``reset*``/``init_hidden``-like method, or
    the state is built by one of its methods (``self.hidden = self.init_hidden()``, reused as
    ``model.hidden = model.init_hidden()`` in a training script elsewhere)."""
    methods = facts.class_methods(cls_name)
    if any("reset" in m.lower() or ("init" in m.lower() and ("hidden" in m.lower() or "state" in m.lower()))
           for m in methods):
        return True
    return any(isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
               and dotted(value.func.value) == self_name(method) and value.func.attr.value in methods
               for value, method in bindings)


def function_of(facts: Facts, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    if id(node) not in facts.function_of:
        current = parent(node)
        while current is not None and not isinstance(current, cst.FunctionDef):
            current = parent(current)
        facts.function_of[id(node)] = current
    return facts.function_of[id(node)]


def lazy_init(facts: Facts, stmt: cst.CSTNode, key: str) -> bool:
    """``if self.hx is None: self.hx = zeros(...)``: a first-call initialisation, not a reset."""
    current = parent(stmt)
    while current is not None and not isinstance(current, cst.FunctionDef):
        if isinstance(current, cst.If):
            return any(isinstance(n, cst.Comparison) and dotted(n.left) == key and any(
                isinstance(c.operator, cst.Is) and literal(c.comparator) is None for c in n.comparisons)
                for n in running_nodes(current.test))
        current = parent(current)
    return False


