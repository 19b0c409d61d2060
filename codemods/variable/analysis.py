"""The variable family's analysis: one per file, fed during the engine's traversal (``common.py``).

``VariableFacts`` collects the ``Variable`` calls and references, calls, ``backward()`` sites, returns and
the family's flow-sensitive bindings (a plain top-level assignment hides the earlier ones: ``state =
torch.from_numpy(state)`` before ``Variable(state)``); ``items()`` decides every rewrite once and returns
``Fact``s (a kind, the node, the fix, details), which the rule owning the kind reports.

"Has no autograd history" is decided from the file alone: a name qualifies only when *every* binding of it
that may reach the use does (factory calls, ``.data``, ``.detach()``, loader elements, conversions and
reshapes of such values, calls of functions of the file that only return such values); function parameters,
attributes of objects and calls of anything that may be a module never qualify. Helpers' calls come from the
semantic model (``ctx.model.call_sites``); torch facts from ``codemods.torchapi``.
"""
from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemods.model import Binding, BindingKind, GradMode, Scope, SemanticModel
from codemods.model.scopes import COMPREHENSIONS
from codemods.names import dotted
from codemods.syntax import keep_comments
from codemods.walk import children, parent, walk
from codemods import torchapi
from codemods.torchapi import REQUIRES_GRAD_FACTORIES, TENSOR_TYPES

VARIABLE = "torch.autograd.Variable"  # (``torch.autograd.variable.Variable`` resolves to it)
# ``torchapi.FACTORIES`` less ``as_tensor``: ``torch.as_tensor(t)`` of a tensor is ``t`` itself, history and all.
FACTORIES = torchapi.FACTORIES - {"torch.as_tensor"}
# Builtins whose result is a plain number / range; builtins that pass their arguments' history on.
_NUMBER_BUILTINS = frozenset(("len", "int", "float", "bool", "str", "range", "round", "id", "hash"))
_PASSING_BUILTINS = frozenset(("abs", "min", "max", "sum", "list", "tuple", "sorted", "reversed", "zip"))
# Calls that iterate what their (first) arguments yield.
_ITERATING_CALLS = frozenset(("enumerate", "iter", "reversed", "sorted", "list", "tuple", "zip", "tqdm", "trange"))
_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
# Expressions that can take ``.attr`` / be a call's function without parentheses.
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.Imaginary,
          cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Dict, cst.Set,
          cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Parents in which any expression may stand without parentheses.
_LOOSE_PARENTS = (cst.Arg, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Element, cst.Expr,
                  cst.DictElement, cst.Index, cst.Param, cst.WithItem)


# -- small CST helpers ------------------------------------------------------------------------
def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _method_call(value: cst.BaseExpression, name: str, args: Sequence[cst.Arg] = ()) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=_atom(value), attr=cst.Name(name)), args=list(args))


