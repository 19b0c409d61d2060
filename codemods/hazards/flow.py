"""The hazards family's flow analysis: each scope's statements in order, tracking what names certainly are
(a leaf that requires grad, a result with history, a module, parameters), and recording in-place writes to
leaves (TM602), ``.grad`` of non-leaves (TM606) and ``list(tensor)`` (TM603)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from codemods.base import FileContext
from codemods.hazards.analysis import (COMPREHENSIONS, Chain, Facts, _INERT, blocks, bound_targets, grad_switch,
                                       hazard_facts, is_class_name, is_factory, last_name, running_nodes, self_name,
                                       statements)
from codemods.names import dotted
from codemods.syntax import argument, code, literal, method_name
from codemods.torchapi import (DERIVING_METHODS, GRAD_SWITCH, IDENTITY_METHODS, INPLACE_METHODS, LAYER_PARAMS,
                               MODULE_SELF_METHODS, NOT_MATH, NO_GRAPH_TENSOR_METHODS, PARAMETER, PARAMETER_MODULES,
                               RNN_LAYERS, VARIABLE)
from codemods.walk import children




# ---------------------------------------------------------------------------
# Values, statement by statement (TM602, TM603, TM606)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Val:
    """What an expression certainly is.

    kind: ``tensor`` (certainly one tensor), ``value`` (a result with a known autograd status that may be a
    tuple), ``module``, ``params`` (an iterable of parameters), ``named`` (``named_parameters()``), ``groups``
    (``optimizer.param_groups``), ``group`` (one of them).
    grad (tensor/value): ``no`` (no grad, so a leaf), ``leaf`` (a leaf that requires grad), ``graph`` (a result
    with history), ``""`` (not known). cls (module): the torch.nn class or the local class name.
    """

    kind: str
    grad: str = ""
    cls: str = ""


PARAM = Val("tensor", "leaf")
NO_GRAD_TENSOR = Val("tensor", "no")
NOGRAD_KEY = ""  # env entry: True = grad off, False = grad on, None = not known


Env = Dict[str, Optional[Val]]
_PENDING = Val("pending")  # ``_class_attr``'s memo for an attribute being computed
_COMPREHENSIONS = frozenset(COMPREHENSIONS)


def _meet(a: Env, b: Env) -> Env:
    return {key: a[key] for key in a if key in b and a[key] == b[key]}


class Flow:
    """Follows each scope's statements in order, tracking what names certainly are, and records
    in-place writes to leaves, ``.grad`` reads of non-leaves and ``list(...)`` of tensors.

    Nodes are told apart by ``type(node) is cst.X``: libcst's node classes are final, and ``isinstance``
    through their ``ABCMeta`` was a sizeable share of the whole analysis."""

    def __init__(self, facts: Facts):
        self.facts = facts
        self.qualname = facts.qualname
        self.inplace: List[Tuple[cst.CSTNode, Optional[cst.SimpleStatementLine], str]] = []
        self.nonleaf_grads: List[Tuple[cst.Attribute, str]] = []
        self.tensors: Dict[int, cst.CSTNode] = {}  # list(...) calls / starred elements over a certain tensor
        self.module_env: Env = {}
        self._class_memo: Dict[Tuple[str, str], Optional[Val]] = {}
        self.chain: Chain = (facts.module,)
        self.owner: Optional[cst.ClassDef] = None
        self.statement: Optional[cst.SimpleStatementLine] = None
        self.live = facts.running("flow", lambda: [
            *(call for call in facts.calls if method_name(call) in INPLACE_METHODS or (
                type(call.func) is cst.Name and call.func.value == "list")), *facts.flow_nodes])
        self.cyclic = False  # a class attribute's value was asked while it was being computed
        self.module_env = self._scope(facts.module, (facts.module,), {NOGRAD_KEY: False})
        functions = [function for function in facts.functions if id(function) in self.live]
        if len(functions) < len(facts.functions) and not self._classes_acyclic():
            functions = facts.functions  # the other scopes record nothing, but their order settles the classes'
        for function in functions:
            chain = facts.chain(function)
            env: Env = {NOGRAD_KEY: facts.function_nograd(function) or any(
                isinstance(s, cst.FunctionDef) and facts.function_nograd(s) for s in chain[1:])}
            owner = facts.class_of.get(id(function))
            if owner is not None and owner.name.value in facts.module_classes and self_name(function) != "\0":
                env[self_name(function)] = Val("module", cls=owner.name.value)
            self._scope(function.body, chain, env)

    def _scope(self, body: cst.CSTNode, chain: Chain, env: Env) -> Env:
        saved = self.chain, self.owner
        self.chain, self.owner = chain, self.facts._method_class(chain)
        stmts = body.body if isinstance(body, cst.Module) else statements(body)
        env = self._block(stmts, env, True)
        self.chain, self.owner = saved
        return env

    # -- statements -------------------------------------------------------------------
    def _block(self, stmts: Sequence[cst.CSTNode], env: Env, record: bool) -> Env:
        for stmt in stmts:
            env = self._statement(stmt, env, record)
        return env

    def _statement(self, stmt: cst.CSTNode, env: Env, record: bool) -> Env:
        if type(stmt) in (cst.SimpleStatementLine, cst.SimpleStatementSuite):
            env = dict(env)
            for small in stmt.body:
                self.statement = stmt if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 else None
                self._small(small, env, record)
            return env
        if type(stmt) in (cst.FunctionDef, cst.ClassDef):
            env = dict(env)
            env.pop(stmt.name.value, None)
            return env
        if type(stmt) is cst.If:
            self._scan(stmt.test, env, record)
            then_env = dict(env)
            for name, val in self._guards(stmt.test, env):
                then_env[name] = val
            after_then = self._block(statements(stmt.body), then_env, record)
            if type(stmt.orelse) is cst.If:
                after_else = self._statement(stmt.orelse, env, record)
            elif type(stmt.orelse) is cst.Else:
                after_else = self._block(statements(stmt.orelse.body), env, record)
            else:
                after_else = env
            return _meet(after_then, after_else)
        if type(stmt) in (cst.For, cst.While):
            return self._loop(stmt, env, record)
        if type(stmt) is cst.With:
            modes = [grad_switch(self.qualname, item.item) for item in stmt.items]
            for item in stmt.items:
                self._scan(item.item, env, record)
            inner = dict(env)
            if False in modes:
                inner[NOGRAD_KEY] = True
            elif ... in modes:
                inner[NOGRAD_KEY] = None
            elif True in modes:
                inner[NOGRAD_KEY] = False
            for item in stmt.items:
                if item.asname is not None:
                    for target in bound_targets(item.asname.name):
                        inner.pop(dotted(target) or "", None)
            after = self._block(statements(stmt.body), inner, record)
            after[NOGRAD_KEY] = env.get(NOGRAD_KEY)
            return after
        if type(stmt) in (cst.Try, cst.TryStar):
            after = self._block(statements(stmt.body), env, record)
            merged = _meet(env, after)
            for handler in stmt.handlers:
                merged = _meet(merged, self._block(statements(handler.body), merged, record))
            if stmt.orelse is not None:
                after = self._block(statements(stmt.orelse.body), after, record)
                merged = _meet(merged, after)
            if stmt.finalbody is not None:
                merged = self._block(statements(stmt.finalbody.body), merged, record)
            return merged
        # match statements and anything new: forget what the blocks bind
        env = dict(env)
        for block in blocks(stmt):
            for inner in running_nodes(block):
                if type(inner) is cst.Name:
                    env.pop(inner.value, None)
        return env

    def _loop(self, stmt: Union[cst.For, cst.While], env: Env, record: bool) -> Env:
        head = stmt.iter if isinstance(stmt, cst.For) else stmt.test
        self._scan(head, env, record)
        body = statements(stmt.body)

        def enter(start: Env) -> Env:
            start = dict(start)
            if isinstance(stmt, cst.For):
                self._bind_iteration(stmt.target, stmt.iter, start)
            return start

        first = self._block(body, enter(env), False)
        entry = _meet(env, first)
        end = self._block(body, enter(entry), record)
        after = _meet(env, end)
        if stmt.orelse is not None:
            after = self._block(statements(stmt.orelse.body), after, record)
        return after

    def _bind_iteration(self, target: cst.CSTNode, iterable: cst.CSTNode, env: Env) -> None:
        """Bind a for target from what its iterable yields (parameters, param groups)."""
        source = self.ev(iterable, env)
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in (
                "zip", "enumerate") and isinstance(target, (cst.Tuple, cst.List)):
            items = [a.value for a in iterable.args]
            if iterable.func.value == "enumerate":
                items = [None, items[0]] if items else []
            elements = [e.value for e in target.elements]
            if len(items) == len(elements) and not any(isinstance(e, cst.StarredElement) for e in target.elements):
                for element, item in zip(elements, items):
                    if item is None:
                        self._assign(element, None, env)
                    else:
                        self._bind_iteration(element, item, env)
                return
        if source is not None and source.kind == "params":
            self._assign(target, PARAM, env)
        elif source is not None and source.kind == "named" and isinstance(target, (cst.Tuple, cst.List)) and len(
                target.elements) == 2:
            self._assign(target.elements[0].value, None, env)
            self._assign(target.elements[1].value, PARAM, env)
        elif source is not None and source.kind == "groups":
            self._assign(target, Val("group"), env)
        else:
            self._assign(target, None, env)

    def _guards(self, test: cst.CSTNode, env: Env) -> List[Tuple[str, Val]]:
        """``isinstance(m, nn.Linear)``, ``type(m) == nn.Linear``, ``classname.find('Conv') != -1``."""
        found: List[Tuple[str, Val]] = []
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._guards(test.left, env) + self._guards(test.right, env)
        if isinstance(test, cst.Call) and dotted(test.func) == "isinstance" and len(test.args) == 2:
            subject, classes = test.args[0].value, test.args[1].value
            options = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
            layer = self._common_layer(options)
            if layer and isinstance(subject, cst.Name):
                found.append((subject.value, Val("module", cls=layer)))
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            left, right = test.left, test.comparisons[0].comparator
            operator = test.comparisons[0].operator
            if (isinstance(left, cst.Call) and dotted(left.func) == "type" and len(left.args) == 1
                    and isinstance(left.args[0].value, cst.Name)):
                options = [e.value for e in right.elements] if isinstance(right, (cst.Tuple, cst.List)) else [right]
                layer = self._common_layer(options)
                if layer and isinstance(operator, (cst.Equal, cst.Is, cst.In)):
                    found.append((left.args[0].value.value, Val("module", cls=layer)))
            subject = self._classname_subject(left, right, operator)
            if subject is not None:
                found.append(subject)
        return found

    def _common_layer(self, options: Sequence[cst.CSTNode]) -> str:
        """One torch.nn layer name standing for all the options when they share their parameter names."""
        layers = {last_name(self.qualname(o)) for o in options if (self.qualname(o) or "").startswith("torch.nn.")}
        if len(layers) != len(options) or not layers:
            return ""
        attrs = {LAYER_PARAMS.get(layer) for layer in layers}
        return sorted(layers)[0] if len(attrs) == 1 and None not in attrs else ""

    def _classname_subject(self, left, right, operator) -> Optional[Tuple[str, Val]]:
        """DCGAN's ``classname.find('Conv') != -1`` with ``classname = m.__class__.__name__``."""
        if not (method_name(left) == "find" and isinstance(operator, cst.NotEqual) and literal(right) == -1):
            return None
        word = left.args[0].value if left.args else None
        if not isinstance(word, cst.SimpleString) or not isinstance(left.func.value, cst.Name):
            return None
        prefix = word.evaluated_value
        layers = [name for name in LAYER_PARAMS if name.startswith(prefix)] if isinstance(prefix, str) else []
        if not prefix or not layers or len({LAYER_PARAMS[layer] for layer in layers}) != 1:
            return None
        binds = self.facts.bindings(left.func.value.value, self.chain)
        if len(binds) != 1 or binds[0][0] != "value":
            return None
        source = dotted(binds[0][1]) or ""
        owner = source[:-len(".__class__.__name__")] if source.endswith(".__class__.__name__") else ""
        if not owner or "." in owner:
            return None
        return owner, Val("module", cls=layers[0])

    def _small(self, small: cst.CSTNode, env: Env, record: bool) -> None:
        if type(small) is cst.Assign:
            self._scan(small.value, env, record)
            for target in small.targets:
                self._scan_target(target.target, env, record)
            value = self.ev(small.value, env)
            for target in small.targets:
                self._assign(target.target, value, env, small.value)
            for target in small.targets:
                self._requires_grad_assign(target.target, small.value, env)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:
                self._scan(small.value, env, record)
                self._assign(small.target, self.ev(small.value, env), env, small.value)
        elif type(small) is cst.AugAssign:
            self._scan(small.value, env, record)
            self._scan_target(small.target, env, record, augmented=True)
        elif type(small) is cst.Expr:
            self._scan(small.value, env, record)
            self._effects(small.value, env)
        elif type(small) is cst.Del:
            for target in bound_targets(small.target):
                env.pop(dotted(target) or "", None)
        elif type(small) in (cst.Import, cst.ImportFrom):
            if type(small.names) is not cst.ImportStar:
                for alias in small.names:
                    local = alias.asname.name if alias.asname else alias.name
                    env.pop(dotted(local) or "", None)
        else:
            for child in children(small):
                self._scan(child, env, record)

    def _effects(self, expr: cst.CSTNode, env: Env) -> None:
        """Statements that change what a name is: ``x.requires_grad_()``, ``torch.set_grad_enabled(False)``."""
        if not isinstance(expr, cst.Call):
            return
        mode = grad_switch(self.qualname, expr)
        if mode is not None and self.qualname(expr.func) in GRAD_SWITCH:
            env[NOGRAD_KEY] = None if mode is ... else not mode
        if method_name(expr) == "requires_grad_" and isinstance(expr.func.value, cst.Name):
            name = expr.func.value.value
            env[name] = self.ev(expr, env)

    def _requires_grad_assign(self, target: cst.CSTNode, value: cst.CSTNode, env: Env) -> None:
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad" and isinstance(
                target.value, cst.Name):
            name = target.value.value
            current = env.get(name)
            flag = literal(value)
            if current is not None and current.kind == "tensor" and current.grad in ("no", "leaf"):
                env[name] = PARAM if flag is True else (NO_GRAD_TENSOR if flag is False else Val("tensor"))
            elif current is not None and flag is not True:
                env[name] = None

    def _assign(self, target: cst.CSTNode, value: Optional[Val], env: Env, expr: Optional[cst.CSTNode] = None) -> None:
        if type(target) is cst.Name:
            env[target.value] = value
        elif type(target) in (cst.Tuple, cst.List):
            elements = [e.value for e in target.elements]
            sources = [e.value for e in expr.elements] if type(expr) in (cst.Tuple, cst.List) else None
            for index, element in enumerate(elements):
                if sources is not None and len(sources) == len(elements) and not isinstance(
                        target.elements[index], cst.StarredElement):
                    self._assign(element, self.ev(sources[index], env), env, sources[index])
                elif value is not None and value.kind == "value" and type(element) is not cst.StarredElement:
                    self._assign(element, value, env)
                else:
                    self._assign(element, None, env)
        elif type(target) is cst.StarredElement:
            self._assign(target.value, None, env)
        elif type(target) is cst.Attribute:
            name = dotted(target)
            for key in [k for k in env if k and name and (k == name or k.startswith(name + "."))]:
                del env[key]

    # -- expressions: events -------------------------------------------------------------
    def _scan_target(self, target: cst.CSTNode, env: Env, record: bool, augmented: bool = False) -> None:
        if type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                self._scan_target(element.value, env, record)
            return
        if type(target) is cst.StarredElement:
            self._scan_target(target.value, env, record)
            return
        if type(target) is cst.Subscript:
            self._scan(target.value, env, record)
            for element in target.slice:
                self._scan(element, env, record)
            self._inplace(target, target.value, env, record, "item assignment")
        elif type(target) is cst.Attribute:
            self._scan(target.value, env, record)
            if augmented:
                self._inplace(target, target, env, record, "augmented assignment")
        elif type(target) is cst.Name and augmented:
            self._inplace(target, target, env, record, "augmented assignment")

    def _scan(self, node: cst.CSTNode, env: Env, record: bool) -> None:
        kind = type(node)  # not isinstance: every expression of the file comes here, and node classes are final
        if kind in _INERT or id(node) not in self.live:
            return  # nothing under it to record or bind
        if kind in _COMPREHENSIONS:
            inner = dict(env)
            comp: Optional[cst.CompFor] = node.for_in
            while comp is not None:
                self._scan(comp.iter, inner, record)
                self._bind_iteration(comp.target, comp.iter, inner)
                for condition in comp.ifs:
                    self._scan(condition.test, inner, record)
                comp = comp.inner_for_in
            for part in ("elt", "key", "value"):
                if getattr(node, part, None) is not None:
                    self._scan(getattr(node, part), inner, record)
            return
        if kind is cst.Call:
            method = method_name(node)
            if method in INPLACE_METHODS:
                self._inplace(node, node.func.value, env, record, f"`.{method}()`")
            if (type(node.func) is cst.Name and node.func.value == "list" and len(node.args) == 1
                    and not node.args[0].star and self._is_tensor(node.args[0].value, env)):
                self.tensors[id(node)] = node
        elif kind is cst.List or kind is cst.Tuple or kind is cst.Set:
            for element in node.elements:
                if type(element) is cst.StarredElement and self._is_tensor(element.value, env):
                    self.tensors[id(element)] = element
        elif kind is cst.Attribute and node.attr.value == "grad" and type(node.value) is cst.Name:
            value = self.ev(node.value, env)
            if record and value is not None and value.grad == "graph":
                self.nonleaf_grads.append((node, node.value.value))
        for child in children(node):
            self._scan(child, env, record)

    def _is_tensor(self, node: cst.CSTNode, env: Env) -> bool:
        value = self.ev(node, env)
        return value is not None and value.kind == "tensor"

    def _inplace(self, node: cst.CSTNode, target: cst.CSTNode, env: Env, record: bool, what: str) -> None:
        if record and env.get(NOGRAD_KEY) is False and self._leaf(target, env):
            self.inplace.append((node, self.statement, f"{what} on `{code(target)}`"))

    def _leaf(self, target: cst.CSTNode, env: Env) -> bool:
        value = self.ev(target, env)
        if value is not None and value.kind == "tensor" and value.grad == "leaf":
            return True
        if isinstance(target, cst.Subscript):  # a view of a leaf
            return self._leaf(target.value, env)
        return False

    # -- expressions: values -------------------------------------------------------------
    def ev(self, node: cst.CSTNode, env: Env) -> Optional[Val]:
        nograd = env.get(NOGRAD_KEY)
        kind = type(node)
        if kind is cst.Name:
            if node.value in env:
                return env[node.value]
            scope = self.facts.resolve(node.value, self.chain)
            if scope is self.facts.module and scope is not self.chain[0]:
                if len(self.facts.binds.get((id(scope), node.value), [])) == 1:
                    return self.module_env.get(node.value)
            return None
        if kind is cst.Attribute:
            return self._attribute(node, env)
        if kind is cst.Call:
            return self._call(node, env)
        if kind is cst.Subscript:
            base = self.ev(node.value, env)
            if base is None:
                return None
            if base.kind == "params":
                return PARAM
            if base.kind == "group":
                index = node.slice[0].slice if len(node.slice) == 1 else None
                if type(index) is cst.Index and type(index.value) is cst.SimpleString and (
                        index.value.evaluated_value == "params"):
                    return Val("params")
                return None
            if base.kind in ("tensor", "value"):
                return Val(base.kind, derived(base.grad, nograd))
            return None
        if kind is cst.BinaryOperation:
            return self._combine([node.left, node.right], env, "tensor")
        if kind is cst.UnaryOperation and type(node.operator) is not cst.Not:
            operand = self.ev(node.expression, env)
            if operand is not None and operand.kind in ("tensor", "value"):
                return Val(operand.kind, derived(operand.grad, nograd))
            return None
        if kind is cst.IfExp:
            body, orelse = self.ev(node.body, env), self.ev(node.orelse, env)
            return body if body == orelse else None
        return None

    def _combine(self, operands: Sequence[cst.CSTNode], env: Env, kind: str) -> Optional[Val]:
        """The result of tensor math on ``operands``."""
        values = [self.ev(operand, env) for operand in operands]
        tensors = [v for v in values if v is not None and v.kind in ("tensor", "value")]
        if not tensors or any(isinstance(o, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))
                              for o in operands):
            return None
        kind = kind if any(v.kind == "tensor" for v in tensors) else "value"
        nograd = env.get(NOGRAD_KEY)
        if nograd is True:
            return Val(kind, "no")
        if any(v.grad in ("leaf", "graph") for v in tensors):
            return Val(kind, "graph" if nograd is False else "")
        plain = all(v is not None and (v.grad == "no" or v.kind not in ("tensor", "value")) or
                    isinstance(literal(o), (int, float)) for v, o in zip(values, operands))
        return Val(kind, "no" if plain else "")

    def _attribute(self, node: cst.Attribute, env: Env) -> Optional[Val]:
        attr = node.attr.value
        name = dotted(node)
        if name and name in env:
            return env[name]
        base = self.ev(node.value, env)
        if attr == "data":
            return NO_GRAD_TENSOR if base is not None and base.kind == "tensor" else None
        if attr == "param_groups":
            return Val("groups")
        if base is None:
            return None
        if attr in ("T", "mT", "H") and base.kind == "tensor":
            return Val("tensor", derived(base.grad, env.get(NOGRAD_KEY)))
        if base.kind != "module" or self.facts.frozen(node.value, self.owner):
            return None
        params = LAYER_PARAMS.get(base.cls, ())
        if attr in params or (base.cls in RNN_LAYERS and attr.startswith(("weight_", "bias_"))):
            return PARAM
        if base.cls in self.facts.classes:
            return self._class_attr(base.cls, attr)
        return None

    def _classes_acyclic(self) -> bool:
        """Whether the local classes' attributes are valued without a cycle among them. ``_class_attr``
        answers ``None`` for an attribute still being computed, so only a cycle makes a value depend on which
        scope asks first; without one, the scopes that record nothing need not be followed (what the classes
        are worth is then the same whatever asks). Each attribute with bindings is valued here, once, and kept
        unless a cycle turns up; a class that reaches a local base twice (diamonds, base cycles) is not looked
        into."""
        lineages: Dict[str, List[str]] = {}
        for cls_name in self.facts.classes:
            lineage = lineages[cls_name] = []
            todo = [cls_name]
            while todo:
                name = todo.pop()
                if name in lineage:
                    return False
                lineage.append(name)
                todo.extend(dotted(b.value) for b in self.facts.classes[name].bases
                            if dotted(b.value) in self.facts.classes)
        attrs: Dict[str, Set[str]] = {}
        for cls_name, attr in self.facts.self_attrs:
            attrs.setdefault(cls_name, set()).add(attr)
        saved = dict(self._class_memo)
        for cls_name, lineage in lineages.items():
            for name in lineage:
                for attr in attrs.get(name, ()):
                    self._class_attr(cls_name, attr)
        if self.cyclic:
            self._class_memo = saved
        return not self.cyclic

    def _class_attr(self, cls_name: str, attr: str) -> Optional[Val]:
        key = (cls_name, attr)
        if key in self._class_memo:
            found = self._class_memo[key]
            if found is _PENDING:
                self.cyclic = True
                return None
            return found
        self._class_memo[key] = _PENDING
        bindings = self.facts._class_attr_bindings(cls_name, attr)
        if not bindings or self.facts.class_frozen(cls_name, "self." + attr):
            self._class_memo[key] = None
            return None
        saved = self.chain, self.owner
        values = []
        for value, method in bindings:
            self.chain, self.owner = self.facts.chain(method), self.facts.class_of.get(id(method))
            values.append(self.ev(value, {NOGRAD_KEY: None}) if value is not None else None)
        self.chain, self.owner = saved
        result = values[0] if all(v == values[0] for v in values) else None
        self._class_memo[key] = result
        return result

    def has_params(self, cls_name: str) -> bool:
        """A local module class with a parameter of its own or in a layer it holds (never frozen)."""
        if self.facts.class_freezes.get(cls_name) or self.facts.freeze_all:
            return False
        attrs = {attr for (name, attr) in self.facts.self_attrs if name == cls_name}
        for attr in attrs:
            value = self._class_attr(cls_name, attr)
            if value == PARAM or (value is not None and value.kind == "module" and (
                    value.cls in PARAMETER_MODULES or (value.cls in self.facts.classes and value.cls != cls_name
                                                  and self.has_params(value.cls)))):
                return True
        return False

    def _call(self, node: cst.Call, env: Env) -> Optional[Val]:
        nograd = env.get(NOGRAD_KEY)
        qualified = self.qualname(node.func)
        if qualified is not None:
            flag = argument(node, "requires_grad")
            wanted = literal(flag.value) if flag is not None else False
            if is_factory(qualified) or qualified in VARIABLE:
                return Val("tensor", "leaf" if wanted is True else ("no" if wanted is False else ""))
            if qualified in PARAMETER:
                flag = argument(node, "requires_grad", 1)
                wanted = literal(flag.value) if flag is not None else True
                return Val("tensor", "leaf" if wanted is True else ("no" if wanted is False else ""))
            last = last_name(qualified)
            if qualified.startswith("torch.nn.") and is_class_name(last) and not qualified.startswith(
                    ("torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.parameter")):
                return Val("module", cls=last)
            if qualified.startswith("torch.") and not qualified.startswith(NOT_MATH) and not is_class_name(last):
                args = [a.value for a in node.args if not a.star]
                flat = [e.value for a in args for e in (a.elements if isinstance(a, (cst.List, cst.Tuple)) else [])]
                found = self._combine(args + flat, env, "value")
                return Val("value", found.grad) if found is not None and found.grad != "no" else None
            return None
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.facts.module_classes and any(
                kind == "class" for kind, _, _ in self.facts.bindings(func.value, self.chain)):
            return Val("module", cls=func.value)
        if isinstance(func, cst.Name) and func.value == "list" and len(node.args) == 1:
            inner = self.ev(node.args[0].value, env)
            return inner if inner is not None and inner.kind in ("params", "named") else None
        if isinstance(func, cst.Attribute):
            receiver = self.ev(func.value, env)
            method = func.attr.value
            if receiver is None:
                if method in ("parameters", "named_parameters") and not self.facts.frozen(func.value, self.owner):
                    return Val("params" if method == "parameters" else "named")
                return self._module_call(func, env)
            if receiver.kind == "module":
                if method in MODULE_SELF_METHODS:
                    return receiver
                if method in ("parameters", "named_parameters") and not self.facts.frozen(func.value, self.owner):
                    return Val("params" if method == "parameters" else "named")
                return self._module_call(func, env)
            if receiver.kind == "tensor":
                return self._tensor_method(node, method, receiver, nograd)
            return None
        callee = self.ev(func, env)
        if callee is not None and callee.kind == "module":
            return self._output(callee, nograd)
        return None

    def _module_call(self, func: cst.Attribute, env: Env) -> Optional[Val]:
        """``self.fc(x)``: a call of a submodule attribute."""
        callee = self._attribute(func, env) if isinstance(func, cst.Attribute) else None
        if callee is not None and callee.kind == "module":
            return self._output(callee, env.get(NOGRAD_KEY))
        return None

    def _output(self, module: Val, nograd: Optional[bool]) -> Optional[Val]:
        if nograd is True:
            return Val("value", "no")
        if nograd is False and (module.cls in PARAMETER_MODULES or (
                module.cls in self.facts.classes and self.has_params(module.cls))):
            return Val("value", "graph")
        return None

    def _tensor_method(self, node: cst.Call, method: str, receiver: Val, nograd: Optional[bool]) -> Optional[Val]:
        if method == "requires_grad_":
            flag = argument(node, "requires_grad", 0)
            wanted = literal(flag.value) if flag is not None else True
            if wanted is False:
                return NO_GRAD_TENSOR if receiver.grad in ("no", "leaf") else None
            if wanted is True:
                return PARAM if receiver.grad in ("no", "leaf") else Val("tensor", receiver.grad)
            return Val("tensor")
        if method in NO_GRAPH_TENSOR_METHODS:
            flag = argument(node, "requires_grad")
            return NO_GRAD_TENSOR if flag is None else Val("tensor")
        if method in INPLACE_METHODS:
            return receiver
        if method in IDENTITY_METHODS:
            if receiver.grad == "leaf" and self._copies(node):
                return Val("tensor", derived("leaf", nograd))
            return Val("tensor", {"no": "no", "graph": "graph"}.get(receiver.grad, ""))
        if method in DERIVING_METHODS:
            return Val("tensor", derived(receiver.grad, nograd))
        return None


    def _copies(self, node: cst.Call) -> bool:
        """``torch.rand(3, requires_grad=True).cuda()`` / ``.double()``: a CPU float32 factory result moved to
        the GPU or to another dtype is a copy, a non-leaf (the classic "x.grad is None")."""
        factory = node.func.value
        if not (isinstance(factory, cst.Call) and is_factory(self.qualname(factory.func) or "")):
            return False
        method = node.func.attr.value
        target = argument(node, "device", 0)
        if method == "cuda" or (method == "to" and isinstance(target.value if target else None, cst.SimpleString)
                                and str(target.value.evaluated_value).startswith("cuda")):
            return argument(factory, "device") is None
        return method in ("double", "half", "bfloat16") and argument(factory, "dtype") is None and (
            last_name(self.qualname(factory.func)) in ("rand", "randn", "zeros", "ones", "empty", "full", "linspace"))


def derived(grad: str, nograd: Optional[bool]) -> str:
    """The autograd status of a differentiable function of a value with status ``grad``."""
    if grad == "no" or nograd is True:
        return "no"
    if grad in ("leaf", "graph"):
        return "graph" if nograd is False else ""
    return ""


def flow_of(ctx: FileContext) -> Flow:
    """The file's flow analysis, built once per file and shared by every TM6xx rule."""
    return ctx.analysis(_build_flow)


def _build_flow(ctx: FileContext) -> Flow:
    return Flow(hazard_facts(ctx))


