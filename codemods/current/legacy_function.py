"""What TM510 needs to know about a legacy ``autograd.Function`` (non-static ``forward``), as typed facts.

``plan(ctx, cls)`` reads the class and every use of it in the file and returns a ``Plan``: the constructor's
parameters that become extra ``forward`` parameters, the ``__init__`` statements carried to the top of
``forward``, the call sites (``MyFn(a)(x)``) and stored instances (``fn = MyFn()``, ``self.fn = MyFn()``),
and, when the conversion is not exact, ``Concern``s (unsafe) or ``Obstacle``s (report only).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import libcst as cst

from codemods import torchapi
from codemods.model import BindingKind
from codemods.names import dotted
from codemods.walk import children, walk


class Obstacle(enum.Enum):
    """Why a class cannot be converted (reported, left unchanged)."""

    OTHER_METHODS = "other_methods"
    STAR_PARAMETERS = "star_parameters"
    NAME_CLASH = "name_clash"
    CLASS_ATTRIBUTE = "class_attribute"
    BACKWARD_RETURN = "backward_return"
    USE = "use"
    CALL = "call"
    STORED_STATE = "stored_state"
    NO_BACKWARD = "no_backward"


class Concern(enum.Enum):
    """Why a conversion changes behaviour in some uses (an unsafe fix)."""

    INIT_CODE = "init_code"
    MUTATED = "mutated"
    SELF_VALUE = "self_value"


@dataclass
class Plan:
    init_params: List[cst.Param] = field(default_factory=list)
    forward_inputs: int = 0  # forward's parameters after self
    sites: List[cst.Call] = field(default_factory=list)  # `MyFn(a)(x)`: the outer call
    stored: List[cst.Call] = field(default_factory=list)  # `fn = MyFn()`: the construction
    obstacles: Set[Obstacle] = field(default_factory=set)
    concerns: Set[Concern] = field(default_factory=set)
    ctx_name: str = "ctx"


def is_static(function: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) == "staticmethod" for d in function.decorators)


def self_name(function: cst.FunctionDef) -> Optional[str]:
    params = function.params.params
    return params[0].name.value if params else None


def is_super_init(statement: cst.CSTNode) -> bool:
    """``super().__init__()``, ``super(MyFn, self).__init__()``, ``Function.__init__(self)``."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1 or type(
            statement.body[0]) is not cst.Expr:
        return False
    call = statement.body[0].value
    return type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "__init__"


def is_docstring(statement: cst.CSTNode) -> bool:
    return type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 and type(
        statement.body[0]) is cst.Expr and type(statement.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)


def carried(init: cst.FunctionDef) -> List[cst.CSTNode]:
    """The ``__init__`` statements that move to ``forward`` (not its docstring or the base ``__init__`` call)."""
    return [s for s in init.body.body if not is_docstring(s) and not is_super_init(s)]


def self_attributes(function: cst.FunctionDef, name: str, stored: bool) -> Set[str]:
    """The ``self.x`` attributes ``function`` assigns (``stored``) or reads."""
    found = set()
    for node in walk(function.body):
        targets = []
        if type(node) is cst.AssignTarget:
            targets = [node.target]
        elif type(node) in (cst.AugAssign, cst.AnnAssign):
            targets = [node.target]
        for target in targets:
            for element in walk(target):
                if stored and type(element) is cst.Attribute and type(element.value) is cst.Name and \
                        element.value.value == name:
                    found.add(element.attr.value)
        if not stored and type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:
            found.add(node.attr.value)
    return found


