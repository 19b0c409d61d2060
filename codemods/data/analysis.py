"""What the data family decides about a file, on top of the semantic model.

The model says what values are (``ctx.model.value``); this module adds what only TM3xx needs:

- *0.3 provenance* (``legacy_tensor``): a value that was a plain tensor in 0.3, not a Variable (it comes
  from ``.data`` or a comparison), so ``x[0]`` of a one-element one was a Python number;
- *tensor evidence* (``tensor_evidence``): ``x.data`` is a tensor's ``.data``, not a dataset's or a
  numpy array's, from the model's value or from how ``x`` and ``x.data`` are used;
- *sites* (``site``): for each ``.data`` attribute, the one ``Site`` that says what it is (a read for
  a number, a read of a graph-free value, a counter's term, ...), so that no two fixes touch one ``.data``;
- *updates* (``is_update``, ``run_of``): statements that change parameters in place through ``.data``.

It returns facts (``SiteKind``, ``Site``), never rule codes or messages: the rule modules own those.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import libcst as cst

from codemods import torchapi
from codemods.model import (BindingKind, GradMode, Kind, Scope, SemanticModel, Value, full_reduction, index_value,
                            is_inplace_method, keywords)
from codemods.model.values import reduces
from codemods.walk import walk

# Names that hold something with a `.data` attribute that is not a tensor's (datasets, namespaces, ...).
NON_TENSOR_NAME = re.compile(
    r"(?i)^(self|cls|args?|opts?|options|config|cfg|conf|hparams|flags|kwargs|params|res|resp|result|results|"
    r"\w*(set|loader|corpus|df|dict|json|response|request|image|img|file))$")
NUMERIC_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                       cst.GreaterThanEqual)
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)
NUMBER_UPDATES = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)
# The full reductions that returned Python numbers in 0.3.
LEGACY_NUMBER_REDUCTIONS = frozenset({"sum", "mean", "prod", "std", "var", "max", "min", "median", "norm", "dot",
                                      "dist", "trace"})
# Reading `.data` only to get one of these: the result never carries a graph, so `.data` can go.
PLAIN_RESULTS = frozenset({"item", "tolist", "size", "dim", "numel", "nelement", "ndimension", "element_size",
                           "get_device", "is_contiguous", "eq", "ne", "lt", "le", "gt", "ge", "equal", "argmax",
                           "argmin", "argsort", "nonzero", "new", "new_zeros", "new_ones", "new_empty", "new_full",
                           "new_tensor"})
# `loss.data.cpu().numpy()[0]`: calls between `.data` and `[0]` that keep the one value.
TO_NUMBER_CHAIN = frozenset({"cpu", "cuda", "numpy", "detach"})
# Methods that give the receiver's values on another device, in another dtype or detached: its shape.
SHAPE_KEEPING = torchapi.MOVE_METHODS | set(torchapi.CAST_METHODS) | {"detach", "clone", "contiguous",
                                                                      "requires_grad_", "pin_memory"}
# Methods of a value that prove it is a tensor when nothing else does (numpy shares `sum`, `max`, ...).
VALUE_KEEPING = torchapi.MOVE_METHODS | {"detach", "clone", "squeeze", "contiguous", "exp", "log", "sqrt", "abs",
                                         "neg", "mul", "div", "add", "sub", "pow"}


class SiteKind(enum.Enum):
    """What one ``.data`` (or the expression around it) is."""

    ONE_VALUE_INDEX = "one value, [0]"  # `loss.data[0]` of a provably 0-dim value: `.item()`
    FIRST_ELEMENT = "first element"  # `v.data[0]` of a provably 1-dim value (a number in 0.3): `v[0].item()`
    UNPROVEN_INDEX = "unproven [0]"  # `x.data[0]`: a first element or a first row; `.item()` only if one value
    ONE_VALUE_CHAIN = "one value, chain [0]"  # `loss.data.cpu().numpy()[0]`
    COUNTER_TERM = "counter term"  # `total += loss.data`: a 0.3 counter of numbers
    NUMBER_REDUCTION = "number reduction"  # `x.data.sum()` used as a number
    REDUNDANT = "redundant"  # the second `.data` of `x.data.data`
    PLAIN_READ = "plain read"  # the value only feeds something without a graph: `x`
    DETACHED_READ = "detached read"  # `x.detach()`


# The sites that read `x.data[0]` as a number (TM301's).
INDEX_SITES = frozenset({SiteKind.ONE_VALUE_INDEX, SiteKind.FIRST_ELEMENT, SiteKind.UNPROVEN_INDEX,
                         SiteKind.ONE_VALUE_CHAIN})


@dataclass
class Site:
    kind: SiteKind
    node: cst.CSTNode  # what a fix replaces (the `.data` attribute, its subscript or the reduction call)
    receiver: cst.CSTNode  # the value whose `.data` it is


class ZeroDimUse(enum.Enum):
    """How an element of a 1-dim tensor (0-dim since 0.4) is used, where the old shape mattered."""

    LOSS_ARGUMENT = "loss argument"  # `criterion(out, target[i])`, `target` 1-dim: a (1,) vector in 0.3
    LOSS_ARGUMENT_UNPROVEN = "loss argument, rank unknown"  # the same, `target`'s rank unknown
    NUMBER = "number"  # `x.data[i]` of a 1-dim 0.3 tensor: a Python number then, used as one
    NUMBER_UNPROVEN = "number, rank unknown"  # `topi[0][0]` of a 0.3 tensor of unknown rank


def _formats(operation: cst.BinaryOperation, value: cst.CSTNode) -> bool:
    """``'...' % value``: ``value`` is formatted by a ``%`` string (``%s`` prints a tensor as ``tensor(...)``)."""
    return (type(operation.operator) is cst.Modulo and operation.right is value
            and type(operation.left) in (cst.SimpleString, cst.ConcatenatedString))


def is_data(node: cst.CSTNode) -> bool:
    return type(node) is cst.Attribute and node.attr.value == "data"


def is_comparison(node: cst.CSTNode) -> bool:
    """``a == b`` or ``a.eq(b)``: a result that never requires grad."""
    if type(node) is cst.Comparison:
        return all(isinstance(t.operator, NUMERIC_COMPARISONS) for t in node.comparisons)
    return (type(node) is cst.Call and type(node.func) is cst.Attribute
            and node.func.attr.value in torchapi.COMPARISON_METHODS)


def vetoed(receiver: cst.CSTNode) -> bool:
    """The name the receiver is built from says it is not a tensor (``dataset``, ``args``, ``self``)."""
    while type(receiver) in (cst.Subscript, cst.Call, cst.Attribute):
        receiver = receiver.func if type(receiver) is cst.Call else receiver.value
    return type(receiver) is cst.Name and bool(NON_TENSOR_NAME.match(receiver.value))


def tensor_context(subscript: cst.Subscript, grand: Optional[cst.CSTNode]) -> bool:
    """``x.data[0].numpy()``, ``x.data[0][1]``: the first row is used as a tensor."""
    return type(grand) in (cst.Attribute, cst.Subscript) and grand.value is subscript


def written(ancestors: Sequence[cst.CSTNode]) -> bool:
    """``ancestors[-1]`` (``x.data`` or ``x.data[i]``) is assigned to or changed in place (not a read)."""
    node, parent = ancestors[-1], ancestors[-2]
    if type(parent) is cst.Subscript and parent.value is node:
        return written(ancestors[:-1])
    if type(parent) in (cst.AssignTarget, cst.Del) or (type(parent) is cst.AugAssign and parent.target is node):
        return True
    if type(parent) is cst.Attribute and parent.value is node and is_inplace_method(parent.attr.value):
        return True
    return type(parent) is cst.Arg and parent.keyword is not None and parent.keyword.value == "out"


def swaps_storage(ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside ``a.data = <value>``: the statement replaces a tensor's storage; left as written."""
    statement = next((n for n in reversed(ancestors) if type(n) is cst.Assign), None)
    return statement is not None and any(is_data(t.target) for t in statement.targets)