def _atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` usable as the receiver of ``.attr``: parenthesized unless it already binds tightly."""
    if expr.lpar or isinstance(expr, _ATOMS):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_true(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _is_false(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("False", "None") or (
        isinstance(expr, cst.Integer) and expr.value == "0")


def _comments(line: cst.SimpleStatementLine) -> List[str]:
    found = [empty.comment.value for empty in line.leading_lines if empty.comment is not None]
    if line.trailing_whitespace.comment is not None:
        found.append(line.trailing_whitespace.comment.value)
    return found


def _names_in(node: cst.CSTNode) -> Iterator[str]:
    """Every ``Name`` read in ``node`` (nested function and class bodies excluded)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            yield current.value
        elif isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            stack.extend(current.decorators)
            continue
        stack.extend(children(current))


def _bound_in(node: cst.CSTNode) -> Iterator[str]:
    """Names a statement binds (assignment, loop and ``with`` targets), nested definitions excluded."""
    stack = [node]
    while stack:
        current = stack.pop()
        targets: Sequence[cst.CSTNode] = ()
        if isinstance(current, cst.Assign):
            targets = [t.target for t in current.targets]
        elif isinstance(current, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            targets = [current.target]
        elif isinstance(current, cst.WithItem) and current.asname is not None:
            targets = [current.asname.name]
        elif isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            yield current.name.value
            continue
        for target in targets:
            yield from (n.value for n in _target_names(target))
        stack.extend(children(current))


def _target_names(target: cst.CSTNode) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def _wrap(statements: List[cst.BaseStatement], no_grad: cst.BaseExpression) -> cst.With:
    """``with no_grad():`` around ``statements``, taking over the first one's leading comments."""
    first = statements[0]
    body = cst.IndentedBlock(body=[first.with_changes(leading_lines=[]), *statements[1:]])
    return cst.With(items=[cst.WithItem(item=cst.Call(func=no_grad))], body=body,
                    leading_lines=list(first.leading_lines))


def _unindented_blank_lines(statement: cst.BaseStatement) -> cst.BaseStatement:
    """A module-level statement moved into a block: its blank lines must not get the block's indentation."""
    lines = [line.with_changes(indent=False) if line.comment is None else line for line in statement.leading_lines]
    return statement.with_changes(leading_lines=lines)


def _docstring_count(body: Sequence[cst.BaseStatement]) -> int:
    first = body[0] if body else None
    if (isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1 and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))):
        return 1
    return 0


# -- scopes and bindings ----------------------------------------------------------------------
@dataclass(frozen=True)
class _Binding:
    """A model binding (``codemods.model.Binding``) as the family reads it: ``kind`` "value"/"unpack" (an
    assigned expression), "iter" (a loop target over ``value``), "def", "unknown"; ``index``: the top-level
    statement of its scope's body that holds it (None where statements have no order); ``killing`` (a plain
    top-level assignment) hides every earlier binding from later uses."""

    kind: str
    value: Optional[cst.CSTNode]
    scope: Scope
    index: Optional[int] = None
    killing: bool = False


def _scope_index(ancestors: Sequence[cst.CSTNode], functions_only: bool = False) -> int:
    """Index in ``ancestors`` of the node whose scope the last ancestor is evaluated in."""
    for index in range(len(ancestors) - 2, 0, -1):
        node, child = ancestors[index], ancestors[index + 1]
        node_type = type(node)  # exact types: ``isinstance`` with libcst's ABCs is slow on every node
        if node_type in _SCOPES and child is node.body:
            return index
        if not functions_only and node_type in COMPREHENSIONS and not (
                child is node.for_in and index + 2 < len(ancestors) and ancestors[index + 2] is node.for_in.iter):
            return index
    return 0


@dataclass
class _Call:
    """A ``Variable(...)`` call and what its arguments say."""

    node: cst.Call
    ancestors: tuple
    data: Optional[cst.Arg] = None
    requires_grad: Optional[cst.Arg] = None
    volatile: Optional[cst.Arg] = None
    problem: str = ""


_SLOTS = ("data", "requires_grad", "volatile")


def _arguments(call: cst.Call) -> Tuple[Dict[str, cst.Arg], str]:
    """``Variable(...)``'s arguments by parameter name, and what is wrong with them ("" if nothing)."""
    found: Dict[str, cst.Arg] = {}
    for index, arg in enumerate(call.args):
        if arg.star or (arg.keyword is None and index >= len(_SLOTS)):
            return found, "unexpected arguments"
        slot = arg.keyword.value if arg.keyword is not None else _SLOTS[index]
        if slot not in _SLOTS or slot in found:
            return found, f"unexpected argument `{slot}`"
        found[slot] = arg
    return found, "" if "data" in found else "no tensor argument"


class FactKind(enum.Enum):
    """What the family decided about one node (the rule that owns each kind reports it)."""

    BAD_CALL = "bad-call"  # Variable(...) with arguments it cannot read (detail: problem)
    UNWRAP = "unwrap"  # Variable(x, ...) -> plain tensor code (detail: strategy, source, receiver)
    NOOP = "noop"  # ``x, y = Variable(x), Variable(y)``: removed (detail: names)
    MAP_VARIABLE = "map"  # ``map(Variable, xs)`` -> ``map(torch.Tensor.detach, xs)``
    VARIABLE_VALUE = "value"  # ``Variable`` used as a value some other way
    VOLATILE_WITH_GRAD = "volatile-with-grad"  # both volatile= and requires_grad=
    UNWRAP_VOLATILE = "unwrap-volatile"  # as UNWRAP, for a volatile call (its region is wrapped)
    NOOP_VOLATILE = "noop-volatile"  # as NOOP, with a volatile call
    VOLATILE_LEFT = "volatile-left"  # no region for it (detail: flag, reason); unsafe fix: drop volatile=
    VOLATILE_NO_CALLERS = "volatile-no-callers"  # volatile=<parameter> and no caller in the file (detail: flag)
    VOLATILE_UNWRAPPABLE = "volatile-unwrappable"  # a site whose region cannot be wrapped (detail: reason)
    FLAG_PARAMETER = "flag-parameter"  # a helper's parameter that only fed volatile= goes (detail: name, function)
    FLAG_ARGUMENT = "flag-argument"  # ... and what a caller passes for it (detail: argument, name, function)
    WRAP_LOOP = "wrap-loop"  # an inference loop under torch.no_grad()
    WRAP_BODY = "wrap-body"  # a function body (detail: function, returns)
    WRAP_STATEMENT = "wrap-statement"  # one module-level statement
    WRAP_RANGE = "wrap-range"  # module-level statements (detail: first, count)
    TYPE_COMPARISON = "type-comparison"  # ``type(x) == Variable`` -> isinstance
    TYPE_TUPLE = "type-tuple"  # Variable in a tuple of types
    TYPE_REFERENCE = "type-reference"  # Variable in isinstance()/an annotation (detail: where)


@dataclass
class Fact:
    kind: FactKind
    node: cst.CSTNode
    fix: Optional[Callable] = None
    unsafe: bool = False
    detail: Dict[str, str] = field(default_factory=dict)


@dataclass
class _Region:
    """Code to run under ``torch.no_grad()``: a loop, a function body, or module statements ``start..end``."""

    kind: str
    node: cst.CSTNode
    ancestors: tuple
    start: int = 0
    end: int = 0
    returns: bool = False  # a body whose function returns the value (to callers outside the file)


class VariableFacts:
    """Everything the family needs from one file, then the decisions (``items``)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.feeder: Optional[Rule] = None  # the one rule of the family that collects during the traversal
        self._orders: Dict[int, Dict[int, int]] = {}  # id(scope node) -> id(top-level statement) -> index
        self._converted: Dict[Tuple[int, str], List[_Binding]] = {}
        self.variable_calls: List[_Call] = []
        self.variable_refs: List[Tuple[cst.CSTNode, tuple]] = []
        # Calls of names the file binds or leaves unresolved and of ``self`` methods; ``backward()`` and autograd
        # calls. Most files never ask for their ancestors (``calls``, ``backward``): those are made on first use.
        self.call_nodes: List[cst.Call] = []
        self.backward_nodes: List[cst.Call] = []
        self.yields: List[tuple] = []
        self.volatile_calls: List[Tuple[cst.Call, tuple, cst.BaseExpression]] = []  # helpers given `volatile=`
        self.generators: Set[int] = set()  # id(function) of generator functions
        self.memo: Dict[tuple, bool] = {}
        self._items: Optional[List[Fact]] = None

    @functools.cached_property
    def model(self) -> SemanticModel:
        """The file's model, asked for only when a decision needs it (a file without ``Variable`` calls,
        references or ``volatile=`` needs none)."""
        return self.ctx.model

    # ---- collection (called from the rules' handlers) ----
    @functools.cached_property
    def calls(self) -> List[Tuple[cst.Call, tuple]]:
        return [(node, self.model.chain(node)) for node in self.call_nodes]

    @functools.cached_property
    def backward(self) -> List[tuple]:
        return [self.model.chain(node) for node in self.backward_nodes]

    def scope(self, ancestors: Sequence[cst.CSTNode]) -> Scope:
        """The model's scope of the node at the end of ``ancestors``."""
        return self.model.scope_of(ancestors[-1])

    def position(self, scope: Scope, ancestors: Sequence[cst.CSTNode]) -> Optional[int]:
        """Index of the top-level statement of ``scope``'s body (a module or a function) that holds the end of
        ``ancestors``."""
        node = scope.node
        if type(node) is cst.Module:
            body, offset = node.body, 1
        elif type(node) is cst.FunctionDef and type(node.body) is cst.IndentedBlock:
            body, offset = node.body.body, 2
        else:
            return None
        order = self._orders.get(id(node))
        if order is None:
            order = self._orders[id(node)] = {id(statement): index for index, statement in enumerate(body)}
        for depth in range(len(ancestors) - 1, -1, -1):
            if ancestors[depth] is node:
                top = ancestors[depth + offset] if depth + offset < len(ancestors) else None
                return order.get(id(top))
        return None

    def _bindings(self, scope: Scope, name: str) -> List[_Binding]:
        key = (id(scope), name)
        found = self._converted.get(key)
        if found is None:
            found = self._converted[key] = [self._convert(b, scope) for b in scope.bindings.get(name, ())]
        return found

    def _convert(self, binding: Binding, scope: Scope) -> _Binding:
        kind, value = binding.kind, binding.value
        if kind in (BindingKind.ASSIGN, BindingKind.WALRUS):
            family_kind = "value"
        elif kind is BindingKind.UNPACK:
            family_kind = "unpack"
            if binding.index is not None and type(value) in (cst.Tuple, cst.List) and not any(
                    type(e) is cst.StarredElement for e in value.elements):
                target = binding.node.targets[0].target if type(binding.node) is cst.Assign else None
                if type(target) in (cst.Tuple, cst.List) and len(target.elements) == len(value.elements):
                    family_kind, value = "value", value.elements[binding.index].value  # ``a, b = x, y``
        elif kind is BindingKind.AUGMENTED:
            family_kind, value = "value", value.value
        elif kind is BindingKind.FOR:
            family_kind = "iter"
        elif kind is BindingKind.FUNCTION:
            family_kind, value = "def", binding.node
        else:  # parameters, with/except targets, imports, classes, del
            family_kind, value = "unknown", None
        ancestors = self.model.chain(binding.node)
        index = self.position(scope, ancestors)
        killing = (kind is BindingKind.ASSIGN and type(binding.node) in (cst.Assign, cst.AnnAssign)
                   and index is not None and ancestors[-2] is not None and type(ancestors[-2]) is cst.SimpleStatementLine
                   and len(ancestors) >= 3 and any(ancestors[-3] is n for n in (scope.node, getattr(scope.node, "body", None))))
        if kind is BindingKind.PARAMETER:
            index = -1
        return _Binding(family_kind, value, scope, index, killing)

    def collect_call(self, node: cst.Call) -> None:
        func = node.func
        qualname = None
        if type(func) is cst.Attribute:
            if func.attr.value in ("Variable", "backward", "grad"):
                qualname = self.ctx.qualname(func)
            if func.attr.value == "backward" or qualname in torchapi.AUTOGRAD_CALLS:
                self.backward_nodes.append(node)
            elif type(func.value) is cst.Name and func.value.value == "self":
                self.call_nodes.append(node)
        elif type(func) is cst.Name:
            qualname = self.ctx.qualname(func)
            if qualname in torchapi.AUTOGRAD_CALLS:
                self.backward_nodes.append(node)
            elif qualname is None:
                self.call_nodes.append(node)
        if qualname == VARIABLE:
            self.variable_calls.append(self._parse(node, self.model.chain(node)))
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "volatile":
                self.volatile_calls.append((node, self.model.chain(node), arg.value))

    @staticmethod
    def _parse(node: cst.Call, ancestors: tuple) -> _Call:
        found, problem = _arguments(node)
        return _Call(node, ancestors, found.get("data"), found.get("requires_grad"), found.get("volatile"), problem)

    # ---- "has no autograd history" ----
    def lookup(self, name: str, scope: Scope, at: Optional[int] = None) -> Optional[List[_Binding]]:
        """The bindings of ``name`` (the model's) that may reach a use in ``scope`` at top-level statement ``at``;
        ``None`` when the file does not bind it.

        Flow-insensitive, except that the last plain top-level assignment before the use's statement hides
        the earlier bindings (``def f(state): state = torch.from_numpy(state); ... Variable(state)``).
        """
        found, raw = self.model.lookup(name, scope)
        if found is None:
            return None
        bindings = self._bindings(found, name)
        if found is not scope or at is None:
            return bindings
        before = [b for b in bindings if b.killing and b.index is not None and b.index < at]
        if not before:
            return bindings
        last = max(before, key=lambda b: b.index).index
        return [b for b in bindings if b.index is None or last <= b.index <= at]

    def _name(self, mode: str, name: str, scope: Scope, at: Optional[int]) -> bool:
        bindings = self.lookup(name, scope, at)
        if not bindings:
            return False
        key = (mode, name, id(scope), at)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = True  # a cycle through this name adds no history
        result = all(self._binding(mode, b) for b in bindings)
        self.memo[key] = result
        return result

    def _binding(self, mode: str, binding: _Binding) -> bool:
        kind, value, where, at = binding.kind, binding.value, binding.scope, binding.index
        if kind in ("unknown", "def"):
            return False
        if mode == "iter":  # the name holds a loader/iterator of data
            return kind == "value" and (self.yields_data(value, where, at) or _is_loader_call(value))
        if kind == "iter":
            return self.yields_data(value, where, at)
        return self.is_data(value, where, at)

    def is_data(self, expr: cst.CSTNode, scope: Scope, at: Optional[int] = None) -> bool:
        """True when ``expr`` provably evaluates to something without autograd history."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                             cst.FormattedString)):
            return True
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return True
            return self._name("data", expr.value, scope, at)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return all(not isinstance(e, cst.StarredElement) and self.is_data(e.value, scope, at)
                       for e in expr.elements)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "data":
                return True
            qualname = self.ctx.qualname(expr)
            if qualname is not None:
                return qualname.split(".")[0] in ("torch", "numpy", "math")
            return self.is_data(expr.value, scope, at)
        if isinstance(expr, cst.Subscript):
            return self.is_data(expr.value, scope, at)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_data(expr.left, scope, at) and self.is_data(expr.right, scope, at)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_data(expr.expression, scope, at)
        if isinstance(expr, cst.BooleanOperation):
            return self.is_data(expr.left, scope, at) and self.is_data(expr.right, scope, at)
        if isinstance(expr, cst.Comparison):
            return True  # bool / comparison tensors have no history
        if isinstance(expr, cst.IfExp):
            return self.is_data(expr.body, scope, at) and self.is_data(expr.orelse, scope, at)
        if isinstance(expr, cst.Call):
            return self._call_is_data(expr, scope, at)
        return False

    def _args_data(self, call: cst.Call, scope: Scope, at: Optional[int], skip: Tuple[str, ...] = ()) -> bool:
        return all(not arg.star and (arg.keyword is not None and arg.keyword.value in skip
                                     or self.is_data(arg.value, scope, at)) for arg in call.args)

    def _call_is_data(self, call: cst.Call, scope: Scope, at: Optional[int] = None) -> bool:
        func = call.func
        qualname = self.ctx.qualname(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualname is not None:
            if qualname == VARIABLE:
                parsed = self._parse(call, ())
                return not parsed.problem and (parsed.requires_grad is None or _is_false(parsed.requires_grad.value))
            root = qualname.split(".")[0]
            if root in ("numpy", "math"):
                return True
            if qualname in FACTORIES:
                return not any(arg.keyword is not None and arg.keyword.value == "requires_grad"
                               and not _is_false(arg.value) for arg in call.args)
            if root != "torch" or qualname.startswith(("torch.nn.", "torch.autograd.", "torch.load", "torch.jit")):
                return qualname.startswith("torch.nn.functional.") and self._args_data(call, scope, at)
            return self._args_data(call, scope, at, skip=("dim", "out", "dtype", "device"))
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in torchapi.NO_GRAPH_METHODS:
                return True
            if method == "next" and not call.args:
                return self.yields_data(func.value, scope, at)
            if method in torchapi.RECEIVER_HISTORY_METHODS:
                return self.is_data(func.value, scope, at)
            if method in ("requires_grad_", "retain_grad"):
                return False
            return self.is_data(func.value, scope, at) and self._args_data(call, scope, at)
        if isinstance(func, cst.Name) and self.lookup(func.value, scope, at) is None:
            name = func.value
            if name in _NUMBER_BUILTINS:
                return True
            if name == "next" and call.args:
                return self.yields_data(call.args[0].value, scope, at)
            if name in _PASSING_BUILTINS:
                return self._args_data(call, scope, at, skip=("key", "reverse"))
            return False
        if isinstance(func, cst.Name):
            bindings = self.lookup(func.value, scope, at)
            if bindings and len(bindings) == 1 and bindings[0].kind == "def":
                return self.returns_data(bindings[0].value)
            return self.is_tensor_type(func, scope, at)
        return False

    def returns_data(self, function: cst.FunctionDef) -> bool:
        """A function of this file whose every ``return`` is data whatever its arguments (``lineToTensor``)."""
        key = ("returns", id(function))
        if key not in self.memo:
            self.memo[key] = False  # recursion proves nothing
            scope = self.model.scope_of_definition(function)
            returns = [(value, self.position(scope, self.model.chain(value)))
                       for value in scope.returns]
            self.memo[key] = bool(returns) and id(function) not in self.generators and all(
                self.is_data(value, scope, at) for value, at in returns)
        return self.memo[key]

    def is_tensor_type(self, expr: cst.CSTNode, scope: Scope, at: Optional[int] = None) -> bool:
        """``torch.FloatTensor``, ``torch.cuda.FloatTensor``, or a name bound only to such types."""
        if isinstance(expr, cst.IfExp):
            return self.is_tensor_type(expr.body, scope, at) and self.is_tensor_type(expr.orelse, scope, at)
        if isinstance(expr, (cst.Name, cst.Attribute)) and self.ctx.qualname(expr) in TENSOR_TYPES:
            return True
        if isinstance(expr, cst.Name):
            bindings = self.lookup(expr.value, scope, at)
            return bool(bindings) and all(b.kind == "value" and self.is_tensor_type(b.value, b.scope, b.index)
                                          for b in bindings)
        return False

    def yields_data(self, expr: cst.CSTNode, scope: Scope, at: Optional[int] = None) -> bool:
        """True when iterating ``expr`` yields data (a loader, ``enumerate(loader)``, a data tensor...)."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
            name = dotted(expr.func) or ""
            last = name.rsplit(".", 1)[-1]
            if name == "range":
                return True
            if last in _ITERATING_CALLS and (isinstance(expr.func, cst.Attribute) or self.lookup(name, scope, at) is None):
                positional = [a.value for a in expr.args if a.keyword is None and not a.star]
                if last in ("enumerate", "iter", "tqdm", "trange", "reversed", "sorted", "list", "tuple"):
                    positional = positional[:1]
                return bool(positional) and all(self.yields_data(a, scope, at) for a in positional)
        if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
            target = expr.value if isinstance(expr, cst.Subscript) else expr
            name = dotted(target)
            if name is not None and "loader" in name.rsplit(".", 1)[-1].lower():
                return True
            if isinstance(expr, cst.Name) and self._name("iter", expr.value, scope, at):
                return True
        return self.is_data(expr, scope, at)

    def is_fresh(self, expr: cst.CSTNode, scope: Scope, at: Optional[int] = None) -> bool:
        """A new tensor without history that nothing else refers to (``requires_grad_()`` on it is exact)."""
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        if isinstance(func, (cst.Name, cst.Attribute)) and self.ctx.qualname(func) in FACTORIES:
            return self.is_data(expr, scope, at)
        if isinstance(func, cst.Name):
            return self.is_tensor_type(func, scope, at)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method.startswith("new") and method in torchapi.NO_GRAPH_METHODS or method == "clone":
                return self.is_data(func.value, scope, at)
            if method in torchapi.RECEIVER_HISTORY_METHODS:
                return self.is_fresh(func.value, scope, at)
        return False

    # ---- decisions ----
    def items(self) -> List[Fact]:
        if self._items is None:
            self._items = _Planner(self).plan()
        return self._items


def _is_loader_call(expr: cst.CSTNode) -> bool:
    return isinstance(expr, cst.Call) and (dotted(expr.func) or "").endswith("DataLoader")


class _Planner:
    """Turns the collected facts into findings and fixes."""

    def __init__(self, facts: VariableFacts) -> None:
        self.facts = facts
        self.ctx = facts.ctx
        self.items: List[Fact] = []
        self._resolved: Dict[int, Optional[cst.FunctionDef]] = {}
        self._subtrees: Dict[int, Set[int]] = {}
        self._ranges: Dict[int, int] = {}  # module-level inference ranges: start -> end
        self._reads: Dict[int, frozenset] = {}  # id(module-level statement) -> the names it reads
        self._with_backward: Optional[Set[int]] = None
        self._flag_functions: Set[int] = set()

    # ---- spelling ----
    def torch_expr(self, name: str) -> cst.BaseExpression:
        """``torch.<name>`` as this file spells it; imports torch if the file does not (call inside fixes)."""
        local = self.ctx.imports.local_name(f"torch.{name}")
        if local is None:
            self.ctx.add_import("torch")
            local = f"torch.{name}"
        return _expr(local)

    def drop_import(self, func: cst.CSTNode) -> None:
        """Schedule removal of the import that provides ``func`` (``Variable``/``V``/``ag``) if it becomes unused."""
        head = dotted(func).split(".")[0]
        full = self.ctx.imports.aliases.get(head)
        if full is None:
            return
        module, _, obj = full.rpartition(".")
        if isinstance(func, cst.Name) and module:
            self.ctx.remove_import_if_unused(module, obj, head if head != obj else None)
        elif isinstance(func, cst.Attribute) and head != full.split(".")[0]:
            # `import torch.autograd as ag` or `from torch import autograd`: whichever the file has goes if unused
            self.ctx.remove_import_if_unused(full, None, head)
            self.ctx.remove_import_if_unused(module, obj, head if head != obj else None)

    # ---- the plan ----
    def plan(self) -> List[Fact]:
        calls = list(self.facts.variable_calls)
        handled: Set[int] = set()
        for call in calls:
            if call.problem:
                self.items.append(Fact(FactKind.BAD_CALL, call.node, detail={"problem": call.problem}))
                handled.add(id(call.node))
                continue
            if call.volatile is not None and not _is_false(call.volatile.value):
                if call.requires_grad is not None and not _is_false(call.requires_grad.value):
                    self.items.append(Fact(FactKind.VOLATILE_WITH_GRAD, call.node))
                    handled.add(id(call.node))
        self._plan_volatile([c for c in calls if id(c.node) not in handled], handled)
        self._plan_statements([c for c in calls if id(c.node) not in handled], handled)
        for call in calls:
            if id(call.node) not in handled:
                volatile = call.volatile is not None and not _is_false(call.volatile.value)
                self.items.append(self._call_item(call, volatile))
        self._plan_references()
        return self.items

    # ---- TM101: one call ----
    def _scope(self, call: _Call) -> Scope:
        return self.facts.scope(call.ancestors)

    def _strategy(self, call: _Call) -> str:
        """How ``Variable(x, ...)`` becomes plain tensor code."""
        scope = self._scope(call)
        at = self.facts.position(scope, call.ancestors)
        value = call.data.value
        wants_grad = call.requires_grad is not None and not _is_false(call.requires_grad.value)
        data = self.facts.is_data(value, scope, at)
        if not wants_grad:
            return "data" if data else "detach"
        if isinstance(value, cst.Call) and self.ctx.qualname(value.func) in REQUIRES_GRAD_FACTORIES and not any(
                arg.keyword is not None and arg.keyword.value == "requires_grad" for arg in value.args):
            return "factory"
        if self.facts.is_fresh(value, scope, at):
            return "fresh"
        return "detach_grad"

    def _named_strategy(self, call: _Call) -> str:
        """``_strategy``, with ``Variable(t.data)`` told apart (its message names ``t``)."""
        strategy, value = self._strategy(call), call.data.value
        if strategy == "data" and isinstance(value, cst.Attribute) and value.attr.value == "data":
            return "data_attribute"
        return strategy

    def _call_item(self, call: _Call, volatile: bool) -> "Fact":
        strategy = self._named_strategy(call)
        value = call.data.value
        detail = {"strategy": strategy, "source": _code(value),
                  "receiver": _code(value.value) if strategy == "data_attribute" else ""}
        loose = isinstance(call.ancestors[-2], _LOOSE_PARENTS) if len(call.ancestors) > 1 else True

        def fix(updated: cst.Call) -> cst.CSTNode:
            found, _ = _arguments(updated)
            if "data" not in found:
                return updated
            flag, chosen = found.get("requires_grad"), strategy
            if call.requires_grad is not None and flag is None:  # an unsafe fix (TM607) dropped the flag
                chosen = self._named_strategy(replace(call, requires_grad=None))
            value = found["data"].value
            replacement = self._rewrite("data" if chosen == "data_attribute" else chosen, value,
                                        flag.value if flag is not None else None)
            if not loose and replacement is value:
                replacement = _atom(value)
            self.drop_import(updated.func)
            return keep_comments(updated, found["data"], replacement)

        return Fact(FactKind.UNWRAP_VOLATILE if volatile else FactKind.UNWRAP, call.node, fix, detail=detail)

    def _rewrite(self, strategy: str, value: cst.BaseExpression, flag: Optional[cst.BaseExpression]
                 ) -> cst.BaseExpression:
        is_data_attr = isinstance(value, cst.Attribute) and value.attr.value == "data" and not value.lpar
        already_detached = (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                            and value.func.attr.value == "detach" and not value.args)
        if is_data_attr:  # Variable(t.data) is t.detach()
            value = _method_call(value.value, "detach")
        if is_data_attr or already_detached:  # the cut is there already
            strategy = {"detach": "data", "detach_grad": "fresh"}.get(strategy, strategy)
        grad_args = [] if _is_true(flag) else [cst.Arg(flag)] if flag is not None else []
        if strategy == "data":
            return value
        if strategy == "detach":
            return _method_call(value, "detach")
        if strategy == "factory":
            return _append_keyword(value, "requires_grad", flag)
        if strategy == "fresh":
            return _method_call(value, "requires_grad_", grad_args)
        return _method_call(_method_call(value, "detach"), "requires_grad_", grad_args)

    # ---- TM101: `x, y = Variable(x), Variable(y)` is a no-op once unwrapped ----
    def _plan_statements(self, calls: List[_Call], handled: Set[int]) -> None:
        by_line: Dict[int, List[_Call]] = {}
        lines: Dict[int, Tuple[cst.SimpleStatementLine, tuple]] = {}
        for call in calls:
            anc = call.ancestors
            # Module/.../SimpleStatementLine, Assign, [Tuple, Element,] Call
            if len(anc) >= 4 and isinstance(anc[-2], cst.Assign):
                line_index = len(anc) - 3
            elif len(anc) >= 6 and isinstance(anc[-2], cst.Element) and isinstance(anc[-4], cst.Assign):
                line_index = len(anc) - 5
            else:
                continue
            line = anc[line_index]
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                by_line.setdefault(id(line), []).append(call)
                lines[id(line)] = (line, anc[:line_index + 1])
        for key, group in by_line.items():
            line, anc = lines[key]
            assign = line.body[0]
            if not self._is_noop(assign, group) or any(
                    "variable" not in comment.lower() for comment in _comments(line)):
                continue
            volatile = any(c.volatile is not None and not _is_false(c.volatile.value) for c in group)
            block = anc[-2]
            sole = isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) and len(block.body) == 1
            funcs = [c.node.func for c in group]

            def fix(updated: cst.SimpleStatementLine, funcs=funcs, sole=sole):
                for func in funcs:
                    self.drop_import(func)
                if sole:
                    return updated.with_changes(body=[cst.Pass()], trailing_whitespace=cst.TrailingWhitespace())
                return cst.RemoveFromParent()

            self.items.append(Fact(FactKind.NOOP_VOLATILE if volatile else FactKind.NOOP, line, fix,
                                   detail={"names": _code(assign.targets[0].target)}))
            handled.update(id(c.node) for c in group)

    def _is_noop(self, assign: cst.Assign, group: List[_Call]) -> bool:
        if len(assign.targets) != 1:
            return False
        target, value = assign.targets[0].target, assign.value
        pairs = [(target, value)]
        if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple):
            if len(target.elements) != len(value.elements):
                return False
            pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        calls = {id(c.node): c for c in group}
        for target_name, call_node in pairs:
            call = calls.get(id(call_node))
            if call is None or not isinstance(target_name, cst.Name) or call.requires_grad is not None and not \
                    _is_false(call.requires_grad.value):
                return False
            if not (isinstance(call.data.value, cst.Name) and call.data.value.value == target_name.value):
                return False
            if self._strategy(call) != "data":
                return False
        return True

    # ---- TM102: volatile ----
    def _plan_volatile(self, calls: List[_Call], handled: Set[int]) -> None:
        """``volatile=`` of ``Variable`` calls, and ``volatile=True`` passed to helpers not defined in this file
        (``to_var(x, volatile=True)`` imported from a utils module): their inference regions."""
        uses = [(c.node, c.ancestors, c.volatile.value, c) for c in calls
                if c.volatile is not None and not _is_false(c.volatile.value)]
        if self.ctx.imports.imports_module("torch"):
            uses += [(node, anc, flag, None) for node, anc, flag in self.facts.volatile_calls
                     if not _is_false(flag) and self._is_helper(node, anc)]
        regions: List[_Region] = []
        deferred = []
        for node, anc, flag, call in uses:
            if _is_true(flag):
                found, problems = self._regions(node, anc, set())
            else:
                found, problems = self._flag_regions(anc, flag)
            if found is None and call is None:
                continue  # `helper(volatile=<expression>)`: nothing known about it
            if found is None or (call is not None and problems and _is_true(flag)):
                # No region: the call is left as it is (it still runs) with a diagnostic, or an unsafe fix;
                # unless another site's region wraps it (decided below, so that one pass does it all).
                if call is not None and problems and _is_true(flag):
                    deferred.append((node, anc, flag, call, problems))
                    continue
                if call is not None:
                    handled.add(id(node))
                self.items.append(Fact(FactKind.VOLATILE_LEFT, node, detail={
                    "flag": _code(flag), "reason": problems[0][1] if problems else ""}))
                continue
            if not found and not problems and not _is_true(flag):
                self.items.append(Fact(FactKind.VOLATILE_NO_CALLERS, node, detail={"flag": _code(flag)}))
            for where, message in problems:
                self.items.append(Fact(FactKind.VOLATILE_UNWRAPPABLE, where, detail={"reason": message}))
            if call is not None and not problems and type(flag) is cst.Name:
                self._plan_flag_parameter(anc, flag.value, calls)
            regions.extend(found)
        chosen = self._plan_regions(regions)
        for node, anc, flag, call, problems in deferred:
            if any(self._wraps(region, anc) for region in chosen):
                continue  # inside another site's wrap: an ordinary call, fixed as such
            handled.add(id(node))
            self.items.append(Fact(FactKind.VOLATILE_LEFT, node, self._call_item(call, True).fix, unsafe=True,
                                   detail={"flag": _code(flag), "reason": problems[0][1]}))

    def _wraps(self, region: _Region, anc: tuple) -> bool:
        """Code at the end of ``anc`` runs inside ``region``'s ``with torch.no_grad():`` (a class body there
        does; a function defined there does not)."""
        if any(type(n) in (cst.FunctionDef, cst.Lambda) for n in anc[1:]) and region.kind == "range":
            return False
        if region.kind == "range":
            index = self.facts.position(self.ctx.model.module_scope, anc)
            return index is not None and region.start <= index <= region.end
        position = anc.index(region.node) if region.node in anc else -1
        return position >= 0 and not any(type(n) in (cst.FunctionDef, cst.Lambda) for n in anc[position + 1:])

    def _plan_flag_parameter(self, anc: tuple, name: str, calls: List[_Call]) -> None:
        """``def to_var(x, volatile=False): return Variable(x, volatile=volatile)``: once the wrappers go the
        parameter feeds nothing. It goes, with what every caller passes for it, when it is only read as
        ``volatile=`` of ``Variable`` calls, every call of the function is in this file (no other file of the
        tree imports it) and every value passed is a literal or a name (dropping it skips no side effect)."""
        function = anc[_scope_index(anc, functions_only=True)]
        if not isinstance(function, cst.FunctionDef) or id(function) in self._flag_functions:
            return
        self._flag_functions.add(id(function))
        params = function.params
        ordered = [*params.posonly_params, *params.params]
        param = next((p for p in (*ordered, *params.kwonly_params) if p.name.value == name), None)
        sites = self.ctx.model.call_sites(function)
        if param is None or not sites or (self.ctx.repo is not None and self.ctx.repo.keeps(function.name.value)):
            return
        flags = [c for c in calls if c.volatile is not None and type(c.volatile.value) is cst.Name
                 and c.volatile.value.value == name and function in c.ancestors]
        reads = [n for n in walk(function.body) if type(n) is cst.Name and n.value == name and not (
            type(parent(n)) is cst.Arg and parent(n).keyword is n or type(parent(n)) is cst.Attribute
            and parent(n).attr is n)]
        if len(reads) != len(flags):
            return  # read for something else too
        position = ordered.index(param) if param in ordered else None
        passed = []
        for site in sites:
            found = _passed(site.call, name, position)
            if found is ... or found is not None and type(found.value) not in (cst.Name, cst.Integer):
                return
            passed.append((site.call, found))
        fname = function.name.value

        def drop_parameter(updated: cst.Parameters) -> cst.Parameters:
            return _without_parameter(updated, name)

        self.items.append(Fact(FactKind.FLAG_PARAMETER, function.params, drop_parameter,
                               detail={"name": name, "function": fname}))
        for site, arg in passed:
            if arg is None:
                continue
            index = site.args.index(arg)
            self.items.append(Fact(FactKind.FLAG_ARGUMENT, site, lambda updated, index=index: _without_argument(
                updated, index), detail={"argument": _code(arg.value), "name": name, "function": fname}))

    def _is_helper(self, call: cst.Call, anc: tuple) -> bool:
        """A call of an imported function or of a method not defined in this file (``to_var(x, volatile=True)``)."""
        func = call.func
        if isinstance(func, cst.Name):
            qualname = self.ctx.qualname(func)
            return qualname is not None and not qualname.startswith("torch.") and func.value != "Variable"
        return isinstance(func, cst.Attribute) and func.attr.value != "Variable" and self._resolve(call, anc) is None

    def _flag_regions(self, anc: tuple, flag: cst.BaseExpression):
        """``volatile=<parameter>``: the callers that pass a true value are the inference sites.

        (None, []) when the flag is not a parameter of the enclosing function."""
        index = _scope_index(anc, functions_only=True)
        function = anc[index]
        if not (isinstance(flag, cst.Name) and isinstance(function, cst.FunctionDef)
                and flag.value in _param_names(function)):
            return None, []
        callers = self._callers(function, anc[:index + 1])
        found, problems, seen = [], [], set()
        self._caller_sites(function, flag.value, callers, found, problems, seen)
        return found, problems

    def _caller_sites(self, function: cst.FunctionDef, param: str, callers, found, problems, seen) -> None:
        for caller, caller_anc in callers:
            if id(caller) in seen:
                continue
            seen.add(id(caller))
            value = _argument(function, param, caller)
            if value is None or _is_false(value):
                continue
            if _is_true(value):
                regions, trouble = self._regions(caller, caller_anc, seen)
                found.extend(regions)
                problems.extend(trouble)
                continue
            index = _scope_index(caller_anc, functions_only=True)
            outer = caller_anc[index]
            outer_callers = self._callers(outer, caller_anc[:index + 1]) if isinstance(outer, cst.FunctionDef) else []
            if isinstance(value, cst.Name) and value.value in _param_names(outer) and outer_callers:
                self._caller_sites(outer, value.value, outer_callers, found, problems, seen)
            else:
                problems.append((caller, f"`{_code(value)}` selects volatile (no-graph) mode of "
                                         f"`{function.name.value}`: run this call under `torch.no_grad()` when "
                                         "it is true"))

    def _callers(self, function: cst.CSTNode, function_anc: tuple) -> List[Tuple[cst.Call, tuple]]:
        if not isinstance(function, cst.FunctionDef):
            return []
        name = function.name.value
        owner = function_anc[_scope_index(function_anc)]
        found = []
        for call, anc in self.facts.calls:
            func = call.func
            if isinstance(owner, cst.ClassDef):
                if isinstance(func, cst.Attribute) and func.attr.value == name and owner in anc:
                    found.append((call, anc))
            elif isinstance(func, cst.Name) and func.value == name:
                bindings = self.facts.lookup(name, self.facts.scope(anc))
                if bindings and len(bindings) == 1 and bindings[0].value is function:
                    found.append((call, anc))
        return found

    def _regions(self, site: cst.CSTNode, anc: tuple, seen: Set[int]):
        """Where ``site`` (a volatile value) is computed with: (regions, problems)."""
        if self._under_no_grad(anc):
            return [], []
        index = _scope_index(anc, functions_only=True)
        owner = anc[index]
        for position in range(len(anc) - 2, index, -1):
            if isinstance(anc[position], _LOOPS):
                return self._checked(_Region("loop", anc[position], anc[:position + 1]), site)
        if isinstance(owner, cst.Module):
            return self._checked(self._module_range(anc), site)
        if not isinstance(owner, cst.FunctionDef):
            return [], [(site, "it is in a lambda or a class body, with no statements to wrap")]
        if self._returns(owner, anc):
            callers = [c for c in self._callers(owner, anc[:index + 1]) if id(c[0]) not in seen]
            if callers:
                found, problems = [], []
                for caller, caller_anc in callers:
                    seen.add(id(caller))
                    regions, trouble = self._regions(caller, caller_anc, seen)
                    found.extend(regions)
                    problems.extend(trouble)
                return found, problems
            return self._checked(_Region("body", owner, anc[:index + 1], returns=True), site)
        return self._checked(_Region("body", owner, anc[:index + 1]), site)

    def _checked(self, region: _Region, site: cst.CSTNode):
        why = self._unwrappable(region)
        return ([], [(site, why)]) if why else ([region], [])

    def _under_no_grad(self, anc: tuple) -> bool:
        """The site at the end of ``anc`` already runs with grad off (the model's grad-mode regions:
        ``no_grad``, ``inference_mode``, ``set_grad_enabled(False)``, as ``with`` or decorator)."""
        return self.ctx.model.grad_mode(anc[-1]) is GradMode.OFF

    def _returns(self, function: cst.FunctionDef, anc: tuple) -> bool:
        """Is the value at the end of ``anc`` returned by ``function`` (directly or through a name)?"""
        position = anc.index(function)
        for node in anc[position + 1:]:
            if isinstance(node, cst.Return):
                return True
            if isinstance(node, cst.Assign):
                returns = self.ctx.model.scope_of_definition(function).returns
                returned = {name for value in returns for name in _names_in(value)}
                return any(n.value in returned for t in node.targets for n in _target_names(t.target))
        return False

    def _backward_functions(self) -> Set[int]:
        """Functions of this file that call ``backward()`` directly or through other functions of the file."""
        if self._with_backward is not None:
            return self._with_backward
        direct: Set[int] = set()
        for anc in self.facts.backward:
            direct.update(id(n) for n in anc if isinstance(n, cst.FunctionDef))
        edges: List[Tuple[int, int]] = []
        for call, anc in self.facts.calls:
            target = self._resolve(call, anc)
            if target is not None:
                edges.extend((id(n), id(target)) for n in anc if isinstance(n, cst.FunctionDef))
        changed = True
        while changed:
            changed = False
            for caller, callee in edges:
                if callee in direct and caller not in direct:
                    direct.add(caller)
                    changed = True
        self._with_backward = direct
        return direct

    def _resolve(self, call: cst.Call, anc: tuple) -> Optional[cst.FunctionDef]:
        """The function of this file that ``call`` calls, if it can tell."""
        key = id(call)
        if key not in self._resolved:
            self._resolved[key] = self._find_function(call, anc)
        return self._resolved[key]

    def _find_function(self, call: cst.Call, anc: tuple) -> Optional[cst.FunctionDef]:
        func = call.func
        if isinstance(func, cst.Name):
            bindings = self.facts.lookup(func.value, self.facts.scope(anc))
            if bindings and len(bindings) == 1 and bindings[0].kind == "def":
                return bindings[0].value
        elif isinstance(func, cst.Attribute):
            for node in reversed(anc):
                if isinstance(node, cst.ClassDef):
                    for stmt in node.body.body:
                        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == func.attr.value:
                            return stmt
                    break
        return None

    def _in_region(self, region: _Region, anc: tuple) -> bool:
        if region.kind == "range":
            index = self.facts.position(self.ctx.model.module_scope, anc)
            return index is not None and region.start <= index <= region.end and not any(
                isinstance(n, (cst.FunctionDef, cst.ClassDef)) for n in anc[1:])
        return id(anc[-1]) in self._inside(region.node)

    def _inside(self, node: cst.CSTNode) -> Set[int]:
        """The ids of every node under ``node`` (itself included), made once per region: a region is checked
        against every call of the file."""
        inside = self._subtrees.get(id(node))
        if inside is None:
            inside = self._subtrees[id(node)] = {id(n) for n in walk(node)}
        return inside

    def _members(self, region: _Region, chains: Iterable[tuple]) -> List[tuple]:
        """The ancestor chains of ``chains`` whose last node is in ``region`` (as ``_in_region`` tells, with one
        look-up in the region's node set per chain: a region is checked against every call of the file)."""
        if region.kind == "range":
            return [anc for anc in chains if self._in_region(region, anc)]
        inside = self._inside(region.node)
        return [anc for anc in chains if id(anc[-1]) in inside]

    def _unwrappable(self, region: _Region) -> str:
        if self._members(region, self.facts.backward):
            return "the code around it also calls `backward()`, so it cannot all run under `torch.no_grad()`"
        with_backward = self._backward_functions()
        for anc in self._members(region, (anc for _, anc in self.facts.calls)):
            target = self._resolve(anc[-1], anc)
            if target is not None and id(target) in with_backward:
                return (f"the code around it calls `{target.name.value}()`, which calls `backward()`, so it cannot "
                        "all run under `torch.no_grad()`")
        if self._members(region, self.facts.yields):
            return "the code around it yields, and `torch.no_grad()` would stay on in the consumer"
        return ""

    def _module_range(self, anc: tuple) -> _Region:
        """Module level: the statement with the site and every later statement that uses what it computes."""
        module = anc[0]
        body = module.body
        start = self.facts.position(self.ctx.model.module_scope, anc)
        if start not in self._ranges:
            tainted = set(_bound_in(body[start]))
            end = start
            for index in range(start + 1, len(body)):
                statement = body[index]
                if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                    continue
                reads = self._reads.get(id(statement))
                if reads is None:
                    reads = self._reads[id(statement)] = frozenset(_names_in(statement))
                if not tainted.isdisjoint(reads):
                    end = index
                    tainted.update(_bound_in(statement))
            self._ranges[start] = end
        return _Region("range", module, (module,), start, self._ranges[start])

    def _plan_regions(self, regions: List[_Region]) -> List[_Region]:
        """One wrap per region: the same loop/body once, overlapping module ranges merged, nested ones dropped."""
        chosen: List[_Region] = []
        for region in regions:
            for existing in chosen:
                if existing.kind == region.kind and existing.node is region.node and (
                        region.kind != "range" or region.start <= existing.end and existing.start <= region.end):
                    existing.start = min(existing.start, region.start)
                    existing.end = max(existing.end, region.end)
                    break
            else:
                chosen.append(region)
        for region in chosen:
            if not any(other is not region and self._contains(other, region) for other in chosen):
                self.items.append(self._region_item(region))
        return chosen

    def _contains(self, outer: _Region, inner: _Region) -> bool:
        if outer.kind == "range":
            if inner.kind == "range":
                return False
            return self._in_region(outer, inner.ancestors)
        return outer.node in inner.ancestors[:-1]

    def _region_item(self, region: _Region) -> "Fact":
        if region.kind == "loop":
            def fix(updated):
                return _wrap([updated], self.torch_expr("no_grad"))
            return Fact(FactKind.WRAP_LOOP, region.node, fix)
        if region.kind == "body":
            def fix(updated: cst.FunctionDef):
                body = updated.body
                statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [
                    cst.SimpleStatementLine(body=list(body.body))]
                keep = _docstring_count(statements)
                block = cst.IndentedBlock(body=[*statements[:keep], _wrap(statements[keep:], self.torch_expr("no_grad"))])
                if isinstance(body, cst.IndentedBlock):
                    block = body.with_changes(body=block.body)
                return updated.with_changes(body=block)
            return Fact(FactKind.WRAP_BODY, region.node, fix, detail={
                "function": region.node.name.value, "returns": "yes" if region.returns else ""})
        body = list(region.node.body)
        if region.start == region.end:
            def fix(updated):
                return _wrap([updated], self.torch_expr("no_grad"))
            return Fact(FactKind.WRAP_STATEMENT, body[region.start], fix)
        original = body[region.start:region.end + 1]

        def fix(updated: cst.Module):
            span = _now_span(self.ctx, original, list(updated.body))
            if span is None:
                return updated
            new_body = list(updated.body)
            first, last = span
            moved = [new_body[first]] + [_unindented_blank_lines(s) for s in new_body[first + 1:last + 1]]
            new_body[first:last + 1] = [_wrap(moved, self.torch_expr("no_grad"))]
            return updated.with_changes(body=new_body)

        first_line = _code(original[0]).strip().splitlines()[0]
        return Fact(FactKind.WRAP_RANGE, region.node, fix, detail={"first": first_line,
                                                                   "count": str(len(original))})

    # ---- TM103 and other uses of the name ----
    def _plan_references(self) -> None:
        tuples_done: Set[int] = set()
        for ref, anc in self.facts.variable_refs:
            parent = anc[-2] if len(anc) > 1 else None
            if isinstance(parent, cst.Attribute) or (isinstance(parent, cst.Call) and parent.func is ref) or (
                    isinstance(parent, cst.Arg) and parent.keyword is ref) or any(
                    isinstance(n, (cst.Import, cst.ImportFrom)) for n in anc):
                continue
            comparison = self._type_comparison(anc)
            if comparison is not None:
                self.items.append(self._comparison_item(*comparison))
                continue
            kind = self._type_context(anc)
            if kind == "tuple":
                tuple_node = anc[-3]
                if id(tuple_node) not in tuples_done:
                    tuples_done.add(id(tuple_node))
                    self.items.append(self._tuple_item(tuple_node))
                continue
            if kind is not None:
                self.items.append(self._reference_item(ref, FactKind.TYPE_REFERENCE, {"where": kind}))
                continue
            if (isinstance(parent, cst.Arg) and len(anc) > 2 and isinstance(anc[-3], cst.Call)
                    and dotted(anc[-3].func) == "map" and anc[-3].args[0] is parent):
                self.items.append(self._reference_item(ref, FactKind.MAP_VARIABLE, {}, "Tensor.detach"))
                continue
            self.items.append(Fact(FactKind.VARIABLE_VALUE, ref))

    def _type_context(self, anc: tuple) -> Optional[str]:
        """"tuple", "isinstance()", "an annotation" when the reference at the end of ``anc`` names a type."""
        parent = anc[-2] if len(anc) > 1 else None
        if any(isinstance(n, cst.Annotation) for n in anc):
            return "an annotation"
        checks = ("isinstance", "issubclass")
        if isinstance(parent, cst.Arg) and isinstance(anc[-3], cst.Call) and dotted(anc[-3].func) in checks:
            return f"`{dotted(anc[-3].func)}()`" if anc[-3].args[1:2] and anc[-3].args[1] is parent else None
        if (isinstance(parent, cst.Element) and len(anc) > 4 and isinstance(anc[-3], cst.Tuple)
                and isinstance(anc[-4], cst.Arg) and isinstance(anc[-5], cst.Call)
                and dotted(anc[-5].func) in checks and anc[-5].args[1:2] and anc[-5].args[1] is anc[-4]):
            return "tuple"
        if (isinstance(parent, cst.Element) and len(anc) > 4 and isinstance(anc[-3], cst.Tuple)
                and isinstance(anc[-4], cst.ComparisonTarget) and isinstance(anc[-4].operator, (cst.In, cst.NotIn))
                and self._type_call(anc[-5].left) is not None):
            return "`type(...) in (...)`"
        return None

    def _type_call(self, expr: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """``x`` for ``type(x)``."""
        if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "type"
                and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star
                and "type" not in self.ctx.imports.rebound and "type" not in self.ctx.imports.aliases):
            return expr.args[0].value
        return None

    def _type_comparison(self, anc: tuple):
        """``type(x) == Variable`` (or ``is``, ``!=``, ``is not``, either order): (comparison, negated)."""
        if len(anc) < 3 or not isinstance(anc[-2], cst.ComparisonTarget):
            if len(anc) >= 2 and isinstance(anc[-2], cst.Comparison) and anc[-2].left is anc[-1]:
                comparison = anc[-2]
                if len(comparison.comparisons) == 1:
                    target = comparison.comparisons[0]
                    return self._comparison(comparison, target.comparator, target.operator)
            return None
        comparison = anc[-3]
        if len(comparison.comparisons) != 1:
            return None
        return self._comparison(comparison, comparison.left, anc[-2].operator)

    def _comparison(self, comparison, other, operator):
        if self._type_call(other) is None:
            return None
        if isinstance(operator, (cst.Equal, cst.Is)):
            return comparison, False
        if isinstance(operator, (cst.NotEqual, cst.IsNot)):
            return comparison, True
        return None

    def _comparison_item(self, comparison: cst.Comparison, negated: bool) -> _Item:
        type_side = 0 if self._type_call(comparison.left) is not None else 1

        def fix(updated: cst.Comparison):
            call = updated.left if type_side == 0 else updated.comparisons[0].comparator
            subject = call.args[0].value
            check = cst.Call(func=cst.Name("isinstance"), args=[
                cst.Arg(subject, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(self.torch_expr("Tensor"))])
            self._drop_reference_imports()
            result = cst.UnaryOperation(operator=cst.Not(), expression=check) if negated else check
            return result.with_changes(lpar=updated.lpar, rpar=updated.rpar)

        return Fact(FactKind.TYPE_COMPARISON, comparison, fix)

    def _tuple_item(self, tuple_node: cst.Tuple) -> _Item:
        def is_variable(expr):
            return isinstance(expr, (cst.Name, cst.Attribute)) and self.ctx.qualname(expr) == VARIABLE

        flags = [is_variable(e.value) for e in tuple_node.elements]

        def fix(updated: cst.Tuple):
            self._drop_reference_imports()
            tensor = self.torch_expr("Tensor")
            elements = []
            for element, variable in zip(updated.elements, flags):
                elements.append(element.with_changes(value=tensor) if variable else element)
            elements = _dedupe(elements)
            if len(elements) == 1:
                return elements[0].value.with_changes(lpar=[], rpar=[])
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(elements=elements)

        return Fact(FactKind.TYPE_TUPLE, tuple_node, fix)

    def _reference_item(self, ref: cst.CSTNode, kind: "FactKind", detail: Dict[str, str],
                        replacement: str = "Tensor") -> "Fact":
        def fix(updated):
            self._drop_reference_imports()
            return self.torch_expr(replacement)
        return Fact(kind, ref, fix, detail=detail)

    def _drop_reference_imports(self) -> None:
        for ref, _ in self.facts.variable_refs:
            self.drop_import(ref)


def _dedupe(elements: List[cst.Element]) -> List[cst.Element]:
    """Drop repeated elements (``(torch.Tensor, torch.Tensor)`` once ``Variable`` became ``torch.Tensor``)."""
    seen: Set[str] = set()
    out = []
    for element in elements:
        key = _code(element.value)
        if key not in seen:
            seen.add(key)
            out.append(element)
    return out


def _append_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``f(a, b)`` -> ``f(a, b, name=value)``, one argument per line if the call is laid out that way."""
    args = list(call.args)
    new_comma = cst.MaybeSentinel.DEFAULT
    if args:
        comma = args[-1].comma
        if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
            args[-1] = args[-1].with_changes(comma=comma.with_changes(whitespace_after=call.whitespace_before_args))
            new_comma = comma
        elif comma is cst.MaybeSentinel.DEFAULT or not comma.whitespace_after.value:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(cst.Arg(value, keyword=cst.Name(name), comma=new_comma,
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return call.with_changes(args=args)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _param_names(function: cst.CSTNode) -> List[str]:
    if not isinstance(function, cst.FunctionDef):
        return []
    params = function.params
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def _argument(function: cst.FunctionDef, param: str, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The expression ``call`` passes for ``param`` of ``function`` (its default if it passes none)."""
    params = [*function.params.posonly_params, *function.params.params]
    if isinstance(call.func, cst.Attribute) and params and params[0].name.value == "self":
        params = params[1:]
    for arg in call.args:
        if arg.star:
            return _expr("unknown")
        if arg.keyword is not None and arg.keyword.value == param:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None]
    names = [p.name.value for p in params]
    if param in names and names.index(param) < len(positional):
        return positional[names.index(param)].value
    for p in (*params, *function.params.kwonly_params):
        if p.name.value == param:
            return p.default
    return None


def _passed(call: cst.Call, name: str, position: Optional[int]):
    """The argument ``call`` passes for parameter ``name`` (at ``position``): ``None`` when none, ``...`` when
    it cannot be told (``*args``, ``**kwargs``)."""
    if any(arg.star for arg in call.args):
        return ...
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    plain = [arg for arg in call.args if arg.keyword is None]
    return plain[position] if position is not None and position < len(plain) else None


def _without_argument(call: cst.Call, index: int) -> cst.Call:
    """``call`` less its ``index``-th argument (the previous one takes over its comma when it was last)."""
    args = list(call.args)
    removed = args.pop(index)
    if args and index == len(args):
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=args)


def _without_parameter(params: cst.Parameters, name: str) -> cst.Parameters:
    """``params`` less parameter ``name`` (commas as for ``_without_argument``)."""
    groups = {}
    for field_name in ("posonly_params", "params", "kwonly_params"):
        group = list(getattr(params, field_name))
        for index, param in enumerate(group):
            if param.name.value == name:
                removed = group.pop(index)
                if group and index == len(group):
                    group[-1] = group[-1].with_changes(comma=removed.comma)
                break
        groups[field_name] = group
    return params.with_changes(**groups)


def _now_span(ctx, statements: List[cst.CSTNode], updated: List[cst.CSTNode]) -> Optional[Tuple[int, int]]:
    """Where the consecutive original ``statements`` are in the rewritten body ``updated``: each found by what
    it became (``ctx.now``), so that statements other fixes added around them (the file's device, say) or
    rewrote stay out of the range unless they lie inside it."""
    where = {id(node): index for index, node in enumerate(updated)}
    found = []
    for statement in statements:
        now = ctx.now(statement)
        parts = now.nodes if isinstance(now, cst.FlattenSentinel) else (now,)
        found.extend(where[id(part)] for part in parts if id(part) in where)
    return (min(found), max(found)) if found else None