def plan(ctx, cls: cst.ClassDef) -> Plan:
    model = ctx.model
    methods: Dict[str, cst.FunctionDef] = {s.name.value: s for s in cls.body.body if type(s) is cst.FunctionDef}
    forward, backward, init = methods.get("forward"), methods.get("backward"), methods.get("__init__")
    result = Plan()
    if set(methods) - {"forward", "backward", "__init__"}:
        result.obstacles.add(Obstacle.OTHER_METHODS)
    if backward is None or is_static(backward):
        result.obstacles.add(Obstacle.NO_BACKWARD)
        return result
    fparams = forward.params
    result.forward_inputs = len(fparams.params) - 1
    if init is not None:
        iparams = init.params
        result.init_params = list(iparams.params[1:])
        if iparams.star_arg is not cst.MaybeSentinel.DEFAULT or iparams.star_kwarg or iparams.kwonly_params \
                or iparams.posonly_params:
            result.obstacles.add(Obstacle.STAR_PARAMETERS)
    if result.init_params and (fparams.star_arg is not cst.MaybeSentinel.DEFAULT or fparams.star_kwarg or
                               fparams.kwonly_params or any(p.default is not None for p in fparams.params)):
        result.obstacles.add(Obstacle.STAR_PARAMETERS)
    forward_scope = model.scope_of_definition(forward)
    names = {p.name.value for p in result.init_params}
    if init is not None:
        for statement in carried(init):
            names |= {n.value for n in walk(statement) if type(n) is cst.Name and not (
                type(model.parent(n)) is cst.Attribute and model.parent(n).attr is n)} - {self_name(init)}
    if names & (set(forward_scope.bindings) - {self_name(forward)}):
        result.obstacles.add(Obstacle.NAME_CLASH)
    if any(type(n) is cst.Name and n.value == "ctx" for f in (forward, backward, init) if f is not None
           for n in walk(f)):
        result.ctx_name = self_name(forward)
    _check_attributes(model, result, forward, backward, init)
    _check_returns(model, result, backward)
    _find_uses(ctx, cls, result)
    return result


def _check_attributes(model, result: Plan, forward, backward, init) -> None:
    set_by = set()
    for function in (forward, backward, init):
        if function is not None:
            set_by |= self_attributes(function, self_name(function), stored=True)
    init_set = self_attributes(init, self_name(init), stored=True) if init is not None else set()
    known = set_by | torchapi.FUNCTION_CONTEXT_ATTRIBUTES | set(torchapi.FUNCTION_CONTEXT_RENAMES)
    for function in (forward, backward):
        name = self_name(function)
        if self_attributes(function, name, stored=False) - known:
            result.obstacles.add(Obstacle.CLASS_ATTRIBUTE)
        if self_attributes(function, name, stored=True) & init_set or _mutates(function, name, init_set):
            result.concerns.add(Concern.MUTATED)
        for node in walk(function.body):
            if type(node) is cst.Name and node.value == name and not (
                    type(model.parent(node)) is cst.Attribute and model.parent(node).value is node):
                result.concerns.add(Concern.SELF_VALUE)
    if init is not None and any(not _is_self_store(s, self_name(init)) for s in carried(init)):
        result.concerns.add(Concern.INIT_CODE)


def _mutates(function, name: str, attributes: Set[str]) -> bool:
    """``self.x.add_(...)`` or ``self.x[i] = v`` on an attribute ``__init__`` set."""
    for node in walk(function.body):
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value.endswith("_"):
            receiver = node.func.value
            if type(receiver) is cst.Attribute and dotted(receiver) in {f"{name}.{a}" for a in attributes}:
                return True
        if type(node) is cst.AssignTarget and type(node.target) is cst.Subscript and \
                dotted(node.target.value) in {f"{name}.{a}" for a in attributes}:
            return True
    return False


def _is_self_store(statement, name: str) -> bool:
    """``self.x = ...`` or ``self.a, self.b = ...``: state the ctx carries as it is."""
    def stores(target) -> bool:
        if type(target) in (cst.Tuple, cst.List):
            return all(stores(e.value) for e in target.elements)
        return type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == name
    return type(statement) is cst.SimpleStatementLine and all(
        type(s) is cst.Assign and all(stores(t.target) for t in s.targets) for s in statement.body)


def backward_returns(backward: cst.FunctionDef) -> List[cst.Return]:
    """``backward``'s own returns (not those of functions nested in it)."""
    found, stack = [], [backward.body]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.Lambda, cst.ClassDef):
            continue
        if type(node) is cst.Return:
            found.append(node)
        stack.extend(children(node))
    return found


def _check_returns(model, result: Plan, backward: cst.FunctionDef) -> None:
    """Each return can get the extra ``None``s: a tuple literal, or one gradient for a one-input ``forward``
    (not a name that may hold a tuple)."""
    if not result.init_params:
        return
    for ret in backward_returns(backward):
        value = ret.value
        if type(value) is cst.Tuple:
            if any(type(e) is cst.StarredElement for e in value.elements):
                result.obstacles.add(Obstacle.BACKWARD_RETURN)
        elif value is None or result.forward_inputs != 1 or _may_be_tuple(model, value):
            result.obstacles.add(Obstacle.BACKWARD_RETURN)