def creates_leaf(value: Optional[cst.CSTNode]) -> bool:
    if type(value) is not cst.Call:
        return False
    func = value.func
    if type(func) is cst.Attribute and func.attr.value in ("Parameter", "requires_grad_"):
        return True
    if type(func) is cst.Name and func.value == "Parameter":
        return True
    requires = keywords(value).get("requires_grad")
    return requires is not None and type(requires.value) is cst.Name and requires.value.value == "True"


def inplace_receiver(call: cst.Call) -> Optional[cst.CSTNode]:
    """``p.data`` for ``p.data.mul_(m).add_(x)``; ``None`` if the call is not an in-place method."""
    node: cst.CSTNode = call
    found = False
    while type(node) is cst.Call and type(node.func) is cst.Attribute and is_inplace_method(node.func.attr.value):
        node, found = node.func.value, True
    return node if found else None


def number_chain(ancestors: List[cst.CSTNode]) -> Optional[cst.Subscript]:
    """``loss.data.cpu().numpy()[0]``: the ``[0]`` subscript reached through value-keeping calls."""
    index, steps = len(ancestors) - 1, 0
    while index >= 2:
        parent, call = ancestors[index - 1], ancestors[index - 2]
        if not (type(parent) is cst.Attribute and parent.attr.value in TO_NUMBER_CHAIN
                and type(call) is cst.Call and call.func is parent and not call.args):
            break
        index, steps = index - 2, steps + 1
    if steps == 0 or index < 1:
        return None
    subscript = ancestors[index - 1]
    grand = ancestors[index - 2] if index >= 2 else None
    if type(subscript) is cst.Subscript and subscript.value is ancestors[index] \
            and index_value(subscript) == 0 and not tensor_context(subscript, grand):
        return subscript
    return None


def _data_base(node: cst.CSTNode) -> bool:
    """``x.data[i]``, ``x.data[i][j]``: subscripts of a ``.data``."""
    while type(node) is cst.Subscript:
        node = node.value
        if is_data(node):
            return True
    return False


def _is_parameter_attribute(name: str) -> bool:
    return name in ("weight", "bias") or name.startswith(("weight_", "bias_"))


