"""Where a backward's values come from (``GraphOrigin``: built inside its loop, or before it) and what
happens to a tensor that requires grad (``Uses``: optimised, differentiated, or only computed with)."""
from __future__ import annotations

from typing import Dict, Iterator, List, Set, Tuple

import libcst as cst

from codemods.hazards.analysis import (COMPREHENSIONS, Chain, Facts, PLAIN_BUILTINS, SCALAR_METHODS, Scope,
                                       bound_targets, covers, is_factory, is_optimizer_call, parameters_of,
                                       requires_grad_source, running_nodes, statement_of)
from codemods.hazards.carry import read_first
from codemods.syntax import argument, method_name
from codemods.torchapi import (DERIVING_METHODS, GRAD_CONSUMERS, GRAD_READERS, IDENTITY_METHODS, MODULE_SELF_METHODS,
                               NO_GRAPH_ATTRIBUTES, NO_GRAPH_TENSOR_METHODS, NOT_MATH, VARIABLE)
from codemods.walk import children, parent




class GraphOrigin:
    """Where the values a backward reads come from, relative to a region (its loop, or its function).

    A value built inside the region is rebuilt for every backward. One built before it shares its graph with
    every backward unless it has none: data, factories, frozen modules, or tensors whose ``requires_grad`` is
    itself a TM607 finding (the seed: ``style`` makes the Gram matrices of a frozen VGG carry a graph).
    """

    NONE, LEAF, GRAPH = 0, 1, 2
    NO_GRAPH_ATTRS = NO_GRAPH_ATTRIBUTES
    SIZE_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "range", "print", "isinstance", "type",
                               "format", "id", "hash", "repr"})

    def __init__(self, facts: Facts, chain: Chain, region: cst.CSTNode):
        self.facts, self.chain, self.region = facts, chain, region
        self.qualname = facts.qualname
        self.uses = Uses(facts)
        body = region.body if isinstance(region, (cst.For, cst.While, cst.FunctionDef)) else region
        self.inside: Dict[str, List[cst.CSTNode]] = {}
        for node in running_nodes(body):
            for target, value in region_bindings(node):
                for bound in bound_targets(target):
                    if isinstance(bound, cst.Name):
                        self.inside.setdefault(bound.value, []).append(value)
        self.parts = [region.test, region.body] if isinstance(region, cst.While) else [body]
        self.memo: Dict[Tuple[int, str], int] = {}

    # -- the values read inside the region --------------------------------------------------------
    def free_names(self, receiver: cst.CSTNode) -> Set[str]:
        """Names the receiver is computed from that hold values from before the region."""
        free: Set[str] = set()
        seen: Set[str] = set()
        todo = list(self.data_names(receiver))
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            values = self.inside.get(name)
            if not values or read_first(self.facts, self.parts, name):
                free.add(name)
            for value in values or ():
                todo.extend(self.data_names(value))
        return free

    def data_names(self, node: cst.CSTNode) -> Set[str]:
        """Names whose values flow into ``node`` (not callees, not sizes and other arguments of factories)."""
        if isinstance(node, cst.Name):
            return {node.value}
        if isinstance(node, cst.Attribute):
            return set() if node.attr.value in self.NO_GRAPH_ATTRS else self.data_names(node.value)
        if isinstance(node, (cst.Lambda, cst.SimpleString, cst.FormattedString)):
            return set()
        if isinstance(node, cst.Call):
            if self._fresh(node):
                return set()
            names: Set[str] = set()
            if isinstance(node.func, cst.Attribute) and self.facts.callee(node.func, self.chain) != "module" and (
                    self.qualname(node.func) is None):
                names |= self.data_names(node.func.value)
            for arg in node.args:
                names |= self.data_names(arg.value)
            return names
        names = set()
        for child in children(node):
            names |= self.data_names(child)
        if isinstance(node, COMPREHENSIONS):
            comp = node.for_in
            while comp is not None:
                names -= {t.value for t in bound_targets(comp.target) if isinstance(t, cst.Name)}
                comp = comp.inner_for_in
        return names

    def _fresh(self, call: cst.Call) -> bool:
        """A call whose result carries no graph from its arguments (factories, sizes, no-grad methods)."""
        qualified = self.qualname(call.func) or ""
        method = method_name(call)
        return (is_factory(qualified) and argument(call, "requires_grad") is None) or (
            isinstance(call.func, cst.Name) and call.func.value in self.SIZE_BUILTINS and qualified == "") or (
            method in NO_GRAPH_TENSOR_METHODS or method in SCALAR_METHODS) and qualified == ""

    # -- the values from before the region ------------------------------------------------------------
    def outside(self, name: str) -> int:
        scope = self.facts.resolve(name, self.chain)
        key = (id(scope), name)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = self.NONE
        if isinstance(scope, (cst.FunctionDef, cst.Lambda)) and scope is not self.chain[0]:
            result = self.GRAPH  # a closure's variable: the enclosing call may reuse it
        else:
            result = self.NONE
            for kind, value, where in self.facts.binds.get(key, []):
                if kind == "param" or kind not in ("value", "unpack", "aug", "for", "with", "comp", "import",
                                                   "def", "class"):
                    result = self.GRAPH
                elif kind in ("value", "unpack", "aug", "for", "with") and not self._within_region(where):
                    result = max(result, self.status(value, scope, name) if value is not None else self.GRAPH)
            if any(n == name and self._legit(scope, name) for n in self._statement_sites(scope)):
                result = max(result, self.LEAF)
        self.memo[key] = result
        return result

    def _within_region(self, node: cst.CSTNode) -> bool:
        """Inside the region's body (the loop's own target takes its values from before the loop)."""
        current = parent(node)
        while current is not None:
            if current is self.region:
                return not isinstance(self.region, (cst.FunctionDef, cst.Module))
            current = parent(current)
        return False

    def _statement_sites(self, scope: Scope) -> List[str]:
        return [name for stmt, name in self.facts.requires_grad_statements
                if statement_of(self.facts, stmt) is not None and self.facts.chain(stmt)[0] is scope]

    def _legit(self, scope: Scope, name: str) -> bool:
        return self.uses.name_outcome(scope, name) != Uses.NEUTRAL

    def status(self, node: cst.CSTNode, scope: Scope, bound: str) -> int:
        """NONE, LEAF (a leaf whose gradient is wanted) or GRAPH (a result with history) for ``node``."""
        if isinstance(node, cst.Name):
            return self.outside(node.value)
        if isinstance(node, cst.Call):
            return self._call(node, scope, bound)
        if isinstance(node, cst.Attribute):
            return self.NONE if node.attr.value in self.NO_GRAPH_ATTRS else self.status(node.value, scope, bound)
        if isinstance(node, (cst.Lambda, cst.SimpleString, cst.FormattedString, cst.Integer, cst.Float)):
            return self.NONE
        parts = [self.status(child, scope, bound) for child in children(node)
                 if isinstance(child, cst.BaseExpression) or isinstance(child, (cst.Element, cst.Arg, cst.CompFor))]
        top = max(parts, default=self.NONE)
        return self.GRAPH if top == self.LEAF and isinstance(node, (cst.BinaryOperation, cst.UnaryOperation,
                                                                      cst.Subscript)) else top

    def _call(self, call: cst.Call, scope: Scope, bound: str) -> int:
        if requires_grad_source(self.facts, call):
            return self.LEAF if self._legit(scope, bound) else self.NONE
        if self._fresh(call) or (self.qualname(call.func) or "") in VARIABLE:
            return self.NONE
        args = max((self.status(a.value, scope, bound) for a in call.args), default=self.NONE)
        func = call.func
        qualified = self.qualname(func)
        callee = self.facts.callee(func, self.facts.chain(scope))
        if callee == "module":
            return self.GRAPH if self._trainable(func) or args else self.NONE
        if qualified is not None:
            return (self.GRAPH if args else self.NONE) if qualified.startswith("torch.") else self.GRAPH
        if isinstance(func, cst.Attribute):
            receiver = self.status(func.value, scope, bound)
            if method_name(call) in IDENTITY_METHODS:
                return receiver
            return self.GRAPH if receiver or args else (self.GRAPH if method_name(call) not in DERIVING_METHODS
                                                        else self.NONE)
        if isinstance(func, cst.Name):
            if func.value in PLAIN_BUILTINS or func.value in ("next", "iter", "zip", "enumerate", "list", "tuple"):
                return args
            if callee == "function":
                return self.GRAPH if args else self.NONE
            if func.value in self.facts.module_classes or self.facts.constructs_module(call):
                return self.NONE  # constructing a module
        return self.GRAPH

    def _trainable(self, func: cst.CSTNode) -> bool:
        """A called module that may have parameters requiring grad (not frozen by the file)."""
        if isinstance(func, cst.Name):
            if covers(self.facts.freeze_paths, func.value) or self.facts.freeze_all:
                return False
            for kind, value, _ in self.facts.bindings(func.value, self.chain):
                while method_name(value) in MODULE_SELF_METHODS:
                    value = value.func.value
                if kind == "value" and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and (
                        value.func.value in self.facts.module_classes) and self.facts.class_freezes.get(
                        value.func.value):
                    return False
        return not self.facts.frozen(func, self.facts._method_class(self.chain)) if isinstance(
            func, cst.Attribute) else True


