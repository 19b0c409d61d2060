"""Value facts: what an expression holds, one ``Value`` per (expression, scope), with "unknown" explicit.

A value is followed through names (the join of every binding), arithmetic, methods and torch calls
(``torchapi``), subscripts and tuple unpacking (``_, c, h, w = x.size()`` gives Python ints), the
returns of functions of the file and, for a helper's parameters, what its call sites pass.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from codemods import torchapi
from codemods.model.scopes import Binding, BindingKind, Scope, index_value
from codemods.walk import walk


class Kind(enum.Enum):
    TENSOR = "tensor"
    NUMBER = "number"  # a Python scalar (int, float, bool: ``dtype`` says which when known)
    SIZE = "size"  # a ``torch.Size`` (``x.size()``, ``x.shape``): a tuple of Python ints
    MODULE = "module"  # an ``nn.Module`` (``of``: its class); calling it gives a tensor
    LOSS = "loss"  # a reducing loss (a function or an ``nn.*Loss``): calling it gives a 0-dim tensor
    DISTRIBUTION = "distribution"  # ``torch.distributions.X(...)`` (``rank``: its samples' rank)
    NAMESPACE = "namespace"  # ``parser.parse_args()`` and config-like parameters: attributes are options
    OTHER = "other"  # known not to be any of those (strings, containers, classes, modules, None)
    UNKNOWN = "unknown"  # the file does not say
    PENDING = "pending"  # internal: a value that depends on itself while it is computed; never returned


@dataclass(frozen=True)
class Value:
    """What the file says about one value. ``None`` in a field means unknown."""

    kind: Kind = Kind.UNKNOWN
    # tensors: dimensions (0: one number); distributions: their samples'; a value of unknown kind may have a
    # rank too, "if it is a tensor" (``x.view(-1)`` of an unknown ``x``: a reduction of it gives one number)
    rank: Optional[int] = None
    graph: Optional[bool] = None  # may carry an autograd graph: False = provably not
    dtype: Optional[str] = None  # tensors: canonical torch dtype (``int64``); numbers: ``int``/``float``/``bool``
    device: Optional[str] = None  # tensors: ``cuda`` or ``cpu`` when the code says
    of: Optional[str] = None  # modules, losses, distributions: the qualified class when known

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def is_number(self) -> bool:
        """One number: a Python scalar or a 0-dim tensor."""
        return self.kind is Kind.NUMBER or (self.kind is Kind.TENSOR and self.rank == 0)

    @property
    def known(self) -> bool:
        return self.kind not in (Kind.UNKNOWN, Kind.PENDING)


UNKNOWN = Value()
PENDING = Value(Kind.PENDING)
OTHER = Value(Kind.OTHER, graph=False)
NUMBER = Value(Kind.NUMBER, graph=False)
INT = Value(Kind.NUMBER, graph=False, dtype="int")
SIZE = Value(Kind.SIZE, graph=False)
TENSOR = Value(Kind.TENSOR)
SCALAR_TENSOR = Value(Kind.TENSOR, rank=0)

# -- naming conventions: what a name says when the file does not (documented guesses) -------------------
# ``output = model(x)`` with ``model`` a parameter or undefined: what such names are called with is a tensor.
MODEL_NAME = re.compile(r"^(?i:model|net|network|encoder|decoder|generator|discriminator|critic|classifier|"
                        r"\w+_(?:model|net)|net_?[A-Z]\w*)$|^[GD]$")
# Parameters named like these hold options (numbers, flags): ``def train(args): ... args.lr``.
NAMESPACE_NAME = re.compile(r"(?i)^(args?|opts?|options|config|cfg|conf|hparams|flags)$")
NUMBER_BUILTINS = frozenset({"len", "int", "float", "round"})
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)
NUMBER_UPDATES = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)
_MAX_DEPTH = 12
# Methods whose result's shape follows from the receiver's, whatever the receiver is (numpy arrays too).
SHAPED_METHODS = torchapi.SAME_SHAPE_METHODS | torchapi.DIM_REDUCTIONS | frozenset(torchapi.FULL_REDUCTIONS) | {
    "view", "reshape", "flatten", "unsqueeze", "t", "transpose", "permute"}


def _join_field(values: Sequence[Value], name: str):
    found = {getattr(v, name) for v in values}
    return found.pop() if len(found) == 1 else None


def join(values: Iterable[Value], *, broadcast: bool = False) -> Value:
    """One value for alternatives (a name's bindings, ``a if c else b``) or, with ``broadcast``, for the
    operands of arithmetic: numbers and tensors give a tensor (a Python number counts as rank 0; a broadcast
    takes the largest rank); other kinds only join their own kind; anything unknown makes it unknown."""
    values = list(values)
    found = [v for v in values if v.kind is not Kind.PENDING]
    if not found:
        return PENDING if values else UNKNOWN
    kinds = {v.kind for v in found}
    if kinds == {Kind.UNKNOWN}:
        return Value(rank=_join_field(found, "rank")) if not broadcast else UNKNOWN
    if Kind.UNKNOWN in kinds:
        return UNKNOWN
    graphs = {v.graph for v in found}
    graph = True if True in graphs else (False if graphs == {False} else None)
    if kinds == {Kind.NUMBER}:
        return Value(Kind.NUMBER, graph=False, dtype=_join_field(found, "dtype"))
    if kinds <= {Kind.NUMBER, Kind.TENSOR}:
        tensors = [v for v in found if v.kind is Kind.TENSOR]
        ranks = [0 if v.kind is Kind.NUMBER else v.rank for v in found]
        if None in ranks:
            rank = None
        elif broadcast:
            rank = max(ranks)
        else:
            rank = ranks[0] if len(set(ranks)) == 1 else None
        return Value(Kind.TENSOR, rank=rank, graph=graph, dtype=_join_field(tensors, "dtype") if not broadcast
                     or len(tensors) == len(found) else None, device=_join_field(tensors, "device"))
    if len(kinds) == 1:
        return Value(kinds.pop(), rank=_join_field(found, "rank"), graph=graph, dtype=_join_field(found, "dtype"),
                     device=_join_field(found, "device"), of=_join_field(found, "of"))
    return UNKNOWN


def positional(call: cst.Call) -> List[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def keywords(call: cst.Call) -> Dict[str, cst.Arg]:
    return {a.keyword.value: a for a in call.args if a.keyword is not None}


def is_minus_one(node: cst.CSTNode) -> bool:
    return (type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus
            and type(node.expression) is cst.Integer and node.expression.value == "1")


def full_reduction(call: cst.Call, name: str, extra: int = 0) -> bool:
    """``x.sum()``/``x.norm(2)`` (``torch.sum(x)`` with ``extra=1``): a reduction over every element."""
    if name not in torchapi.FULL_REDUCTIONS or any(a.star for a in call.args):
        return False
    if set(keywords(call)) & {"dim", "axis", "keepdim"}:
        return False
    return len(positional(call)) <= torchapi.FULL_REDUCTIONS[name] + extra


def single_dim(call: cst.Call, extra: int = 0) -> Optional[int]:
    """The dimension of ``x.sum(0)``/``x.mean(dim=-1)`` (``torch.sum(x, 0)`` with ``extra=1``), no keepdim."""
    if any(a.star for a in call.args) or set(keywords(call)) - {"dim"}:
        return None
    dims = [a.value for a in positional(call)[extra:]] + [a.value for a in call.args if a.keyword is not None]
    if len(dims) != 1:
        return None
    if is_minus_one(dims[0]):
        return -1
    return int(dims[0].value) if type(dims[0]) is cst.Integer and dims[0].value.isdigit() else None


def reduces(call: cst.Call, positional_limit: int) -> bool:
    """A loss call/constructor that certainly reduces to one value (no ``reduce=False``/``reduction='none'``)."""
    if len(positional(call)) > positional_limit or any(a.star for a in call.args):
        return False
    found = keywords(call)
    reduce = found.get("reduce")
    if reduce is not None and not (type(reduce.value) is cst.Name and reduce.value.value in ("True", "None")):
        return False
    reduction = found.get("reduction")
    if reduction is not None:
        return type(reduction.value) is cst.SimpleString and reduction.value.evaluated_value in torchapi.REDUCING
    return True


def _literal_dtype(node: cst.CSTNode) -> Optional[str]:
    """The dtype a ``dtype=`` argument names (``torch.long`` -> ``int64``)."""
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "torch":
        return torchapi.DTYPES.get(node.attr.value)
    return None


def _nesting(node: cst.CSTNode, element: bool = False) -> Optional[int]:
    """The rank of ``torch.tensor([[1, 2], [3, 4]])``'s data: list nesting (``None`` unless literal). A name
    inside a list is taken as a number; a bare name may be anything (a list, an array, a tensor)."""
    if type(node) in (cst.Integer, cst.Float, cst.UnaryOperation) or element and type(node) is cst.Name:
        return 0
    if type(node) in (cst.List, cst.Tuple) and node.elements:
        inner = {_nesting(e.value, element=True) for e in node.elements}
        return inner.pop() + 1 if len(inner) == 1 and None not in inner else None
    return None


class Values:
    """The inference, memoized per (expression, scope). ``model`` answers scopes, bindings and names."""

    def __init__(self, model):
        self.model = model
        self._memo: Dict[Tuple[int, int], Value] = {}
        self._pending: set = set()
        self._cycles: set = set()  # keys found pending while the current value was computed
        self._appended: Dict[int, Optional[list]] = {}

    def value(self, node: cst.CSTNode, scope: Scope, depth: int = 0) -> Value:
        key = (id(node), id(scope))
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in self._pending or depth > _MAX_DEPTH:
            if key in self._pending:
                self._cycles.add(key)
            return PENDING
        self._pending.add(key)
        outer, self._cycles = self._cycles, set()
        try:
            result = self._infer(node, scope, depth + 1)
        finally:
            self._pending.discard(key)
            inner = self._cycles - {key}
            self._cycles = outer | inner
        if not inner:  # a value computed inside another's cycle depends on who asked first: not kept
            self._memo[key] = result
        return result

    # -- expressions ------------------------------------------------------------------------------
    def _infer(self, node: cst.CSTNode, scope: Scope, depth: int) -> Value:
        kind = type(node)
        if kind is cst.Integer:
            return INT
        if kind in (cst.Float, cst.Imaginary):
            return Value(Kind.NUMBER, graph=False, dtype="float" if kind is cst.Float else None)
        if kind in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple, cst.Dict,
                    cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp, cst.Lambda):
            return OTHER
        if kind in (cst.Name, cst.Attribute):
            qualified = self.model.qualname(node)
            if qualified is not None:
                return self._qualified(qualified)
        if kind is cst.Name:
            return self._name(node.value, scope, depth)
        if kind is cst.Attribute:
            return self._attribute(node, scope, depth)
        if kind is cst.Call:
            return self._call(node, scope, depth)
        if kind is cst.Subscript:
            return self._subscript(node, scope, depth)
        if kind is cst.BinaryOperation:
            left, right = self.value(node.left, scope, depth), self.value(node.right, scope, depth)
            if type(node.operator) is cst.MatrixMultiply:
                return TENSOR if Kind.TENSOR in (left.kind, right.kind) else UNKNOWN
            if not isinstance(node.operator, ARITHMETIC):
                return UNKNOWN
            if not {left.kind, right.kind} <= {Kind.NUMBER, Kind.TENSOR, Kind.PENDING}:
                return UNKNOWN
            result = join([left, right], broadcast=True)
            if result.kind is Kind.NUMBER and (type(node.operator) is cst.Divide or "float" in (left.dtype,
                                                                                               right.dtype)):
                result = replace(result, dtype="float")
            return result
        if kind is cst.UnaryOperation:
            if type(node.operator) in (cst.Minus, cst.Plus):
                return self.value(node.expression, scope, depth)
            return UNKNOWN
        if kind is cst.Comparison:
            operands = [self.value(node.left, scope, depth)] + [
                self.value(t.comparator, scope, depth) for t in node.comparisons]
            if any(v.kind is Kind.TENSOR for v in operands) and len(node.comparisons) == 1:
                rank = join(operands, broadcast=True).rank
                return Value(Kind.TENSOR, rank=rank, graph=False, dtype="bool")
            return UNKNOWN
        if kind is cst.IfExp:
            return join([self.value(node.body, scope, depth), self.value(node.orelse, scope, depth)])
        return UNKNOWN

    @staticmethod
    def _qualified(qualified: str) -> Value:
        module, _, name = qualified.rpartition(".")
        if module == "torch.nn.functional" and name in torchapi.LOSS_FUNCTIONS:
            return Value(Kind.LOSS, of=qualified)
        if module == "math":
            return Value(Kind.NUMBER, graph=False, dtype="float")
        return OTHER

    def _name(self, name: str, scope: Scope, depth: int) -> Value:
        if name in ("True", "False"):
            return Value(Kind.NUMBER, graph=False, dtype="bool")
        if name == "None":
            return OTHER
        found, bindings = self.model.lookup(name, scope)
        if not bindings:
            return UNKNOWN
        bindings = [b for b in bindings if b.kind is not BindingKind.DELETE]
        result = join([self.binding(b, found, depth) for b in bindings])
        if (result.kind is Kind.UNKNOWN or result.kind is Kind.TENSOR and result.rank is None) \
                and name in found.backward \
                and sum(1 for b in bindings if b.kind is not BindingKind.PARAMETER) <= 1:
            return replace(result, kind=Kind.TENSOR, rank=0)  # `.backward()` without a gradient: one value
        return result

    def binding(self, binding: Binding, scope: Scope, depth: int = 0) -> Value:
        """What one binding binds (``scope``: the scope it is in)."""
        kind = binding.kind
        if kind is BindingKind.ASSIGN or kind is BindingKind.WALRUS:
            return self.value(binding.value, scope, depth)
        if kind is BindingKind.AUGMENTED:
            if not isinstance(binding.value.operator, NUMBER_UPDATES):
                return UNKNOWN
            result = self.value(binding.value.value, scope, depth)
            return result if result.kind in (Kind.NUMBER, Kind.TENSOR, Kind.PENDING) else UNKNOWN
        if kind is BindingKind.UNPACK:
            if binding.index is None:
                return UNKNOWN
            return self.element(binding.value, binding.index, scope, depth)
        if kind is BindingKind.FOR:
            return self._iterated(binding, scope, depth)
        if kind in (BindingKind.FUNCTION, BindingKind.CLASS, BindingKind.IMPORT):
            return OTHER
        if kind is BindingKind.PARAMETER:
            return self.model.parameter_value(binding, scope, depth)
        return UNKNOWN

    def _iterated(self, binding: Binding, scope: Scope, depth: int) -> Value:
        """A ``for`` target: parameters of ``.parameters()``, ints of ``range()``, rows of a tensor."""
        iterable = binding.value
        if self.model.iterates_parameters(iterable, scope):
            named = any(type(n) is cst.Attribute and n.attr.value == "named_parameters" for n in walk(iterable))
            if not named or binding.index == 1:
                return Value(Kind.TENSOR, graph=True)
            return OTHER if binding.index == 0 else UNKNOWN
        if type(iterable) is cst.Call and type(iterable.func) is cst.Name and self.model.lookup(
                iterable.func.value, scope)[1] is None:
            builtin = iterable.func.value
            if builtin == "range":
                return INT if binding.index is None else UNKNOWN
            if builtin == "enumerate" and binding.index == 0:
                return INT
            lists = iterable.args[1:2] if builtin == "enumerate" and binding.index == 1 else (
                iterable.args[binding.index:binding.index + 1] if builtin == "zip" and binding.index is not None
                else ())
            return self._list_items(lists[0].value, scope, depth) if lists else UNKNOWN
        if type(iterable) is cst.Name and binding.index is None:
            items = self._list_items(iterable, scope, depth)
            if items.known:
                return items
        rows = self.value(iterable, scope, depth)
        if rows.kind is Kind.TENSOR and binding.index is None:
            return replace(rows, rank=None if rows.rank is None else max(rows.rank - 1, 0))
        return UNKNOWN

    def _list_items(self, expr: cst.CSTNode, scope: Scope, depth: int) -> Value:
        """The items of a list the file builds from literals and ``append`` (joined), else unknown."""
        if type(expr) is not cst.Name:
            return UNKNOWN
        owner, _ = self.model.lookup(expr.value, scope)
        sources = owner is not None and self.model.list_sources(expr.value, owner)
        return join([self.value(e, s, depth + 1) for e, s in sources]) if sources else UNKNOWN

    def _attribute(self, node: cst.Attribute, scope: Scope, depth: int) -> Value:
        attr, receiver = node.attr.value, node.value
        if attr == "data":
            inner = self.value(receiver, scope, depth)
            return replace(inner, graph=False) if inner.kind is Kind.TENSOR else UNKNOWN
        if attr == "grad":
            return Value(Kind.TENSOR, graph=None if self.model.creates_graph else False)
        if attr in ("weight", "bias") or attr.startswith(("weight_", "bias_")):
            return Value(Kind.TENSOR, graph=True)
        if attr == "shape":
            return SIZE
        if attr in ("T", "mT"):
            inner = self.value(receiver, scope, depth)
            return inner if inner.kind is Kind.TENSOR else UNKNOWN
        if attr in ("ndim", "is_cuda", "requires_grad"):
            return Value(Kind.NUMBER, graph=False, dtype="int" if attr == "ndim" else "bool")
        if type(receiver) is cst.Name:
            if receiver.value == "self":
                values = self.model.self_attribute_values(attr, scope)
                return join([self.value(v, s, depth) for s, v in values]) if values else UNKNOWN
            if self.value(receiver, scope, depth).kind is Kind.NAMESPACE:
                return NUMBER  # an option: assumed a Python scalar
        return UNKNOWN

    def _subscript(self, node: cst.Subscript, scope: Scope, depth: int) -> Value:
        value = node.value
        index = index_value(node)
        if index == 0 and type(value) is cst.Attribute and value.attr.value == "data":
            inner = self.value(value.value, scope, depth)
            if inner.kind is Kind.TENSOR and inner.rank == 0:
                return NUMBER  # `loss.data[0]`: the 0.3 way to read the one value
        if index is not None and type(value) in (cst.Call, cst.Tuple, cst.List):
            found = self.element(value, index, scope, depth)
            if found.known or found.kind is Kind.PENDING:
                return found
        inner = self.value(value, scope, depth)
        if inner.kind is Kind.SIZE:
            return INT if index is not None or _integer_index(node) else UNKNOWN
        if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Slice:
            return inner if inner.kind in (Kind.TENSOR, Kind.UNKNOWN) else UNKNOWN
        if inner.kind is not Kind.TENSOR:
            return UNKNOWN
        if inner.rank is not None and (_integer_index(node) or self._int_index(node, scope, depth)):
            return replace(inner, rank=max(inner.rank - 1, 0))
        return replace(inner, rank=None)

    def _int_index(self, node: cst.Subscript, scope: Scope, depth: int) -> bool:
        """``x[i]``, ``x[i + 1]``, ``x[len(s) - 1]``: one index that the file says is a Python int
        (``for i in range(n)``, arithmetic of ints)."""
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return False
        return self.value(node.slice[0].slice.value, scope, depth + 1) == INT

    def integer_index(self, node: cst.Subscript, scope: Scope) -> bool:
        """``node`` takes one element along the first dimension (a literal or Python-int index): the
        result has one dimension less than a tensor receiver."""
        return _integer_index(node) or self._int_index(node, scope, 0)

    # -- elements -----------------------------------------------------------------------------------
    def element(self, expr: cst.CSTNode, index: int, scope: Scope, depth: int = 0) -> Value:
        """Element ``index`` of ``expr``: a literal, a ``.size()``/``.shape``, ``x.max(1)``, a function's
        returned tuple or list."""
        sources = self.model.element_sources(expr, index, scope)
        if sources:
            return join([self.value(e, s, depth) for e, s in sources])
        if type(expr) is cst.Attribute and expr.attr.value == "shape" or (
                type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size"
                and not expr.args):
            return INT
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute \
                and expr.func.attr.value in torchapi.INDEX_RESULTS and expr.args:
            inner = self.value(expr.func.value, scope, depth)
            if inner.kind is Kind.TENSOR and index in (0, 1):
                rank = None
                if inner.rank is not None:
                    rank = inner.rank if expr.func.attr.value in ("sort", "topk") else max(inner.rank - 1, 0)
                if index == 1:
                    return Value(Kind.TENSOR, rank=rank, graph=False, dtype="int64", device=inner.device)
                return replace(inner, rank=rank)
        if type(expr) is cst.Name:
            whole = self.value(expr, scope, depth)
            if whole.kind is Kind.SIZE:
                return INT
        return UNKNOWN

    # -- calls --------------------------------------------------------------------------------------
    def _call(self, node: cst.Call, scope: Scope, depth: int) -> Value:
        func = node.func
        qualified = self.model.qualname(func) if type(func) in (cst.Name, cst.Attribute) else None
        if qualified is not None:
            return self._torch_call(qualified, node, scope, depth)
        if type(func) is cst.Name:
            return self._name_call(func.value, node, scope, depth)
        if type(func) is not cst.Attribute:
            return UNKNOWN
        method, receiver = func.attr.value, func.value
        if method == "parse_args":
            return Value(Kind.NAMESPACE, graph=False)
        if method == "item" or method in torchapi.PYTHON_INT_METHODS or (method == "size" and positional(node)):
            return INT if method != "item" else NUMBER
        if method == "size" and not node.args:
            return SIZE
        if method in ("numpy", "tolist"):
            return OTHER  # a numpy array or a list, whatever the receiver
        callee = self.value(func, scope, depth)
        if callee.kind in (Kind.LOSS, Kind.MODULE):
            return self._called(callee)
        inner = self.value(receiver, scope, depth)
        if inner.kind in (Kind.LOSS, Kind.MODULE) and method in torchapi.MODULE_SELF_METHODS:
            return inner  # `criterion = nn.CrossEntropyLoss().cuda()`
        if inner.kind is Kind.DISTRIBUTION:
            return self._distribution_call(inner, method, node, scope, depth)
        if inner.kind is Kind.TENSOR:
            return self._method(inner, method, node, scope, depth)
        if inner.kind in (Kind.UNKNOWN, Kind.PENDING) and method in SHAPED_METHODS:
            result = self._method(Value(Kind.TENSOR, rank=inner.rank), method, node, scope, depth)
            return result if result.rank == 0 else Value(rank=result.rank)  # the shape, if it is a tensor
        return UNKNOWN

    def _method(self, inner: Value, method: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        """A tensor method's result (``inner``: the receiver)."""
        graph = False if method in torchapi.NO_GRAPH_METHODS else inner.graph
        if method in torchapi.FULL_REDUCTIONS and full_reduction(node, method):
            return Value(Kind.TENSOR, rank=0, graph=graph, device=inner.device,
                         dtype="bool" if method in ("all", "any") else None)
        if method in ("tolist", "numpy"):
            return OTHER
        dtype = torchapi.CAST_METHODS.get(method, inner.dtype if method in torchapi.SAME_SHAPE_METHODS else None)
        if method in torchapi.COMPARISON_METHODS:
            dtype = "bool"
        device = {"cuda": "cuda", "cpu": "cpu"}.get(method, inner.device if method != "to" else None)
        result = Value(Kind.TENSOR, graph=graph, dtype=dtype, device=device)
        rank = inner.rank
        if method in torchapi.DIM_REDUCTIONS:
            dim = single_dim(node)
            return replace(result, rank=None if rank is None or dim is None else max(rank - 1, 0))
        if method in ("view", "reshape"):
            args = node.args
            if len(args) == 1 and args[0].keyword is None and is_minus_one(args[0].value):
                return replace(result, rank=1)
            if args and all(a.keyword is None and not a.star and type(a.value) in (cst.Integer, cst.Name,
                                                                                    cst.UnaryOperation)
                            for a in args) and not (len(args) == 1 and type(args[0].value) is cst.Name):
                return replace(result, rank=len(args))
            return result
        if method == "flatten":
            return replace(result, rank=1 if not node.args else None)
        if method == "unsqueeze":
            return replace(result, rank=None if rank is None else rank + 1)
        if method in torchapi.SAME_SHAPE_METHODS or method in ("t", "transpose", "permute") or (
                method.endswith("_") and method not in torchapi.NOT_VALUE_UPDATES):
            return replace(result, rank=rank)
        if method == "squeeze" and rank == 0:
            return replace(result, rank=0)
        return result

    def _distribution_call(self, dist: Value, method: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        name = (dist.of or "").rpartition(".")[2]
        if method in torchapi.SAMPLE_METHODS:
            shaped = bool(node.args)  # sample((n,)) adds dimensions
            return Value(Kind.TENSOR, rank=None if shaped else dist.rank, graph=method == "rsample" or False)
        if method == "log_prob" and len(node.args) == 1:
            sample = self.value(node.args[0].value, scope, depth)
            rank = None if sample.rank is None else sample.rank - torchapi.DISTRIBUTION_EVENT_RANK.get(name, 0)
            return Value(Kind.TENSOR, rank=rank if rank is None or rank >= 0 else None)
        if method == "entropy" and not node.args:
            return Value(Kind.TENSOR, rank=dist.rank if name not in torchapi.DISTRIBUTION_EVENT_RANK else None)
        return UNKNOWN

    @staticmethod
    def _called(callee: Value) -> Value:
        if callee.kind is Kind.LOSS:
            return Value(Kind.TENSOR, rank=0, graph=None)
        return Value(Kind.TENSOR, graph=None)

    def _name_call(self, name: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        found, bindings = self.model.lookup(name, scope)
        if bindings is None:
            if name in NUMBER_BUILTINS:
                return Value(Kind.NUMBER, graph=False, dtype="float" if name == "float" else "int")
            if self.model.loss_name(name):
                return SCALAR_TENSOR
            return TENSOR if MODEL_NAME.match(name) else UNKNOWN
        callee = self.value(node.func, scope, depth)
        if callee.kind in (Kind.LOSS, Kind.MODULE):
            return self._called(callee)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS:
            return Value(Kind.MODULE, of=name) if self.model.is_module_class(bindings[0].node) else UNKNOWN
        if len(bindings) == 1 and bindings[0].kind is BindingKind.FUNCTION:
            body = self.model.scope_of_definition(bindings[0].node)
            return join([self.value(r, body, depth) for r in body.returns]) if body.returns else UNKNOWN
        if all(b.kind is BindingKind.PARAMETER for b in bindings):
            if self.model.loss_name(name):
                return SCALAR_TENSOR
            return TENSOR if MODEL_NAME.match(name) else UNKNOWN
        return UNKNOWN

    def _torch_call(self, qualified: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        module, _, name = qualified.rpartition(".")
        if module == "torch.nn.functional":
            if name in torchapi.LOSS_FUNCTIONS:
                return SCALAR_TENSOR if reduces(node, positional_limit=3) else TENSOR
            return self._same_shape(node, scope, depth) if name in torchapi.SAME_SHAPE_FUNCTIONS else TENSOR
        if qualified in torchapi.PARAMETER:
            return Value(Kind.TENSOR, graph=True)
        if module == "torch.nn" and name[:1].isupper():
            if torchapi.is_loss_class(name):
                return Value(Kind.LOSS if reduces(node, positional_limit=1) else Kind.MODULE, of=qualified)
            return Value(Kind.MODULE, of=qualified)
        if qualified in torchapi.VARIABLE:
            args = positional(node)
            inner = self.value(args[0].value, scope, depth) if args else UNKNOWN
            return inner if inner.kind is Kind.TENSOR else TENSOR
        if qualified.startswith("torch.distributions.") and name[:1].isupper():
            return self._distribution(name, qualified, node, scope, depth)
        if module == "torch":
            return self._torch_function(qualified, name, node, scope, depth)
        if module == "math":
            return Value(Kind.NUMBER, graph=False)
        if qualified.startswith("torchvision.models."):
            return Value(Kind.MODULE, of=qualified)
        if qualified.split(".")[0] in torchapi.NON_TORCH_LIBRARIES or qualified.startswith("torch.utils."):
            return OTHER
        return UNKNOWN

    def _distribution(self, name: str, qualified: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        drops = torchapi.DISTRIBUTION_SAMPLE_DROPS.get(name)
        args = [a for a in node.args if not a.star]
        rank = None
        if drops is not None and args:
            first = self.value(args[0].value, scope, depth)
            if first.kind is Kind.TENSOR and first.rank is not None and first.rank >= drops:
                rank = first.rank - drops
        return Value(Kind.DISTRIBUTION, rank=rank, of=qualified)

    def _torch_function(self, qualified: str, name: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        args = positional(node)
        if name in torchapi.FULL_REDUCTIONS:
            first = self.value(args[0].value, scope, depth) if args else UNKNOWN
            if full_reduction(node, name, extra=1):
                return Value(Kind.TENSOR, rank=0, graph=first.graph if first.kind is Kind.TENSOR else None)
            dim = single_dim(node, extra=1)
            if name in torchapi.DIM_REDUCTIONS and dim is not None and first.rank is not None:
                return Value(Kind.TENSOR, rank=max(first.rank - 1, 0), graph=first.graph)
            return TENSOR
        if name in torchapi.NOT_TENSOR_FUNCTIONS or name.startswith(("is_", "set_", "get_")):
            return OTHER
        if qualified in torchapi.FACTORIES:
            return self._factory(qualified, name, node, scope, depth)
        if name in torchapi.SAME_SHAPE_FUNCTIONS or name in torchapi.SAME_SHAPE_METHODS:
            return self._same_shape(node, scope, depth)
        return TENSOR

    def _same_shape(self, node: cst.Call, scope: Scope, depth: int) -> Value:
        """``torch.softmax(x, 0)``, ``F.relu(x)``: a tensor of the first argument's shape."""
        args = positional(node)
        first = self.value(args[0].value, scope, depth) if args else UNKNOWN
        return Value(Kind.TENSOR, rank=first.rank, graph=first.graph if first.kind is Kind.TENSOR else None,
                     device=first.device)

    def _factory(self, qualified: str, name: str, node: cst.Call, scope: Scope, depth: int) -> Value:
        found = keywords(node)
        requires = found.get("requires_grad")
        graph = not (requires is None or type(requires.value) is cst.Name and requires.value.value == "False")
        dtype = _literal_dtype(found["dtype"].value) if "dtype" in found else None
        type_name = qualified.rpartition(".")[2]
        device = "cuda" if qualified.startswith("torch.cuda.") else None
        if type_name in torchapi.TENSOR_TYPE_DTYPES:
            dtype = torchapi.TENSOR_TYPE_DTYPES[type_name]
        elif name in ("randn", "rand", "zeros", "ones", "empty", "full", "linspace", "logspace", "eye") \
                and dtype is None:
            dtype = "float32" if name != "full" else None
        args = positional(node)
        rank = None
        if qualified in torchapi.SIZED_FACTORIES and args and not any(a.star for a in node.args):
            if len(args) == 1 and type(args[0].value) in (cst.Tuple, cst.List):
                rank = len(args[0].value.elements)
            elif all(type(a.value) in (cst.Integer, cst.Name, cst.BinaryOperation, cst.Attribute) for a in args):
                rank = len(args) if not (len(args) == 1 and type(args[0].value) is not cst.Integer) else None
            if rank is None and len(args) == 1 and self.value(args[0].value, scope, depth) == INT:
                rank = 1  # `torch.zeros(len(s))`, `torch.zeros(n)` with `n` a Python int: not a size tuple
        elif qualified in torchapi.TENSOR_TYPES and args and not any(a.star for a in node.args):
            # ``torch.FloatTensor(2, 3)`` takes sizes; ``torch.FloatTensor([1, 2])`` takes data (a name: either).
            if all(self.value(a.value, scope, depth) == INT for a in args):
                rank = len(args)  # sizes: literals or Python ints (`torch.LongTensor(len(s), 1)`)
            elif len(args) == 1:
                rank = _nesting(args[0].value)
        elif qualified in torchapi.LIKE_FACTORIES and args:
            rank = self.value(args[0].value, scope, depth).rank
        elif name in ("tensor", "as_tensor") and args:
            rank = _nesting(args[0].value)
        elif name in ("arange", "linspace", "logspace", "randperm"):
            rank = 1
        elif name == "eye":
            rank = 2
        return Value(Kind.TENSOR, rank=rank, graph=graph, dtype=dtype, device=device)


def _integer_index(node: cst.Subscript) -> bool:
    """``x[i]`` with one index that is an integer literal (not a slice, a tensor mask or ``None``)."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return False
    value = node.slice[0].slice.value
    return type(value) is cst.Integer or (type(value) is cst.UnaryOperation and type(value.expression) is cst.Integer)