class DataAnalysis:
    """The family's decisions for one file (``ctx.analysis(DataAnalysis)``), memoized."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.model: SemanticModel = ctx.model
        self.has_data = self.model.has_attribute("data")
        self.torch_file = ctx.imports.imports_module("torch")
        self._sites: Dict[int, Optional[Site]] = {}
        self._updates: Dict[int, bool] = {}
        self._runs: Dict[int, List[List[cst.CSTNode]]] = {}
        self._accumulators: Dict[tuple, bool] = {}
        self._zero_dim: Dict[int, Optional[ZeroDimUse]] = {}
        self._reads: Optional[Dict[tuple, List[cst.Attribute]]] = None
        self.stashes: Dict[int, list] = {}  # TM304: statements a grouped fix moves into the run's `with`

    # -- values ----------------------------------------------------------------------------------
    def value(self, node: cst.CSTNode, scope: Scope) -> Value:
        return self.model.value(node, scope)

    def one_value(self, node: cst.CSTNode, scope: Scope) -> bool:
        """A tensor that holds one value (a 0-dim tensor now, a 1-element one in 0.3)."""
        found = self.value(node, scope)
        return found.kind is Kind.TENSOR and found.rank == 0

    def is_number(self, node: cst.CSTNode, scope: Scope) -> bool:
        found = self.value(node, scope)
        return found.kind is Kind.NUMBER and found.dtype != "bool"

    def legacy_tensor(self, node: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """``node`` was a plain tensor in 0.3, not a Variable: it comes from ``.data`` or a comparison, through
        methods, indexing and arithmetic with numbers (names, tuple unpacking and the lists functions of the
        file return followed). ``.detach()`` and ``Variable(x)`` gave Variables in 0.3."""
        if depth > 12:
            return False
        if is_comparison(node):
            return True
        kind = type(node)
        if kind is cst.Attribute:
            return node.attr.value == "data"
        if kind is cst.Subscript:
            index = index_value(node)
            sources = None if index is None else self.model.element_sources(node.value, index, scope)
            if sources:
                return all(self.legacy_tensor(e, s, depth + 1) for e, s in sources)
            return self.legacy_tensor(node.value, scope, depth + 1)
        if kind is cst.BinaryOperation and isinstance(node.operator, ARITHMETIC):
            return self._legacy_operands([node.left, node.right], scope, depth)
        if kind is cst.Call and type(node.func) is cst.Attribute:
            args = [a.value for a in node.args]
            if node.func.attr.value == "detach":
                return False
            if (self.model.qualname(node.func) or "").startswith("torch."):
                return self._legacy_operands(args, scope, depth)  # `torch.sum(x.data, 0)`
            return self._legacy_operands([node.func.value, *args], scope, depth)
        if kind is not cst.Name:
            return False
        found, bindings = self.model.lookup(node.value, scope)
        if not bindings:
            return False
        for binding in bindings:
            if binding.kind is BindingKind.ASSIGN:
                sources = [(binding.value, found)]
            elif binding.kind is BindingKind.UNPACK and binding.index is not None:
                sources = self.model.element_sources(binding.value, binding.index, found)
                value = binding.value
                if not sources and (type(value) is cst.Call and type(value.func) is cst.Attribute
                                    and value.func.attr.value in torchapi.INDEX_RESULTS):
                    sources = [(value.func.value, found)]  # `_, topi = x.data.topk(1)`: tensors of a tensor
            else:
                return False
            if not sources or not all(self.legacy_tensor(e, s, depth + 1) for e, s in sources):
                return False
        return True

    def _legacy_operands(self, operands: List[cst.CSTNode], scope: Scope, depth: int) -> bool:
        """At least one 0.3 tensor, and the rest numbers or 0.3 tensors."""
        tensors = [n for n in operands if not self.is_number(n, scope)]
        return bool(tensors) and all(self.legacy_tensor(n, scope, depth + 1) for n in tensors)

    # -- tensors, parameters ---------------------------------------------------------------------
    def leaf_like(self, receiver: cst.CSTNode, scope: Scope) -> bool:
        """A tensor that is (or belongs to) a leaf the script optimises: parameters and their grads."""
        if type(receiver) is cst.Attribute:
            attr = receiver.attr.value
            if attr == "grad" or _is_parameter_attribute(attr):
                return True
            if type(receiver.value) is cst.Name and receiver.value.value == "self":
                return any(creates_leaf(v) for _, v in self.model.self_attribute_values(attr, scope))
            return False
        if type(receiver) is not cst.Name:
            return False
        name = receiver.value
        found, bindings = self.model.lookup(name, scope)
        if "grad" in scope.uses.get(name, ()) or (found is not None and "grad" in found.uses.get(name, ())):
            return True
        return bool(bindings) and all(
            (b.kind is BindingKind.FOR and self.model.iterates_parameters(b.value, found))
            or (b.kind is BindingKind.ASSIGN and creates_leaf(b.value)) for b in bindings)

    def tensor_evidence(self, receiver: cst.CSTNode, scope: Scope, ancestors: Sequence[cst.CSTNode] = ()) -> bool:
        """``receiver.data`` is a tensor's ``.data``, not a dataset's, a namespace's, a numpy array's.

        Evidence: the receiver's value (a loss, a torch call, a module's output, a parameter), or the
        name's other uses in its scope (``x.backward()``, ``x.cuda()``, ``criterion(x, y)``), or what is
        done with ``.data`` (``.cpu()``, ``.numpy()``, a torch function's argument). Names like
        ``dataset``, ``args``, ``self``, ``response`` never qualify. ``x.data.data`` has ``x.data``'s.
        """
        if is_data(receiver):
            return self.tensor_evidence(receiver.value, scope, ancestors)
        if self.leaf_like(receiver, scope):
            return True
        found = self.value(receiver, scope)
        if found.kind is Kind.TENSOR:
            return True
        if found.known or vetoed(receiver):
            return False
        if ancestors and self._chain_evidence(ancestors, scope):
            return True
        return self.torch_file and self._use_evidence(receiver, scope)

    def _use_evidence(self, receiver: cst.CSTNode, scope: Scope) -> bool:
        if type(receiver) is cst.Subscript:
            return self._use_evidence(receiver.value, scope)
        if type(receiver) is cst.Call:
            func = receiver.func
            if type(func) is cst.Name and func.value == "next":
                return any(self.model.iterates_parameters(a.value, scope) for a in receiver.args)
            # a method called on a value; `lowering.permute(node)` is a module's function, not a tensor's method
            return type(func) is cst.Attribute and self.model.qualname(func) is None and (
                func.attr.value in torchapi.TENSOR_ONLY or func.attr.value in VALUE_KEEPING) and (
                func.attr.value not in torchapi.NON_TENSOR_RESULTS)  # `x.numpy().data` is a numpy buffer
        if is_data(receiver):
            return self._use_evidence(receiver.value, scope)  # `x.data.data`: the evidence of `x.data`
        if type(receiver) is not cst.Name:
            return False
        name = receiver.value
        found, bindings = self.model.lookup(name, scope)
        scopes = [scope] + ([found] if found is not None and found is not scope else [])
        if any(torchapi.TENSOR_ONLY & s.uses.get(name, set()) for s in scopes):
            return True
        if any(b.kind is BindingKind.ASSIGN and self.value(b.value, found).kind is Kind.TENSOR
               for b in bindings or ()):
            return True
        if any(self.tensor_call(call, s) for s in scopes for call in s.passed.get(name, ())):
            return True
        # another `name.data` of the scope shows it (`images.data.cpu()`): what TM303 makes of that one
        # (`images.detach().cpu()`) is evidence for the next run, so it must be for this one
        return any(self._chain_evidence(self.model.chain(attr), s)
                   for s in scopes for attr in self._data_reads().get((id(s), name), ()))

    def _data_reads(self) -> Dict[tuple, List[cst.Attribute]]:
        """``name.data`` attributes of the file by (scope, name), found by one walk when first needed."""
        if self._reads is None:
            self._reads = {}
            for node in walk(self.ctx.module):
                if is_data(node) and type(node.value) is cst.Name:
                    key = (id(self.model.scope_of(node)), node.value.value)
                    self._reads.setdefault(key, []).append(node)
        return self._reads

    def tensor_call(self, call: cst.Call, scope: Scope) -> bool:
        """A call whose tensor arguments are tensors: torch functions, losses, modules."""
        func = call.func
        qualified = self.model.qualname(func) if type(func) in (cst.Name, cst.Attribute) else None
        if qualified is not None:
            module, _, name = qualified.rpartition(".")
            return module in torchapi.TENSOR_FUNCTION_MODULES and not (
                name in torchapi.NOT_TENSOR_FUNCTIONS or name.startswith(("is_", "set_", "get_", "_")))
        return self.value(func, scope).kind in (Kind.LOSS, Kind.MODULE)

    # -- elements of 1-dim tensors (0-dim since 0.4) -----------------------------------------------------
    def zero_dim_use(self, node: cst.Subscript) -> Optional[ZeroDimUse]:
        """``x[i]`` takes an element of a 1-dim tensor, a (1,) Variable or a Python number in 0.3 and a 0-dim
        tensor now, in a use where that matters; ``None`` elsewhere (and for ``x.data[0]`` and elements of
        one-value tensors, the ``.data`` sites' and ``prec1[0]``'s)."""
        key = id(node)
        if key not in self._zero_dim:
            self._zero_dim[key] = None  # while computing: its `.data` site may ask (`x.data[0]` read as a number)
            self._zero_dim[key] = self._zero_dim_use(node)
        return self._zero_dim[key]

    def _zero_dim_use(self, node: cst.Subscript) -> Optional[ZeroDimUse]:
        if not self.torch_file:
            return None
        if is_data(node.value) and index_value(node) == 0:
            site = self.site(node.value, self.model.chain(node.value))
            if site is None or site.kind in INDEX_SITES:
                return None  # TM301's (`x.data.data[0]` loses a redundant `.data`: then it is an element here)
        scope = self.model.scope_of(node)
        if not self.model.integer_index(node, scope):
            return None
        receiver = self.value(node.value, scope)
        if receiver.rank == 0 or (receiver.rank or 0) > 1 or receiver.kind not in (Kind.TENSOR, Kind.UNKNOWN):
            return None
        ancestors = self.model.chain(node)
        if written(ancestors):
            return None
        proven = receiver.kind is Kind.TENSOR and receiver.rank == 1
        outer = self._same_shape(ancestors)  # `target[i].long()`, `Variable(target[i])`: the element still
        if self.loss_argument(outer, scope):
            if proven:
                return ZeroDimUse.LOSS_ARGUMENT
            # rank unknown: reported for a reducing loss's target only (a per-element loss, `reduce=False`, is
            # how sequence code takes a (T, B) target's rows: `nll_loss(out, tgt[t], reduce=False)`)
            arg, call = outer[-2], outer[-3]
            target = arg.keyword.value == "target" if arg.keyword is not None else arg is not call.args[0]
            if target and self.reducing_loss(call, scope) and self._some_tensor(node.value, scope):
                return ZeroDimUse.LOSS_ARGUMENT_UNPROVEN
            return None
        if self.tensor_use(ancestors):
            return None
        if not (self.legacy_tensor(node.value, scope) and self._number_use(ancestors, scope)) \
                or self._condition(ancestors):
            return None
        if proven or receiver.rank == 1:  # a 0.3 tensor's `.data.view(-1)`
            return ZeroDimUse.NUMBER
        chain = type(node.value) is cst.Subscript and self.model.integer_index(node.value, scope)
        return ZeroDimUse.NUMBER_UNPROVEN if chain else None

    def _same_shape(self, ancestors: Sequence[cst.CSTNode]) -> Sequence[cst.CSTNode]:
        """``ancestors`` up to the outermost of the moves, casts and ``Variable`` wrappers around ``ancestors[-1]``
        (``Variable(target[i]).long().cuda()``): what has the element's shape."""
        index = len(ancestors) - 1
        while index >= 2:
            parent, call = ancestors[index - 1], ancestors[index - 2]
            moved = (type(parent) is cst.Attribute and parent.value is ancestors[index] and type(call) is cst.Call
                     and call.func is parent and parent.attr.value in SHAPE_KEEPING)
            if not (moved or self.wrapped(ancestors[:index + 1])):
                break
            index -= 2
        return ancestors[:index + 1]

    def _some_tensor(self, node: cst.CSTNode, scope: Scope) -> bool:
        """A tensor, or a name one of whose bindings is (``x, y = Variable(x), Variable(y)`` in a loop over
        batches), not a list of them."""
        if self.value(node, scope).kind is Kind.TENSOR:
            return True
        if type(node) is not cst.Name:
            return False
        found, bindings = self.model.lookup(node.value, scope)
        return any(self.model.value_of_binding(b, found).kind is Kind.TENSOR for b in bindings or ())

    def loss_argument(self, ancestors: Sequence[cst.CSTNode], scope: Scope) -> bool:
        """``ancestors[-1]`` (0-dim) is the input or target of a loss whose other one is a batch: not 0-dim (two
        0-dim values give what two (1,) vectors gave), not 1-dim or an element itself (the unbatched form)."""
        arg, call = ancestors[-2], ancestors[-3] if len(ancestors) > 2 else None
        if not (type(arg) is cst.Arg and type(call) is cst.Call and self.loss_call(call, scope)):
            return False
        pair = [a for a in call.args if a.keyword is None and not a.star][:2] + [
            a for a in call.args if a.keyword is not None and a.keyword.value in ("input", "target")]
        if arg not in pair:
            return False
        others = [a.value for a in pair if a is not arg]
        # `F.cross_entropy(logits[i], labels[i])`: an element too (0.3 refused it: current unbatched code)
        return bool(others) and not any(self.one_value(o, scope) or self.value(o, scope).rank == 1 or (
            type(o) is cst.Subscript and self.model.integer_index(o, scope)) for o in others)

    def loss_call(self, call: cst.Call, scope: Scope) -> bool:
        """``criterion(out, y)``, ``F.nll_loss(out, y)``, ``nn.MSELoss(reduction='none')(a, b)``."""
        func = call.func
        qualified = self.model.qualname(func)
        if qualified is not None:
            module, _, name = qualified.rpartition(".")
            return module == "torch.nn.functional" and name in torchapi.LOSS_FUNCTIONS
        callee = self.value(func, scope)
        if callee.kind is Kind.LOSS or (callee.kind is Kind.MODULE and torchapi.is_loss_class(
                (callee.of or "").rpartition(".")[2])):
            return True
        return type(func) is cst.Name and self.model.loss_name(func.value)

    def reducing_loss(self, call: cst.Call, scope: Scope) -> bool:
        """A loss call that gives one number (``criterion`` of ``nn.NLLLoss()``, ``F.nll_loss(a, b)``)."""
        if (self.model.qualname(call.func) or "").startswith("torch.nn.functional."):
            return reduces(call, positional_limit=3)
        callee = self.value(call.func, scope)
        return callee.kind is Kind.LOSS or (callee.kind is not Kind.MODULE and type(call.func) is cst.Name
                                            and self.model.loss_name(call.func.value))

    def _number_use(self, ancestors: Sequence[cst.CSTNode], scope: Scope) -> bool:
        """``ancestors[-1]`` is used where a 0-dim tensor and the number differ: ``%`` formatting, ``str``/
        ``print``, a dict key, a comparison's printed result (``number_context``); not ``'{}'.format(x)``
        and f-strings (a 0-dim tensor formats as its number), nor ``int(x)``/``float(x)``."""
        index = len(ancestors) - 1
        while index >= 1:
            consumer, value = ancestors[index - 1], ancestors[index]
            if type(consumer) is cst.Element and index >= 3 and type(ancestors[index - 2]) is cst.Tuple:
                consumer, value = ancestors[index - 3], ancestors[index - 2]  # `'%s %s' % (a, x[0])`
                return type(consumer) is cst.BinaryOperation and _formats(consumer, value)
            if type(consumer) is cst.BinaryOperation and _formats(consumer, value):
                return True
            if type(consumer) not in (cst.BinaryOperation, cst.UnaryOperation):
                break
            index -= 1
        consumer = ancestors[index - 1]
        if type(consumer) is cst.FormattedStringExpression:
            return False
        if type(consumer) is cst.Arg and index >= 2 and type(ancestors[index - 2]) is cst.Call:
            func = ancestors[index - 2].func
            if (type(func) is cst.Attribute and func.attr.value == "format") or (
                    type(func) is cst.Name and func.value in ("int", "float", "bool", "round")):
                return False
        if type(consumer) is cst.Index and index >= 3 and type(ancestors[index - 3]) is cst.Subscript:
            return self.value(ancestors[index - 3].value, scope).kind is not Kind.TENSOR  # a dict key
        return self.number_context(list(ancestors[:index + 1]), scope)

    @staticmethod
    def _condition(ancestors: Sequence[cst.CSTNode]) -> bool:
        """The value only decides a branch (``if x[0] > 0.5:``): a 0-dim tensor does that as the number did."""
        index = len(ancestors) - 1
        while index >= 1 and type(ancestors[index - 1]) in (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation,
                                                            cst.UnaryOperation, cst.BinaryOperation):
            index -= 1
        test = ancestors[index - 1] if index >= 1 else None
        return type(test) in (cst.If, cst.While, cst.Assert, cst.IfExp) and test.test is ancestors[index]

    def wrapped(self, ancestors: Sequence[cst.CSTNode]) -> bool:
        """``ancestors[-1]`` is the data of ``Variable(...)`` or ``nn.Parameter(...)``: a tensor (0.3 refused
        Python numbers there: "Variable data has to be a tensor")."""
        if len(ancestors) < 3:
            return False
        arg, call = ancestors[-2], ancestors[-3]
        return (type(arg) is cst.Arg and type(call) is cst.Call and call.args[0] is arg and arg.keyword is None
                and self.model.qualname(call.func) in torchapi.VARIABLE | torchapi.PARAMETER)

    def tensor_use(self, ancestors: Sequence[cst.CSTNode]) -> bool:
        """``ancestors[-1]`` (``x.data[0]``, ``x[0]``) is used as a tensor: a method or an index of it, or
        the data of a ``Variable``: a first row, not a first element."""
        return tensor_context(ancestors[-1], ancestors[-2]) or self.wrapped(ancestors)

    def _chain_evidence(self, ancestors: Sequence[cst.CSTNode], scope: Scope) -> bool:
        """``x.data.cpu()``, ``x.data[0].numpy()``, ``Variable(x.data)``: only a tensor's ``.data`` does that.
        Through further ``.data`` and ``[i]`` steps (``x.data[0].data.cpu()``), so that every ``.data`` of a
        chain has the same evidence."""
        index = len(ancestors) - 1
        while index >= 1:
            parent = ancestors[index - 1]
            if (type(parent) is cst.Subscript or is_data(parent)) and parent.value is ancestors[index]:
                index -= 1
                continue
            break
        if index < 1:
            return False
        parent = ancestors[index - 1]
        if self.wrapped(ancestors[:index + 1]):
            return True
        if type(parent) is cst.Attribute and parent.value is ancestors[index]:
            call = ancestors[index - 2] if index >= 2 else None
            torch_keywords = type(call) is cst.Call and call.func is parent and bool(
                {"dim", "keepdim"} & set(keywords(call)))  # numpy says `axis`, `keepdims`
            return parent.attr.value in torchapi.TENSOR_ONLY or torch_keywords
        if type(parent) is cst.Arg and index >= 2 and type(ancestors[index - 2]) is cst.Call:
            return self.tensor_call(ancestors[index - 2], scope)
        return False

    # -- updates -----------------------------------------------------------------------------------
    def is_update(self, stmt: cst.CSTNode, scope: Scope) -> bool:
        """A statement that only changes parameters (or grads) in place through ``.data``."""
        key = id(stmt)
        if key not in self._updates:
            self._updates[key] = self._compute_update(stmt, scope)
        return self._updates[key]

    def _compute_update(self, stmt: cst.CSTNode, scope: Scope) -> bool:
        if type(stmt) is cst.SimpleStatementLine:
            return bool(stmt.body) and all(self._update_small(s, scope) for s in stmt.body)
        if type(stmt) is cst.For:
            return stmt.orelse is None and stmt.asynchronous is None and self._update_block(stmt.body, scope)
        if type(stmt) is cst.If:
            if not self._update_block(stmt.body, scope):
                return False
            if type(stmt.orelse) is cst.Else:
                return self._update_block(stmt.orelse.body, scope)
            return stmt.orelse is None or self.is_update(stmt.orelse, scope)
        return False

    def _update_block(self, body: cst.BaseSuite, scope: Scope) -> bool:
        if type(body) is cst.SimpleStatementSuite:
            return all(self._update_small(s, scope) for s in body.body)
        return all(self.is_update(s, scope) for s in body.body)

    def _update_small(self, small: cst.CSTNode, scope: Scope) -> bool:
        if type(small) is cst.Expr and type(small.value) is cst.Call:
            target = inplace_receiver(small.value)
        elif type(small) is cst.AugAssign:
            target = small.target
        elif type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Subscript:
            target = small.targets[0].target
        else:
            return False
        if type(target) is cst.Subscript:
            target = target.value
        return is_data(target) and self.leaf_like(target.value, scope)

    def inside_update(self, ancestors: Sequence[cst.CSTNode], scope: Scope) -> bool:
        return any(self.is_update(n, scope) for n in ancestors if type(n) in (cst.SimpleStatementLine, cst.For, cst.If))

    def run_of(self, stmt: cst.CSTNode, block: cst.CSTNode, scope: Scope, code: str) -> List[cst.CSTNode]:
        """The consecutive update statements around ``stmt`` (none suppressed for ``code``) that share one
        ``with torch.no_grad():``."""
        key = id(block)
        if key not in self._runs:
            runs, current = [], []
            for child in block.body:
                if self.is_update(child, scope) and not self.ctx.suppressed(child, code):
                    current.append(child)
                    continue
                if current:
                    runs.append(current)
                current = []
            if current:
                runs.append(current)
            self._runs[key] = runs
        return next((run for run in self._runs[key] if any(s is stmt for s in run)), [stmt])

    def grad_off(self, node: cst.CSTNode) -> bool:
        """Inside ``no_grad``/``inference_mode``/``set_grad_enabled(False)`` (a ``with`` or a decorator)."""
        return self.model.grad_mode(node) is GradMode.OFF

    # -- `.data` sites -------------------------------------------------------------------------------
    def site(self, attr: cst.Attribute, ancestors: Sequence[cst.CSTNode]) -> Optional[Site]:
        key = id(attr)
        if key not in self._sites:
            self._sites[key] = self._classify(attr, list(ancestors))
        return self._sites[key]

    def _classify(self, attr: cst.Attribute, ancestors: List[cst.CSTNode]) -> Optional[Site]:
        scope = self.model.scope_of(attr)
        receiver = attr.value
        parent = ancestors[-2]
        if type(parent) is cst.Attribute and parent.value is attr and parent.attr.value.startswith("__"):
            return None  # `Tensor.data.__get__`: the descriptor itself, not a tensor's data
        index_zero = (type(parent) is cst.Subscript and parent.value is attr and index_value(parent) == 0
                      and not written(ancestors[:-1]))
        if index_zero and self._repeated_index(parent, ancestors[:-1]) and self.one_value(receiver, scope):
            return None  # `loss.data[0].data[0]`: the outer `.data[0]` reads the one value for both
        row = index_zero and self.tensor_use(ancestors[:-1])
        collapsed = self._collapsed(receiver, scope)
        redundant = is_data(receiver) or (collapsed is receiver and _data_base(receiver))
        receiver = collapsed
        evidence = self.tensor_evidence(receiver, scope, ancestors)
        if not evidence and not (index_zero and not row and self.torch_file and not vetoed(receiver)):
            return None  # `x.data[0]` in a torch file is the 0.3 idiom even without other evidence
        if redundant and evidence:
            return Site(SiteKind.REDUNDANT, attr, receiver)  # `x.data.data`, `x.data[i].data`: one `.data` is enough
        found = self.value(receiver, scope)
        scalar = found.kind is Kind.TENSOR and found.rank == 0
        if index_zero and scalar:  # even used as a tensor (`loss.data[0].mean()`): 0.3 gave the number there
            return Site(SiteKind.ONE_VALUE_INDEX, parent, receiver)
        if index_zero and not row:
            if found.kind is Kind.TENSOR and found.rank == 1:
                return Site(SiteKind.FIRST_ELEMENT, parent, receiver)
            if found.rank is None or found.rank <= 1:
                return Site(SiteKind.UNPROVEN_INDEX, parent, receiver)
        if scalar:
            subscript = number_chain(ancestors)
            if subscript is not None:
                return Site(SiteKind.ONE_VALUE_CHAIN, subscript, receiver)
            if self._accumulated(ancestors, scope):
                return Site(SiteKind.COUNTER_TERM, attr, receiver)
        reduction = self._number_reduction(ancestors, scope)
        if reduction is not None:
            return Site(SiteKind.NUMBER_REDUCTION, reduction, receiver)
        if (self.inside_update(ancestors, scope) or written(ancestors) or swaps_storage(ancestors)
                or self._mutating_argument(ancestors, scope) or self._mutated_alias(ancestors, scope)):
            return None
        if self._plain_read(receiver, ancestors):
            return Site(SiteKind.PLAIN_READ, attr, receiver)
        return Site(SiteKind.DETACHED_READ, attr, receiver)

    def _repeated_index(self, subscript: cst.Subscript, ancestors: List[cst.CSTNode]) -> bool:
        """``subscript`` (``x.data[0]``) is the receiver of a further ``.data[0]``."""
        if len(ancestors) < 3:
            return False
        outer, outer_sub = ancestors[-2], ancestors[-3]
        return (is_data(outer) and outer.value is subscript and type(outer_sub) is cst.Subscript
                and outer_sub.value is outer and index_value(outer_sub) == 0)

    def _collapsed(self, receiver: cst.CSTNode, scope: Scope) -> cst.CSTNode:
        """``loss`` for ``loss.data[0]`` when ``loss`` holds one value (the receiver of ``loss.data[0].data``)."""
        while (type(receiver) is cst.Subscript and index_value(receiver) == 0 and is_data(receiver.value)
               and self.one_value(receiver.value.value, scope)):
            receiver = receiver.value.value
        return receiver

    def converted_accumulator(self, name: str, scope: Scope) -> bool:
        """``total = 0`` ... ``total += loss.data``: a 0.3 1-element counter that becomes a Python number."""
        key = (id(scope), name)
        if key in self._accumulators:
            return self._accumulators[key]
        self._accumulators[key] = False  # while computing
        bindings = scope.bindings.get(name, ())
        ok = bool(bindings) and not (scope.uses.get(name, set()) - {"[0]"})
        found_data = False
        for binding in bindings if ok else ():
            if binding.kind is BindingKind.ASSIGN and self.is_number(binding.value, scope):
                continue
            if binding.kind is not BindingKind.AUGMENTED or not isinstance(binding.value.operator, NUMBER_UPDATES):
                ok = False
                break
            terms = self._counter_terms(binding.value.value, scope)
            if terms is None:
                ok = False
                break
            found_data = found_data or terms
        self._accumulators[key] = ok and found_data
        return self._accumulators[key]

    def _counter_terms(self, expr: cst.CSTNode, scope: Scope) -> Optional[bool]:
        """Arithmetic of numbers and ``scalar.data`` terms: whether it has such a term (``None``: not that)."""
        if type(expr) is cst.BinaryOperation and isinstance(expr.operator, ARITHMETIC):
            left, right = self._counter_terms(expr.left, scope), self._counter_terms(expr.right, scope)
            return None if left is None or right is None else left or right
        if is_data(expr):
            return True if self.one_value(expr.value, scope) else None
        return False if self.is_number(expr, scope) else None

    def _accumulated(self, ancestors: List[cst.CSTNode], scope: Scope) -> bool:
        index = len(ancestors) - 1
        while type(ancestors[index - 1]) is cst.BinaryOperation and isinstance(ancestors[index - 1].operator,
                                                                                ARITHMETIC):
            index -= 1
        statement = ancestors[index - 1]
        return (type(statement) is cst.AugAssign and statement.value is ancestors[index]
                and type(statement.target) is cst.Name
                and self.converted_accumulator(statement.target.value, scope))

    def _number_reduction(self, ancestors: List[cst.CSTNode], scope: Scope) -> Optional[cst.Call]:
        """``x.data.sum()`` (a Python number in 0.3) where the result is only used as a number."""
        if len(ancestors) < 4:
            return None
        attr, method, call = ancestors[-1], ancestors[-2], ancestors[-3]
        if not (type(method) is cst.Attribute and method.value is attr and type(call) is cst.Call
                and call.func is method and full_reduction_call(call)):
            return None
        return call if self.number_context(ancestors[:-2], scope) else None

    def number_context(self, ancestors: List[cst.CSTNode], scope: Scope) -> bool:
        """The value ``ancestors[-1]`` ends up as a number (printed, compared, stored in a name used as one)."""
        index = len(ancestors) - 1
        while type(ancestors[index - 1]) in (cst.BinaryOperation, cst.UnaryOperation):
            index -= 1
        consumer, value = ancestors[index - 1], ancestors[index]
        if type(consumer) in (cst.Arg, cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression):
            return not (type(consumer) is cst.Arg and consumer.keyword is not None
                        and consumer.keyword.value == "out")
        if type(consumer) is cst.Assign and len(consumer.targets) == 1:
            target = consumer.targets[0].target
        elif type(consumer) is cst.AugAssign and consumer.value is value:
            target = consumer.target
        else:
            return False
        if type(target) is not cst.Name:
            return False
        return not scope.uses.get(target.value)  # printed, formatted, compared: never `n.item()`, `n[0]`

    def _mutated_alias(self, ancestors: List[cst.CSTNode], scope: Scope) -> bool:
        """``h = x.data`` and ``h`` later changed in place (or stored where it cannot be followed)."""
        statement = ancestors[-2]
        if not (type(statement) is cst.Assign and statement.value is ancestors[-1]):
            return False
        for target in statement.targets:
            if type(target.target) is not cst.Name:
                return True
            uses = scope.uses.get(target.target.value, set())
            if "[]=" in uses or any(is_inplace_method(use) for use in uses):
                return True
        return False

    def _mutating_argument(self, ancestors: List[cst.CSTNode], scope: Scope) -> bool:
        """``.data`` handed to a function of this file that changes that argument in place."""
        arg, call = ancestors[-2], ancestors[-3] if len(ancestors) > 2 else None
        if not (type(arg) is cst.Arg and type(call) is cst.Call and type(call.func) is cst.Name):
            return False
        _, bindings = self.model.lookup(call.func.value, scope)
        if not bindings or len(bindings) != 1 or bindings[0].kind is not BindingKind.FUNCTION:
            return False
        fdef = bindings[0].node
        params = list(fdef.params.params)
        if arg.keyword is not None:
            names = [arg.keyword.value]
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            names = [params[index].name.value] if index < len(params) else []
        return any(self.model.changes_in_place(fdef, name) for name in names)

    def _plain_read(self, receiver: cst.CSTNode, ancestors: List[cst.CSTNode]) -> bool:
        """The value only feeds something without a graph (``.item()``, ``.size()``, a comparison, indices)."""
        if type(receiver) is cst.Attribute and receiver.attr.value == "grad" and not self.model.creates_graph:
            return True  # a .grad tensor has no graph unless backward(create_graph=True)
        if is_comparison(receiver):
            return True
        arg, call = ancestors[-2], ancestors[-3] if len(ancestors) > 2 else None
        if type(arg) is cst.Arg and type(call) is cst.Call:
            if (self.model.qualname(call.func) or "").startswith("torch.nn.init."):
                return True  # init functions run under no_grad themselves
        index = len(ancestors) - 1
        while index >= 1:
            current, parent = ancestors[index], ancestors[index - 1]
            if type(parent) is cst.Attribute and parent.value is current:
                name = parent.attr.value
                call = ancestors[index - 2] if index >= 2 else None
                if not (type(call) is cst.Call and call.func is parent):
                    return name in torchapi.METADATA_ATTRIBUTES
                if name in PLAIN_RESULTS or (name == "type" and not call.args):
                    return True
                if name in torchapi.INDEX_RESULTS:
                    outer = ancestors[index - 3] if index >= 3 else None
                    return type(outer) is cst.Subscript and outer.value is call and index_value(outer) == 1
                if name in ("numpy", "data", "detach") or name.endswith("_"):
                    return False
                index -= 2
                continue
            if type(parent) is cst.Arg:
                call = ancestors[index - 2] if index >= 2 else None
                if type(call) is not cst.Call:
                    return False
                if type(call.func) is cst.Attribute and call.func.attr.value in torchapi.COMPARISON_METHODS:
                    return True
                qualified = self.model.qualname(call.func) or ""
                return qualified.startswith("torch.") and qualified.rpartition(".")[2] in torchapi.COMPARISON_METHODS
            if type(parent) is cst.ComparisonTarget:
                return isinstance(parent.operator, NUMERIC_COMPARISONS)
            if type(parent) is cst.Comparison:
                return all(isinstance(t.operator, NUMERIC_COMPARISONS) for t in parent.comparisons)
            if type(parent) is cst.Subscript and parent.value is current \
                    and self.zero_dim_use(parent) is ZeroDimUse.NUMBER:
                return True  # `x.data[i]` becomes the Python number `x[i].item()`
            if type(parent) in (cst.BinaryOperation, cst.UnaryOperation) or (
                    type(parent) is cst.Subscript and parent.value is current):
                index -= 1
                continue
            return False
        return False


def full_reduction_call(call: cst.Call) -> bool:
    """``x.sum()``, ``x.norm(2)``: a method reducing over every element, as 0.3's Python numbers were made."""
    name = call.func.attr.value if type(call.func) is cst.Attribute else ""
    return name in LEGACY_NUMBER_REDUCTIONS and full_reduction(call, name)