def region_bindings(node: cst.CSTNode) -> Iterator[Tuple[cst.CSTNode, cst.CSTNode]]:
    """(target, value) for a binding statement: assignments, loop targets (their iterable), with targets."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield target.target, node.value
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
        yield node.target, node.value
    elif isinstance(node, (cst.For, cst.CompFor)):
        yield node.target, node.iter
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        yield node.asname.name, node.item


class Uses:
    """Classifies what happens to a tensor after ``requires_grad`` is set on it.

    ``USED``: its gradient is wanted (``.grad``, a hook, an optimizer, ``torch.autograd``), directly or through
    a value computed from it. ``ESCAPES``: it leaves what the file shows (returned, stored, passed on).
    ``NEUTRAL``: only math, module calls and rebinding. Values computed from it are non-leaves, so for them
    only gradient reads count.
    """

    USED, NEUTRAL, ESCAPES = "used", "neutral", "escapes"
    # results that carry nothing of the tensor's gradient (``requires_grad_`` is followed to its result)
    NO_GRAD_RESULTS = frozenset({"detach", "size", "dim", "numel", "item", "tolist", "numpy", "data_ptr",
                                 "requires_grad_"})

    def __init__(self, facts: Facts):
        self.facts = facts
        self.qualname = facts.qualname
        self.visiting: Set[Tuple[int, str, bool]] = set()

    def name_outcome(self, scope: Scope, name: str, depth: int = 0, derived: bool = False) -> str:
        """The strongest outcome over every use of ``name`` bound in ``scope``."""
        key = (id(scope), name, derived)
        if key in self.visiting or depth > 6:
            return self.NEUTRAL if derived else self.ESCAPES
        self.visiting.add(key)
        try:
            outcomes = set()
            for use, chain in self.facts.uses.get((id(scope), name), []):
                if chain[0] is not scope:
                    outcomes.add(self.NEUTRAL if derived else self.ESCAPES)  # a closure or another function
                else:
                    outcomes.add(self.use(use, name, chain, depth, derived))
            for outcome in (self.USED, self.ESCAPES):
                if outcome in outcomes:
                    return outcome
            return self.NEUTRAL
        finally:
            self.visiting.discard(key)

    def use(self, node: cst.CSTNode, name: str, chain: Chain, depth: int, derived: bool) -> str:
        """What happens to ``node``, the tensor itself or (``derived``) a value computed from it."""
        other = self.NEUTRAL if derived else self.ESCAPES
        up = parent(node)
        if isinstance(up, cst.Attribute) and up.value is node:
            grand = parent(up)
            if isinstance(grand, cst.AssignTarget):
                return self.NEUTRAL  # x.requires_grad = True, x.grad = None
            if up.attr.value in GRAD_READERS:
                return self.USED
            if not (isinstance(grand, cst.Call) and grand.func is up):
                return self.NEUTRAL  # .shape, .data, .requires_grad, .device
            method = up.attr.value
            if method in self.NO_GRAD_RESULTS:
                return self.NEUTRAL if method != "requires_grad_" else self.use(grand, name, chain, depth, derived)
            return self.use(grand, name, chain, depth, derived or method not in IDENTITY_METHODS)
        if isinstance(up, cst.Arg):
            call = parent(up)
            return self._argument(call, up, name, chain, depth, derived) if isinstance(call, cst.Call) else other
        if isinstance(up, (cst.BinaryOperation, cst.UnaryOperation)) or (
                isinstance(up, cst.Subscript) and up.value is node):
            return self.use(up, name, chain, depth, True)
        if isinstance(up, cst.CompFor) and up.iter is node:
            comprehension = up
            while not isinstance(comprehension, COMPREHENSIONS):
                comprehension = parent(comprehension)
            return self.use(comprehension, name, chain, depth, True)
        if isinstance(up, cst.IfExp) and node is not up.test:
            return self.use(up, name, chain, depth, derived)
        if isinstance(up, (cst.Index, cst.SubscriptElement)):
            return other  # a key: grads[t] reads its gradient from a dict
        if isinstance(up, (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.IfExp,
                               cst.FormattedStringExpression, cst.Expr, cst.Del)):
            return self.NEUTRAL
        if isinstance(up, (cst.Assign, cst.AugAssign)) and up.value is node:
            targets = [t.target for t in up.targets] if isinstance(up, cst.Assign) else [up.target]
            if not all(isinstance(t, cst.Name) for t in targets):
                return other
            outcomes = {self.NEUTRAL if t.value == name and not isinstance(up, cst.AugAssign) else
                        self.name_outcome(self.facts.resolve(t.value, chain), t.value, depth + 1, derived)
                        for t in targets}
            return self.USED if self.USED in outcomes else (other if self.ESCAPES in outcomes else self.NEUTRAL)
        return other

    def _argument(self, call: cst.Call, arg: cst.Arg, name: str, chain: Chain, depth: int, derived: bool) -> str:
        other = self.NEUTRAL if derived else self.ESCAPES
        qualified = self.qualname(call.func)
        if (qualified or "").startswith(GRAD_CONSUMERS) or is_optimizer_call(
                self.facts, call):
            return self.USED
        if qualified is not None:
            if qualified.startswith("torch.") and not qualified.startswith(NOT_MATH):
                return self.use(call, name, chain, depth, True)
            return other
        if isinstance(call.func, cst.Name) and call.func.value in PLAIN_BUILTINS and call.func.value not in (
                "min", "max", "sum"):
            return self.NEUTRAL
        callee = self.facts.callee(call.func, chain)
        if callee == "module":
            if self.facts.input_gradients and not derived:
                return self.ESCAPES  # the model may differentiate with respect to its input (a PINN's forward)
            return self.use(call, name, chain, depth, True)
        if callee == "function" and isinstance(call.func, cst.Name):
            outcome = self._local_function(call, arg, chain, depth, derived)
            return self.NEUTRAL if derived and outcome == self.ESCAPES else outcome
        return other

    def _local_function(self, call: cst.Call, arg: cst.Arg, chain: Chain, depth: int, derived: bool) -> str:
        defs = [v for k, v, _ in self.facts.bindings(call.func.value, chain) if k == "def"]
        if len(defs) != 1 or arg.star or any(a.star for a in call.args):
            return self.ESCAPES
        function = defs[0]
        params = function.params.params
        if arg.keyword is not None:
            matches = [p for p in parameters_of(function.params) if p.name.value == arg.keyword.value]
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            matches = [params[index]] if index < len(params) else []
        if len(matches) != 1:
            return self.ESCAPES
        return self.name_outcome(function, matches[0].name.value, depth + 1, derived)