def _may_be_tuple(model, value: cst.CSTNode, depth: int = 0) -> bool:
    """A tuple of gradients already (``torch.autograd.grad(...)``, a list or tuple, a name bound to one)."""
    if type(value) in (cst.List, cst.Tuple) or type(value) is cst.Call and model.qualname(
            value.func) == "torch.autograd.grad":
        return True
    if type(value) is cst.Name and depth < 3:
        _, bindings = model.lookup(value.value, model.scope_of(value))
        return not bindings or any(b.kind is not BindingKind.ASSIGN or _may_be_tuple(model, b.value, depth + 1)
                                   for b in bindings)
    return False


def _find_uses(ctx, cls: cst.ClassDef, result: Plan) -> None:
    model = ctx.model
    home = model.scope_of(cls)
    binding = [b for b in home.bindings.get(cls.name.value, ()) if b.node is cls]
    for node in walk(ctx.module):
        if type(node) is not cst.Name or node.value != cls.name.value or node is cls.name:
            continue
        up = model.parent(node)
        if type(up) is cst.Attribute and up.attr is node:
            continue
        if model.lookup(node.value, model.scope_of(node))[1] != binding:
            continue
        if type(up) is cst.Attribute and up.attr.value == "apply":
            continue
        if type(up) is cst.Arg and type(model.parent(up)) is cst.Call and dotted(model.parent(up).func) == "super":
            continue  # `super(MyFn, self).__init__()` in the `__init__` that goes
        if type(up) is not cst.Call or up.func is not node:
            result.obstacles.add(Obstacle.USE)
            continue
        outer = model.parent(up)
        if type(outer) is cst.Call and outer.func is up:
            if any(a.keyword is not None or a.star for a in outer.args) and (result.init_params or any(
                    a.keyword is not None for a in outer.args)):
                result.obstacles.add(Obstacle.CALL)
            elif result.init_params and not _constructor_arguments(up, result):
                result.obstacles.add(Obstacle.CALL)
            elif result.init_params and len(outer.args) != result.forward_inputs:
                result.obstacles.add(Obstacle.CALL)
            result.sites.append(outer)
        elif type(outer) is cst.Assign and len(outer.targets) == 1 and outer.value is up:
            if result.init_params or up.args:
                result.obstacles.add(Obstacle.STORED_STATE)
            elif not _only_called(ctx, outer.targets[0].target):
                result.obstacles.add(Obstacle.USE)
            result.stored.append(up)
        else:
            result.obstacles.add(Obstacle.USE)


def constructor_values(call: cst.Call, result: Plan) -> Optional[List[cst.BaseExpression]]:
    """The expressions passed for each ``__init__`` parameter, in order (defaults written out where a later
    parameter is passed), trailing defaults left off; ``None`` when it cannot be told."""
    values: List[Optional[cst.BaseExpression]] = [None] * len(result.init_params)
    names = [p.name.value for p in result.init_params]
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(values):
                return None
            values[position] = arg.value
            position += 1
        elif arg.keyword.value in names:
            values[names.index(arg.keyword.value)] = arg.value
        else:
            return None
    while values and values[-1] is None and result.init_params[len(values) - 1].default is not None:
        values.pop()
    filled = []
    for value, param in zip(values, result.init_params):
        if value is None:
            default = param.default
            if default is None or type(default) not in (cst.Integer, cst.Float, cst.SimpleString, cst.Name,
                                                        cst.UnaryOperation) or type(default) is cst.Name and \
                    default.value not in ("True", "False", "None"):
                return None
            value = default
        filled.append(value)
    return filled


def _constructor_arguments(call: cst.Call, result: Plan) -> bool:
    return constructor_values(call, result) is not None


def _only_called(ctx, target: cst.CSTNode) -> bool:
    """Every use of the stored instance ``target`` (a name bound once, or ``self.x`` assigned once) is a call."""
    model = ctx.model
    if type(target) is cst.Name:
        scope, bindings = model.lookup(target.value, model.scope_of(target))
        if not bindings or len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
            return False
        uses = [n for n in walk(scope.node) if type(n) is cst.Name and n.value == target.value and n is not target
                and model.lookup(n.value, model.scope_of(n))[1] is bindings]
        return all(_called(model, n) for n in uses)
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
        scope = model.scope_of(target)
        if len(model.self_attribute_values(target.attr.value, scope)) != 1:
            return False
        cls = scope.cls or (scope.parent.cls if scope.parent is not None else None)
        if cls is None:
            return False
        uses = [n for n in walk(cls) if type(n) is cst.Attribute and n is not target and
                n.attr.value == target.attr.value and type(n.value) is cst.Name and n.value.value == "self"]
        return all(_called(model, n) for n in uses)
    return False


def _called(model, node: cst.CSTNode) -> bool:
    up = model.parent(node)
    return type(up) is cst.Call and up.func is node
