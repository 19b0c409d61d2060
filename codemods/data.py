"""TM3xx: ``.data[0]``, 0.3 Python numbers, ``.data`` reads and ``.data`` updates.

In 0.3 a ``Variable`` wrapped a tensor and ``.data`` unwrapped it. A loss was a
1-element 1-dim tensor, so ``loss.data[0]`` was a Python number, and a full
reduction of a *tensor* (``x.data.sum()``, ``pred.eq(target).sum()``) returned
a Python number as well. Since 0.4 a loss is 0-dim (``loss.data[0]`` raises
IndexError), reductions return 0-dim tensors (counters silently turn into
tensors), and ``.data`` is an escape hatch that hides changes from autograd:
reads become ``detach()`` (same values; autograd still sees in-place changes)
and updates become ``with torch.no_grad():`` blocks.

All four rules share one per-file analysis (``_Analysis``): flow-insensitive
bindings per scope, a small kind inference (1-element tensor, tensor, Python
number, loss function, ...), and for every ``.data`` attribute the one rule
that owns it, so that no two fixes touch the same ``.data``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemods.base import Example, Rule
from codemods.deprecated import LOSS_FUNCTIONS, modern_signature
from codemods.engine import _suppressed
from codemods.walk import children, walk

# -- kinds the inference distinguishes -------------------------------------------------------
SCALAR = "1-element tensor"  # a loss, a full reduction: `.item()` gives its value
TENSOR = "tensor"
NUMBER = "number"
LOSS_FN = "loss function"  # calling it gives a SCALAR
MODULE = "module"  # calling it gives a TENSOR
OTHER = "other"  # known not to be a tensor (strings, containers, namespaces, modules)
_PENDING = "pending"  # a binding that refers to itself (`total = total + x`)

# Methods that reduce over every element; value: positional arguments that still do (`norm(2)`).
FULL_REDUCTIONS = {"sum": 0, "mean": 0, "prod": 0, "std": 0, "var": 0, "max": 0, "min": 0, "median": 0,
                   "norm": 1, "dot": 1, "dist": 2, "trace": 0}
# `x.sum(0)` of a 1-dim `x` (`.view(-1)`, `.reshape(-1)`, `.flatten()`) reduces over every element too.
DIM_REDUCTIONS = frozenset({"sum", "mean", "prod"})
# Methods that keep a 1-dim tensor 1-dim (and its values free of a graph when they were).
ELEMENTWISE = frozenset({"cuda", "cpu", "to", "float", "double", "half", "type", "long", "int", "byte", "bool",
                         "detach", "clone", "contiguous", "abs", "neg", "exp", "log", "sqrt"})
# Methods that keep a 1-element tensor 1-element (and a loss function a loss function, for moves).
MOVES = frozenset({"cuda", "cpu", "to", "float", "double", "half", "type"})
SCALAR_PRESERVING = MOVES | {"detach", "clone", "squeeze", "contiguous", "exp", "log", "sqrt", "abs", "neg",
                             "mul", "div", "add", "sub", "pow"}
# Reading `.data` only to get one of these: the result never carries a graph, so `.data` can go.
NO_GRAD_RESULTS = frozenset({"item", "tolist", "size", "dim", "numel", "nelement", "ndimension", "element_size",
                             "get_device", "is_contiguous", "eq", "ne", "lt", "le", "gt", "ge", "equal", "argmax",
                             "argmin", "argsort", "nonzero", "new", "new_zeros", "new_ones", "new_empty", "new_full",
                             "new_tensor"})
METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "is_cuda", "ndim", "layout", "is_sparse"})
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "equal"})
NUMERIC_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                       cst.GreaterThanEqual)
INDEX_RESULTS = frozenset({"max", "min", "sort", "topk", "kthvalue", "mode", "median"})  # `[1]`: indices
# `loss.data.cpu().numpy()[0]`: calls between `.data` and `[0]` that keep the one value.
TO_NUMBER_CHAIN = frozenset({"cpu", "cuda", "numpy", "detach"})
# In-place methods that change shape, storage or flags rather than values: never "updates".
NOT_VALUE_UPDATES = frozenset({"set_", "resize_", "resize_as_", "t_", "transpose_", "squeeze_", "unsqueeze_",
                               "as_strided_", "requires_grad_", "share_memory_", "detach_", "swapdims_",
                               "swapaxes_", "retain_grad"})
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)
TORCH_NOT_TENSORS = frozenset({"device", "dtype", "no_grad", "enable_grad", "manual_seed", "save", "load",
                               "numel", "typename", "Size", "Generator"})
BUILTIN_NUMBERS = frozenset({"len", "int", "float", "round"})
# Modules whose functions take tensors (not `torch.distributed`, `torch._decomp`, `torch.jit`, ...).
TENSOR_FUNCTION_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                                     "torch.nn.init", "torch.autograd", "torch.autograd.variable"})
# Libraries whose calls never return torch tensors (numpy arrays have a `.data` memoryview).
NON_TORCH_LIBRARIES = frozenset({"numpy", "scipy", "pandas", "PIL", "cv2", "skimage", "imageio", "h5py", "json",
                                 "pickle", "os", "sys", "io", "csv", "re", "random", "collections", "itertools",
                                 "argparse", "time", "datetime", "sklearn", "matplotlib", "torchvision",
                                 "requests", "yaml", "torchnet"})
# Names that hold something with a `.data` attribute that is not a tensor's (datasets, namespaces, ...).
NON_TENSOR_NAME = re.compile(
    r"(?i)^(self|cls|args?|opts?|options|config|cfg|conf|hparams|flags|kwargs|params|res|resp|result|results|"
    r"\w*(set|loader|corpus|df|dict|json|response|request|image|img|file))$")
# Attributes only torch tensors have (numpy arrays share `max`, `view`, `size`, `sum`, ...): a name used
# with one of them, or a `.data` followed by one, is a tensor.
TENSOR_ONLY = frozenset({"backward", "grad", "grad_fn", "requires_grad", "requires_grad_", "register_hook",
                         "retain_grad", "volatile", "cuda", "cpu", "numpy", "detach", "view_as", "unsqueeze", "dim",
                         "topk", "eq", "ne", "float", "long", "double", "half", "contiguous", "permute", "mm", "bmm",
                         "matmul", "expand", "expand_as", "masked_fill", "masked_fill_", "index_select", "gather",
                         "scatter_", "zero_", "fill_", "normal_", "uniform_", "add_", "mul_", "is_cuda", "new",
                         "type_as", "chunk", "narrow", "t", "norm", "sigmoid", "tanh", "exp", "log", "clamp",
                         "item", "data_ptr", "new_zeros", "new_ones", "new_full"})
NAMESPACE_NAME = re.compile(r"(?i)^(args?|opts?|options|config|cfg|conf|hparams|flags)$")
# `output = model(x)` with `model` a parameter: what such names are called with returns a tensor.
MODEL_NAME = re.compile(r"^(?i:model|net|network|encoder|decoder|generator|discriminator|critic|classifier|"
                        r"\w+_(?:model|net)|net_?[A-Z]\w*)$|^[GD]$")


def _is_parameter_attribute(name: str) -> bool:
    return name in ("weight", "bias") or name.startswith(("weight_", "bias_"))


def _positional(call: cst.Call) -> List[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _keywords(call: cst.Call) -> Dict[str, cst.Arg]:
    return {a.keyword.value: a for a in call.args if a.keyword is not None}


def _full_reduction(call: cst.Call, name: Optional[str] = None, extra: int = 0) -> bool:
    """``x.sum()``/``x.norm(2)`` (or ``torch.sum(x)`` with ``name``, ``extra=1``): reduces over all elements."""
    if name is None:
        name = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    if name not in FULL_REDUCTIONS or any(a.star for a in call.args):
        return False
    if set(_keywords(call)) & {"dim", "axis", "keepdim"}:
        return False
    return len(_positional(call)) <= FULL_REDUCTIONS[name] + extra


def _first_dim_reduction(call: cst.Call, extra: int = 0) -> bool:
    """``x.sum(0)``, ``x.mean(dim=-1)`` (``torch.sum(x, 0)`` with ``extra=1``): along dimension 0, no keepdim."""
    if any(a.star for a in call.args) or set(_keywords(call)) - {"dim"}:
        return False
    dims = [a.value for a in _positional(call)[extra:]] + [a.value for a in call.args if a.keyword is not None]
    return len(dims) == 1 and (_minus_one(dims[0]) or isinstance(dims[0], cst.Integer) and dims[0].value == "0")


def _minus_one(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, cst.Integer) and node.expression.value == "1")


def _index_value(sub: cst.Subscript) -> Optional[int]:
    """``n`` for ``x[n]`` (a single non-negative integer index), else ``None``."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    value = sub.slice[0].slice.value
    return int(value.value) if isinstance(value, cst.Integer) and value.value.isdigit() else None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _combine(kinds) -> Optional[str]:
    """The kind of a name from the kinds of all its bindings (``None``: unknown)."""
    found = {k for k in kinds if k != _PENDING}
    if not found:
        return _PENDING if kinds else None
    if None in found:
        return None
    if found == {NUMBER}:
        return NUMBER
    if found <= {NUMBER, SCALAR}:
        return SCALAR
    if found <= {NUMBER, SCALAR, TENSOR}:
        return TENSOR
    return found.pop() if len(found) == 1 else None


# -- per-file facts ----------------------------------------------------------------------------
class _Scope:
    """Bindings and uses of one function (or the module, or a class body)."""

    def __init__(self, node: cst.CSTNode, parent: Optional["_Scope"], cls: Optional[cst.ClassDef] = None):
        self.node = node
        self.parent = parent
        self.cls = cls  # for a method: its class
        self.bindings: Dict[str, List[Tuple[str, Optional[cst.CSTNode]]]] = {}
        self.globals: Set[str] = set()
        self.backward: Set[str] = set()  # `name.backward()` without a gradient: name held one value
        # name -> attributes used on it; "[0]"/"[]" for subscripts, "[]=" for item assignments
        self.uses: Dict[str, Set[str]] = {}
        self.returns: List[cst.BaseExpression] = []
        self.passed: Dict[str, List[cst.Call]] = {}  # name -> calls it is an argument of


class _Collector:
    """One read-only walk over the file; ``visit_<Node>``/``leave_<Node>`` as in a libcst visitor."""

    def __init__(self, analysis: "_Analysis"):
        self.analysis = analysis
        self.stack: List[_Scope] = [analysis.module_scope]

    def run(self, node: cst.CSTNode) -> None:
        name = type(node).__name__
        visit = getattr(self, "visit_" + name, None)
        if visit is not None and visit(node) is False:
            return
        for child in children(node):
            self.run(child)
        leave = getattr(self, "leave_" + name, None)
        if leave is not None:
            leave(node)

    @property
    def scope(self) -> _Scope:
        return self.stack[-1]

    def _bind(self, target: cst.CSTNode, kind: str, value: Optional[cst.CSTNode]) -> None:
        if isinstance(target, cst.Name):
            self.scope.bindings.setdefault(target.value, []).append((kind, value))
            if kind == "assign":
                self.analysis.anywhere.setdefault(target.value, []).append((self.scope, value))
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                        and value.func.attr.value == "parse_args":
                    self.analysis.namespaces.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = any(isinstance(e, cst.StarredElement) for e in target.elements)
            for index, element in enumerate(target.elements):
                if kind == "for":
                    self._bind(element.value, "for", value)
                elif isinstance(element.value, cst.Name):
                    source = None if starred or kind != "assign" else (value, index)
                    self.scope.bindings.setdefault(element.value.value, []).append(("unpack", source))
                else:
                    self._bind(element.value, "unpack", None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, "unpack", None)
        elif (kind == "assign" and isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
              and target.value.value == "self" and self.scope.cls is not None):
            key = (id(self.scope.cls), target.attr.value)
            self.analysis.class_attrs.setdefault(key, []).append((self.scope, value))

    def _function_parent(self) -> _Scope:
        scope = self.scope
        while isinstance(scope.node, cst.ClassDef):
            scope = scope.parent
        return scope

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name, "def", node)
        cls = self.scope.node if isinstance(self.scope.node, cst.ClassDef) else None
        scope = _Scope(node, self._function_parent(), cls)
        self.analysis.scopes[id(node)] = scope
        self.stack.append(scope)
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self._bind(param.name, "param", None)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name, "param", None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name, "class", node)
        if any((self.analysis.ctx.qualname(b.value) or "").startswith("torch.nn.") for b in node.bases):
            self.analysis.module_classes.add(id(node))
        scope = _Scope(node, self.scope)
        self.analysis.scopes[id(node)] = scope
        self.stack.append(scope)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, "assign", node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, "assign", node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._written_item(node.target)
        if isinstance(node.target, cst.Name):
            self.scope.bindings.setdefault(node.target.value, []).append(("aug", node))

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, "for", node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, "other", None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name, "other", None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, "other", None)

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.globals.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.globals.update(item.name.value for item in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.scope.returns.append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "backward" and isinstance(func.value, cst.Name)
                and not _positional(node) and "gradient" not in _keywords(node)):
            self.scope.backward.add(func.value.value)
        if "create_graph" in _keywords(node):
            self.analysis.create_graph = True
        for arg in node.args:
            if isinstance(arg.value, cst.Name):
                self.scope.passed.setdefault(arg.value.value, []).append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data":
            self.analysis.has_data = True
        if isinstance(node.value, cst.Name):
            self.scope.uses.setdefault(node.value.value, set()).add(node.attr.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name):
            self.scope.uses.setdefault(node.value.value, set()).add("[0]" if _index_value(node) == 0 else "[]")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._written_item(node.target)

    def _written_item(self, target: cst.CSTNode) -> None:
        """``h[i] = v``: ``h`` is changed in place."""
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.scope.uses.setdefault(target.value.value, set()).add("[]=")


@dataclass
class _Site:
    """What happens to one ``.data``: the rule that owns it, the node it reports on, the fix."""

    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[Callable[[cst.CSTNode], cst.CSTNode]]
    unsafe: bool = False


class _Analysis:
    """Facts about one file, computed once and shared by TM301-TM304."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.module_scope = _Scope(ctx.module, None)
        self.scopes: Dict[int, _Scope] = {}
        self.anywhere: Dict[str, List[Tuple[_Scope, cst.CSTNode]]] = {}  # name -> every assigned value
        self.class_attrs: Dict[Tuple[int, str], List[Tuple[_Scope, cst.CSTNode]]] = {}
        self.namespaces: Set[str] = set()  # names bound to `parser.parse_args()`
        self.create_graph = False
        self.has_data = False
        self.module_classes: Set[int] = set()  # classes of this file that subclass torch.nn.*
        self.torch_file = ctx.imports.imports_module("torch")
        _Collector(self).run(ctx.module)
        self._kinds: Dict[Tuple[int, int], Optional[str]] = {}
        self._pending: Set[Tuple[int, int]] = set()
        self._sites: Dict[int, Optional[_Site]] = {}
        self._updates: Dict[int, bool] = {}
        self._runs: Dict[int, List[List[cst.CSTNode]]] = {}
        self._accumulators: Dict[Tuple[int, str], bool] = {}
        self._mutated: Dict[Tuple[int, str], bool] = {}
        self.stashes: Dict[int, list] = {}

    # -- scopes ------------------------------------------------------------------------------
    def scope_for(self, ancestors: Sequence[cst.CSTNode]) -> _Scope:
        for node in reversed(ancestors):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and id(node) in self.scopes:
                return self.scopes[id(node)]
        return self.module_scope

    def lookup(self, name: str, scope: _Scope):
        """(scope, bindings) of the innermost scope that binds ``name``, or (None, None)."""
        if name in scope.globals:
            scope = self.module_scope
        while scope is not None:
            if name in scope.bindings:
                return scope, scope.bindings[name]
            scope = scope.parent
        return None, None

    # -- kinds -------------------------------------------------------------------------------
    def kind(self, node: cst.CSTNode, scope: _Scope, depth: int = 0) -> Optional[str]:
        key = (id(node), id(scope))
        if key in self._kinds:
            return self._kinds[key]
        if key in self._pending or depth > 12:
            return _PENDING
        self._pending.add(key)
        try:
            result = self._infer(node, scope, depth + 1)
        finally:
            self._pending.discard(key)
        self._kinds[key] = result
        return result

    def _infer(self, node: cst.CSTNode, scope: _Scope, depth: int) -> Optional[str]:
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
            return NUMBER
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple,
                             cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp,
                             cst.Lambda)):
            return OTHER
        if isinstance(node, (cst.Name, cst.Attribute)):
            qualified = self.ctx.qualname(node)
            if qualified is not None:
                return self._qualified_kind(qualified)
        if isinstance(node, cst.Name):
            return self._name_kind(node.value, scope, depth)
        if isinstance(node, cst.Attribute):
            return self._attribute_kind(node, scope, depth)
        if isinstance(node, cst.Call):
            return self._call_kind(node, scope, depth)
        if isinstance(node, cst.Subscript):
            value = node.value
            if (_index_value(node) == 0 and isinstance(value, cst.Attribute) and value.attr.value == "data"
                    and self.kind(value.value, scope, depth) == SCALAR):
                return NUMBER  # `loss.data[0]`
            index = _index_value(node)
            if index is not None and isinstance(value, (cst.Call, cst.Tuple, cst.List)):
                element = self._element_kind(value, index, scope, depth)
                if element is not None:
                    return element  # `accuracy(output, target)[0]`
            inner = self.kind(value, scope, depth)
            return inner if inner in (SCALAR, TENSOR) else None
        if isinstance(node, cst.BinaryOperation):
            left, right = self.kind(node.left, scope, depth), self.kind(node.right, scope, depth)
            if isinstance(node.operator, cst.MatrixMultiply):
                return TENSOR if TENSOR in (left, right) else None
            if not isinstance(node.operator, ARITHMETIC):
                return None
            return _combine([left, right]) if {left, right} <= {NUMBER, SCALAR, TENSOR, _PENDING} else None
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, (cst.Minus, cst.Plus)):
                return self.kind(node.expression, scope, depth)
            return None
        if isinstance(node, cst.IfExp):
            return _combine([self.kind(node.body, scope, depth), self.kind(node.orelse, scope, depth)])
        return None

    @staticmethod
    def _qualified_kind(qualified: str) -> str:
        module, _, name = qualified.rpartition(".")
        if module == "torch.nn.functional" and name in LOSS_FUNCTIONS:
            return LOSS_FN
        if module == "math":
            return NUMBER
        return OTHER

    def _name_kind(self, name: str, scope: _Scope, depth: int) -> Optional[str]:
        if name in ("True", "False", "None"):
            return OTHER
        found, bindings = self.lookup(name, scope)
        if bindings is None:
            return None
        result = _combine([self._binding_kind(kind, value, found, depth) for kind, value in bindings])
        if (result in (None, TENSOR) and name in found.backward
                and sum(1 for kind, _ in bindings if kind != "param") <= 1):
            return SCALAR  # `.backward()` without a gradient only works on a 1-element tensor
        return result

    def _binding_kind(self, kind: str, value, scope: _Scope, depth: int) -> Optional[str]:
        if kind == "assign":
            return self.kind(value, scope, depth)
        if kind == "aug":
            if not isinstance(value.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign,
                                               cst.DivideAssign)):
                return None
            result = self.kind(value.value, scope, depth)
            return result if result in (NUMBER, SCALAR, TENSOR) else None
        if kind == "for":
            return TENSOR if self.parameter_source(value, scope) else None
        if kind == "def":
            return OTHER
        if kind == "class":
            return OTHER  # calling it: `_call_kind`
        if kind == "unpack" and value is not None:
            return self._element_kind(*value, scope, depth)
        return None

    def _element_kind(self, expr: cst.CSTNode, index: int, scope: _Scope, depth: int) -> Optional[str]:
        """Element ``index`` of a tuple/list literal, or of what a function of this file returns."""
        sources = self.element_sources(expr, index, scope)
        return _combine([self.kind(e, s, depth) for e, s in sources]) if sources else None

    def element_sources(self, expr: cst.CSTNode, index: int, scope: _Scope, depth: int = 0):
        """The expressions (with their scopes) element ``index`` of ``expr`` can come from, or ``None``.

        ``expr`` is a tuple/list literal, or a call of a function of this file whose every
        ``return`` is such a literal or a local list only filled by ``append`` (``res = []`` ...
        ``res.append(v)`` ... ``return res``: every element is one of the appended values)."""
        if isinstance(expr, (cst.Tuple, cst.List)):
            elements = expr.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or index >= len(elements):
                return None
            return [(elements[index].value, scope)]
        if depth > 2 or not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)):
            return None
        _, bindings = self.lookup(expr.func.value, scope)
        if not bindings or len(bindings) != 1 or bindings[0][0] != "def":
            return None
        fdef = bindings[0][1]
        body = self.scopes[id(fdef)]
        sources = []
        for value in body.returns or [None]:
            found = (self.element_sources(value, index, body, depth + 1) if isinstance(value, (cst.Tuple, cst.List))
                     else self._appended(fdef, body, value))
            if not found:
                return None
            sources.extend(found)
        return sources

    def _appended(self, fdef: cst.FunctionDef, body: _Scope, value: Optional[cst.CSTNode]):
        """The values a local list ``value`` (a name) is built from: literal elements and ``append`` arguments."""
        if not isinstance(value, cst.Name):
            return None
        name = value.value
        bindings = body.bindings.get(name, ())
        if not bindings or body.uses.get(name, set()) - {"append"} or name in body.passed or not all(
                kind == "assign" and isinstance(v, cst.List) for kind, v in bindings):
            return None
        if any(isinstance(e, cst.StarredElement) for _, v in bindings for e in v.elements):
            return None
        sources = [(e.value, body) for _, v in bindings for e in v.elements]
        for node in walk(fdef.body):
            if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value == "append" and isinstance(node.func.value, cst.Name)
                    and node.func.value.value == name):
                if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
                    return None
                sources.append((node.args[0].value, body))
        return sources or None

    def _attribute_kind(self, node: cst.Attribute, scope: _Scope, depth: int) -> Optional[str]:
        attr, receiver = node.attr.value, node.value
        if attr == "data":
            inner = self.kind(receiver, scope, depth)
            return inner if inner in (SCALAR, TENSOR) else None
        if attr == "grad" or _is_parameter_attribute(attr):
            return TENSOR
        if isinstance(receiver, cst.Name):
            if receiver.value == "self":
                values = self._self_attribute(attr, scope)
                return _combine([self.kind(v, s, depth) for s, v in values]) if values else None
            if self._is_namespace(receiver.value, scope):
                return NUMBER  # an argparse option used in arithmetic
        return None

    def _self_attribute(self, attr: str, scope: _Scope) -> List[Tuple[_Scope, cst.CSTNode]]:
        while scope is not None and scope.cls is None:
            scope = scope.parent
        return self.class_attrs.get((id(scope.cls), attr), []) if scope is not None else []

    def _is_namespace(self, name: str, scope: _Scope) -> bool:
        if name in self.namespaces:
            return True
        _, bindings = self.lookup(name, scope)
        return bool(NAMESPACE_NAME.match(name)) and all(kind == "param" for kind, _ in bindings or ())

    def _call_kind(self, node: cst.Call, scope: _Scope, depth: int) -> Optional[str]:
        func = node.func
        qualified = self.ctx.qualname(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualified is not None:
            return self._torch_call_kind(qualified, node, scope, depth)
        if isinstance(func, cst.Name):
            found, bindings = self.lookup(func.value, scope)
            if bindings is None:
                if func.value in BUILTIN_NUMBERS:
                    return NUMBER
                if self._loss_name(func.value):
                    return SCALAR
                return TENSOR if MODEL_NAME.match(func.value) else None
            callee = self.kind(func, scope, depth)
            if callee == LOSS_FN:
                return SCALAR
            if callee == MODULE:
                return TENSOR
            if len(bindings) == 1 and bindings[0][0] == "class":
                return MODULE if id(bindings[0][1]) in self.module_classes else None
            if len(bindings) == 1 and bindings[0][0] == "def":
                returns = self.scopes[id(bindings[0][1])]
                return _combine([self.kind(r, returns, depth) for r in returns.returns]) if returns.returns else None
            if all(kind == "param" for kind, _ in bindings):
                if self._loss_name(func.value):
                    return SCALAR
                return TENSOR if MODEL_NAME.match(func.value) else None
            return None
        if not isinstance(func, cst.Attribute):
            return None
        method, receiver = func.attr.value, func.value
        if method == "item" or method in ("dim", "numel", "nelement") or (method == "size" and _positional(node)):
            return NUMBER
        callee = self.kind(func, scope, depth)
        if callee == LOSS_FN:
            return SCALAR
        if callee == MODULE:
            return TENSOR
        inner = self.kind(receiver, scope, depth)
        if method in FULL_REDUCTIONS and _full_reduction(node) and inner not in (OTHER, NUMBER, LOSS_FN, MODULE):
            return SCALAR
        if inner in (LOSS_FN, MODULE) and method in MOVES:
            return inner  # `criterion = nn.CrossEntropyLoss().cuda()`
        if method in DIM_REDUCTIONS and _first_dim_reduction(node) and self.one_dim(receiver, scope):
            return SCALAR  # `correct[:k].view(-1).float().sum(0)`
        if inner == SCALAR and (method in SCALAR_PRESERVING or _inplace_name(method)):
            return SCALAR
        if inner in (SCALAR, TENSOR):
            return OTHER if method in ("tolist", "numpy", "size") else TENSOR
        return None

    def _torch_call_kind(self, qualified: str, node: cst.Call, scope: _Scope, depth: int) -> Optional[str]:
        module, _, name = qualified.rpartition(".")
        if module == "torch.nn.functional":
            if name in LOSS_FUNCTIONS:
                return SCALAR if _reduces(node, positional_limit=3) else TENSOR
            return TENSOR
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return TENSOR
        if module == "torch.nn" and name[:1].isupper():
            if (name.endswith("Loss") and name != "AdaptiveLogSoftmaxWithLoss") or name == "NLLLoss2d":
                return LOSS_FN if _reduces(node, positional_limit=1) else MODULE
            return MODULE
        if qualified == "torch.autograd.Variable":
            args = _positional(node)
            return SCALAR if args and self.kind(args[0].value, scope, depth) == SCALAR else TENSOR
        if module == "torch":
            if name in FULL_REDUCTIONS:
                args = _positional(node)
                whole = _full_reduction(node, name, extra=1) or (
                    name in DIM_REDUCTIONS and _first_dim_reduction(node, extra=1)
                    and bool(args) and self.one_dim(args[0].value, scope))
                return SCALAR if whole else TENSOR
            if name in TORCH_NOT_TENSORS or name.startswith(("is_", "set_", "get_")):
                return OTHER
            return TENSOR
        if module == "math":
            return NUMBER
        if qualified.startswith("torchvision.models."):
            return MODULE
        if qualified.split(".")[0] in NON_TORCH_LIBRARIES or qualified.startswith("torch.utils."):
            return OTHER
        return None

    def one_dim(self, node: cst.CSTNode, scope: _Scope, depth: int = 0) -> bool:
        """``x.view(-1)``, ``x.reshape(-1)``, ``x.flatten()`` (through casts, moves, a name bound only to one)."""
        if depth > 4:
            return False
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            return self.one_dim(node.value, scope, depth + 1)
        if isinstance(node, cst.Name):
            found, bindings = self.lookup(node.value, scope)
            return bool(bindings) and all(kind == "assign" and self.one_dim(value, found, depth + 1)
                                          for kind, value in bindings)
        if not isinstance(node, cst.Call):
            return False
        func, args = node.func, node.args
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("view", "reshape"):
                return len(args) == 1 and args[0].keyword is None and _minus_one(args[0].value)
            if method == "flatten":
                return not args
            return method in ELEMENTWISE and self.one_dim(func.value, scope, depth + 1)
        qualified = self.ctx.qualname(func) if isinstance(func, cst.Name) else None
        return qualified == "torch.flatten" and len(args) == 1 and args[0].keyword is None

    def graphless(self, node: cst.CSTNode, scope: _Scope, depth: int = 0) -> bool:
        """``node`` is a tensor of 0.3 (not a Variable): it comes from ``.data``, ``.detach()`` or a
        comparison through methods, indexing and arithmetic with numbers (followed through names,
        tuple unpacking and the lists functions of this file return)."""
        if depth > 12:
            return False
        if _comparison(node):
            return True
        if isinstance(node, cst.Attribute):
            return node.attr.value == "data"
        if isinstance(node, cst.Subscript):
            index = _index_value(node)
            sources = None if index is None else self.element_sources(node.value, index, scope)
            if sources:
                return all(self.graphless(e, s, depth + 1) for e, s in sources)
            return self.graphless(node.value, scope, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITHMETIC):
            return self._graphless_operands([node.left, node.right], scope, depth)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            args = [a.value for a in node.args]
            if node.func.attr.value == "detach":
                return True
            if (self.ctx.qualname(node.func) or "").startswith("torch."):
                return self._graphless_operands(args, scope, depth)  # `torch.sum(x.data, 0)`
            return self._graphless_operands([node.func.value, *args], scope, depth)
        if not isinstance(node, cst.Name):
            return False
        found, bindings = self.lookup(node.value, scope)
        if not bindings:
            return False
        for kind, value in bindings:
            if kind == "assign":
                sources = [(value, found)]
            elif kind == "unpack" and value is not None:
                sources = self.element_sources(*value, found)
            else:
                return False
            if not sources or not all(self.graphless(e, s, depth + 1) for e, s in sources):
                return False
        return True

    def _graphless_operands(self, operands: List[cst.CSTNode], scope: _Scope, depth: int) -> bool:
        """At least one graph-free tensor, and the rest numbers or graph-free tensors."""
        free = [self.kind(n, scope) != NUMBER for n in operands]
        return any(free) and all(self.graphless(n, scope, depth + 1) for n, f in zip(operands, free) if f)

    def _loss_name(self, name: str) -> bool:
        """A parameter named like a module-level loss (``criterion``) that is only ever bound to losses."""
        values = self.anywhere.get(name)
        return bool(values) and all(self.kind(value, scope) == LOSS_FN for scope, value in values)

    # -- tensors, parameters ---------------------------------------------------------------
    def parameter_source(self, expr: cst.CSTNode, scope: _Scope, depth: int = 0) -> bool:
        """``expr`` iterates over parameters (``model.parameters()``, ``group['params']``, ...)."""
        for node in walk(expr):
            if isinstance(node, cst.Attribute) and node.attr.value in ("parameters", "named_parameters",
                                                                        "param_groups"):
                return True
            if isinstance(node, cst.SimpleString) and node.evaluated_value == "params":
                return True
            if isinstance(node, cst.Name) and depth < 2:
                found, bindings = self.lookup(node.value, scope)
                for kind, value in bindings or ():
                    if kind == "assign" and self.parameter_source(value, found, depth + 1):
                        return True
        return False

    def leaf_like(self, receiver: cst.CSTNode, scope: _Scope) -> bool:
        """A tensor that is (or belongs to) a leaf the script optimises: parameters and their grads."""
        if isinstance(receiver, cst.Attribute):
            attr = receiver.attr.value
            if attr == "grad" or _is_parameter_attribute(attr):
                return True
            if isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
                return any(_creates_leaf(v) for _, v in self._self_attribute(attr, scope))
            return False
        if not isinstance(receiver, cst.Name):
            return False
        name = receiver.value
        found, bindings = self.lookup(name, scope)
        if "grad" in scope.uses.get(name, ()) or (found is not None and "grad" in found.uses.get(name, ())):
            return True
        return bool(bindings) and all(
            (kind == "for" and self.parameter_source(value, found)) or (kind == "assign" and _creates_leaf(value))
            for kind, value in bindings)

    def tensor_evidence(self, receiver: cst.CSTNode, scope: _Scope, ancestors: Sequence[cst.CSTNode] = ()) -> bool:
        """``receiver.data`` is a tensor's ``.data``, not a dataset's, a namespace's, a numpy array's.

        Evidence: the receiver's kind (a loss, a torch call, a module's output, a parameter), or the
        name's other uses in its scope (``x.backward()``, ``x.cuda()``, ``criterion(x, y)``), or what is
        done with ``.data`` (``.cpu()``, ``.numpy()``, a torch function's argument). Names like
        ``dataset``, ``args``, ``self``, ``response`` never qualify.
        """
        if self.leaf_like(receiver, scope):
            return True
        kind = self.kind(receiver, scope)
        if kind in (SCALAR, TENSOR):
            return True
        if kind not in (None, _PENDING) or _vetoed(receiver) or (
                isinstance(receiver, cst.Name) and self._is_namespace(receiver.value, scope)):
            return False
        if ancestors and self._chain_evidence(ancestors):
            return True
        return self.torch_file and self._use_evidence(receiver, scope)

    def _use_evidence(self, receiver: cst.CSTNode, scope: _Scope) -> bool:
        if isinstance(receiver, cst.Subscript):
            return self._use_evidence(receiver.value, scope)
        if isinstance(receiver, cst.Call):
            func = receiver.func
            if isinstance(func, cst.Name) and func.value == "next":
                return any(self.parameter_source(a.value, scope) for a in receiver.args)
            # a method called on a value; `lowering.permute(node)` is a module's function, not a tensor's method
            return isinstance(func, cst.Attribute) and self.ctx.qualname(func) is None and (
                func.attr.value in TENSOR_ONLY or func.attr.value in SCALAR_PRESERVING)
        if not isinstance(receiver, cst.Name):
            return False
        name = receiver.value
        found, bindings = self.lookup(name, scope)
        scopes = [scope] + ([found] if found is not None and found is not scope else [])
        if any(TENSOR_ONLY & s.uses.get(name, set()) for s in scopes):
            return True
        if any(kind == "assign" and self.kind(value, found) in (SCALAR, TENSOR) for kind, value in bindings or ()):
            return True
        return any(self._tensor_call(call, s) for s in scopes for call in s.passed.get(name, ()))

    def _tensor_call(self, call: cst.Call, scope: _Scope) -> bool:
        """A call whose tensor arguments are tensors: torch functions, losses, modules."""
        func = call.func
        qualified = self.ctx.qualname(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualified is not None:
            module, _, name = qualified.rpartition(".")
            return module in TENSOR_FUNCTION_MODULES and not (
                name in TORCH_NOT_TENSORS or name.startswith(("is_", "set_", "get_", "_")))
        return self.kind(func, scope) in (LOSS_FN, MODULE)

    def _chain_evidence(self, ancestors: Sequence[cst.CSTNode]) -> bool:
        """``x.data.cpu()``, ``x.data[0].numpy()``, ``Variable(x.data)``: only a tensor's ``.data`` does that."""
        index = len(ancestors) - 1
        parent = ancestors[index - 1]
        if isinstance(parent, cst.Subscript) and parent.value is ancestors[index] and index >= 2:
            index -= 1
            parent = ancestors[index - 1]
        if isinstance(parent, cst.Attribute) and parent.value is ancestors[index]:
            call = ancestors[index - 2] if index >= 2 else None
            torch_keywords = isinstance(call, cst.Call) and call.func is parent and bool(
                {"dim", "keepdim"} & set(_keywords(call)))  # numpy says `axis`, `keepdims`
            return parent.attr.value in TENSOR_ONLY or torch_keywords
        if isinstance(parent, cst.Arg) and index >= 2 and isinstance(ancestors[index - 2], cst.Call):
            return self._tensor_call(ancestors[index - 2], self.scope_for(ancestors))
        return False

    # -- updates -----------------------------------------------------------------------------
    def is_update(self, stmt: cst.CSTNode, scope: _Scope) -> bool:
        """A statement that only changes parameters (or grads) in place through ``.data``."""
        key = id(stmt)
        if key not in self._updates:
            self._updates[key] = self._compute_update(stmt, scope)
        return self._updates[key]

    def _compute_update(self, stmt: cst.CSTNode, scope: _Scope) -> bool:
        if isinstance(stmt, cst.SimpleStatementLine):
            return bool(stmt.body) and all(self._update_small(s, scope) for s in stmt.body)
        if isinstance(stmt, cst.For):
            return stmt.orelse is None and stmt.asynchronous is None and self._update_block(stmt.body, scope)
        if isinstance(stmt, cst.If):
            if not self._update_block(stmt.body, scope):
                return False
            if isinstance(stmt.orelse, cst.Else):
                return self._update_block(stmt.orelse.body, scope)
            return stmt.orelse is None or self.is_update(stmt.orelse, scope)
        return False

    def _update_block(self, body: cst.BaseSuite, scope: _Scope) -> bool:
        if isinstance(body, cst.SimpleStatementSuite):
            return all(self._update_small(s, scope) for s in body.body)
        return all(self.is_update(s, scope) for s in body.body)

    def _update_small(self, small: cst.CSTNode, scope: _Scope) -> bool:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            target = _inplace_receiver(small.value)
        elif isinstance(small, cst.AugAssign):
            target = small.target
        elif (isinstance(small, cst.Assign) and len(small.targets) == 1
              and isinstance(small.targets[0].target, cst.Subscript)):
            target = small.targets[0].target
        else:
            return False
        if isinstance(target, cst.Subscript):
            target = target.value
        return (isinstance(target, cst.Attribute) and target.attr.value == "data"
                and self.leaf_like(target.value, scope))

    def inside_update(self, ancestors: Sequence[cst.CSTNode], scope: _Scope) -> bool:
        return any(self.is_update(n, scope) for n in ancestors
                   if isinstance(n, (cst.SimpleStatementLine, cst.For, cst.If)))

    def run_of(self, stmt: cst.CSTNode, block: cst.CSTNode, scope: _Scope) -> List[cst.CSTNode]:
        """The consecutive update statements around ``stmt`` that share one ``with torch.no_grad():``."""
        key = id(block)
        if key not in self._runs:
            runs, current = [], []
            for child in block.body:
                if self.is_update(child, scope) and not self._suppressed(child):
                    current.append(child)
                    continue
                if current:
                    runs.append(current)
                current = []
            if current:
                runs.append(current)
            self._runs[key] = runs
        return next((run for run in self._runs[key] if any(s is stmt for s in run)), [stmt])

    def _suppressed(self, stmt: cst.CSTNode) -> bool:
        first_line = self.ctx.module.code_for_node(stmt.with_changes(leading_lines=())).lstrip("\n")
        return _suppressed(first_line.split("\n", 1)[0], DataUpdate.code)

    def in_no_grad(self, ancestors: Sequence[cst.CSTNode]) -> bool:
        for node in ancestors:
            if isinstance(node, cst.With):
                if any(isinstance(i.item, cst.Call) and self.ctx.qualname(i.item.func) == "torch.no_grad"
                       for i in node.items):
                    return True
            elif isinstance(node, cst.FunctionDef):
                for decorator in node.decorators:
                    target = decorator.decorator
                    target = target.func if isinstance(target, cst.Call) else target
                    if self.ctx.qualname(target) == "torch.no_grad":
                        return True
        return False

    # -- `.data` sites -------------------------------------------------------------------------
    def site(self, attr: cst.Attribute, ancestors: Sequence[cst.CSTNode]) -> Optional[_Site]:
        key = id(attr)
        if key not in self._sites:
            self._sites[key] = self._classify(attr, list(ancestors))
        return self._sites[key]

    def _classify(self, attr: cst.Attribute, ancestors: List[cst.CSTNode]) -> Optional[_Site]:
        scope = self.scope_for(ancestors)
        receiver = attr.value
        parent = ancestors[-2]
        if isinstance(parent, cst.Attribute) and parent.value is attr and parent.attr.value.startswith("__"):
            return None  # `Tensor.data.__get__`: the descriptor itself, not a tensor's data
        grand = ancestors[-3] if len(ancestors) > 2 else None
        index_zero = (isinstance(parent, cst.Subscript) and parent.value is attr and _index_value(parent) == 0
                      and not _tensor_context(parent, grand) and not _written(ancestors[:-1]))
        if not self.tensor_evidence(receiver, scope, ancestors) and not (
                index_zero and self.torch_file and not _vetoed(receiver)):
            return None  # `x.data[0]` in a torch file is the 0.3 idiom even without other evidence
        scalar = self.kind(receiver, scope) == SCALAR
        name = _code(receiver)
        if index_zero:
            if scalar:
                return _Site("TM301", parent, f"`{name}.data[0]` on a 0-dim tensor raises IndexError: `.item()`",
                             _fix_item)
            return _Site("TM301", parent,
                         f"`{name}.data[0]` was a Python number in 0.3; on a 0-dim tensor (a loss) it now raises "
                         f"IndexError. `{name}.item()` if `{name}` holds one value; `{name}.detach()[0]` if it is "
                         "the first row", _fix_item, unsafe=True)
        if scalar:
            subscript = _number_chain(ancestors)
            if subscript is not None:
                return _Site("TM301", subscript, f"`[0]` of the one value of `{name}`: `{name}.item()`", _fix_item)
            if self._accumulated(ancestors, scope):
                return _Site("TM302", attr, f"`{name}.data` added to a 0.3 counter: `{name}.item()` keeps the "
                                            "counter a Python number", _fix_data_item)
        reduction = self._number_reduction(ancestors, scope)
        if reduction is not None:
            method = reduction.func.attr.value
            return _Site("TM302", reduction, f"`.data.{method}()` was a Python number in 0.3 and is a 0-dim tensor "
                                             f"now: `.{method}().item()`", _fix_reduction_item)
        if (self.inside_update(ancestors, scope) or _written(ancestors) or _swaps_storage(ancestors)
                or self._mutating_argument(ancestors, scope) or self._mutated_alias(ancestors, scope)):
            return None
        if self._plain_read(receiver, ancestors):
            return _Site("TM303", attr, f"`{name}.data` read only for a value without a graph: `{name}`",
                         _fix_plain)
        return _Site("TM303", attr, f"`{name}.data` read: `{name}.detach()` (same values; autograd still sees "
                                    "in-place changes)", _fix_detach)

    def converted_accumulator(self, name: str, scope: _Scope) -> bool:
        """``total = 0`` ... ``total += loss.data``: a 0.3 1-element counter that becomes a Python number."""
        key = (id(scope), name)
        if key in self._accumulators:
            return self._accumulators[key]
        self._accumulators[key] = False  # while computing
        bindings = scope.bindings.get(name, ())
        uses = scope.uses.get(name, set())
        found_data = False
        ok = bool(bindings) and not (uses - {"[0]"})
        for kind, value in bindings if ok else ():
            if kind == "assign" and self.kind(value, scope) == NUMBER:
                continue
            if kind != "aug" or not isinstance(value.operator, (cst.AddAssign, cst.SubtractAssign,
                                                                cst.MultiplyAssign, cst.DivideAssign)):
                ok = False
                break
            terms = self._counter_terms(value.value, scope)
            if terms is None:
                ok = False
                break
            found_data = found_data or terms
        self._accumulators[key] = ok and found_data
        return self._accumulators[key]

    def _counter_terms(self, expr: cst.CSTNode, scope: _Scope) -> Optional[bool]:
        """Arithmetic of numbers and ``scalar.data`` terms: whether it has such a term (``None``: not that)."""
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC):
            left, right = self._counter_terms(expr.left, scope), self._counter_terms(expr.right, scope)
            return None if left is None or right is None else left or right
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            return True if self.kind(expr.value, scope) == SCALAR else None
        return False if self.kind(expr, scope) == NUMBER else None

    def _accumulated(self, ancestors: List[cst.CSTNode], scope: _Scope) -> bool:
        index = len(ancestors) - 1
        while isinstance(ancestors[index - 1], cst.BinaryOperation) \
                and isinstance(ancestors[index - 1].operator, ARITHMETIC):
            index -= 1
        statement = ancestors[index - 1]
        return (isinstance(statement, cst.AugAssign) and statement.value is ancestors[index]
                and isinstance(statement.target, cst.Name)
                and self.converted_accumulator(statement.target.value, scope))

    def _number_reduction(self, ancestors: List[cst.CSTNode], scope: _Scope) -> Optional[cst.Call]:
        """``x.data.sum()`` (a Python number in 0.3) where the result is only used as a number."""
        if len(ancestors) < 4:
            return None
        attr, method, call = ancestors[-1], ancestors[-2], ancestors[-3]
        if not (isinstance(method, cst.Attribute) and method.value is attr and isinstance(call, cst.Call)
                and call.func is method and _full_reduction(call)):
            return None
        return call if self.number_context(ancestors[:-2], scope) else None

    def number_context(self, ancestors: List[cst.CSTNode], scope: _Scope) -> bool:
        """The value ``ancestors[-1]`` ends up as a number (printed, compared, stored in a name used as one)."""
        index = len(ancestors) - 1
        while isinstance(ancestors[index - 1], (cst.BinaryOperation, cst.UnaryOperation)):
            index -= 1
        consumer, value = ancestors[index - 1], ancestors[index]
        if isinstance(consumer, (cst.Arg, cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression)):
            return not (isinstance(consumer, cst.Arg) and consumer.keyword is not None
                        and consumer.keyword.value == "out")
        if isinstance(consumer, cst.Assign) and len(consumer.targets) == 1:
            target = consumer.targets[0].target
        elif isinstance(consumer, cst.AugAssign) and consumer.value is value:
            target = consumer.target
        else:
            return False
        if not isinstance(target, cst.Name):
            return False
        return not scope.uses.get(target.value)  # printed, formatted, compared: never `n.item()`, `n[0]`

    def _mutated_alias(self, ancestors: List[cst.CSTNode], scope: _Scope) -> bool:
        """``h = x.data`` and ``h`` later changed in place (or stored where it cannot be followed)."""
        statement = ancestors[-2]
        if not (isinstance(statement, cst.Assign) and statement.value is ancestors[-1]):
            return False
        for target in statement.targets:
            if not isinstance(target.target, cst.Name):
                return True
            uses = scope.uses.get(target.target.value, set())
            if "[]=" in uses or any(_inplace_name(use) for use in uses):
                return True
        return False

    def _mutating_argument(self, ancestors: List[cst.CSTNode], scope: _Scope) -> bool:
        """``.data`` handed to a function of this file that changes that argument in place."""
        arg, call = ancestors[-2], ancestors[-3] if len(ancestors) > 2 else None
        if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return False
        _, bindings = self.lookup(call.func.value, scope)
        if not bindings or len(bindings) != 1 or bindings[0][0] != "def":
            return False
        fdef = bindings[0][1]
        params = list(fdef.params.params)
        if arg.keyword is not None:
            names = [arg.keyword.value]
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            names = [params[index].name.value] if index < len(params) else []
        return any(self._mutates(fdef, name) for name in names)

    def _mutates(self, fdef: cst.FunctionDef, name: str) -> bool:
        key = (id(fdef), name)
        if key not in self._mutated:
            self._mutated[key] = any(_writes_name(node, name) for node in walk(fdef.body))
        return self._mutated[key]

    def _plain_read(self, receiver: cst.CSTNode, ancestors: List[cst.CSTNode]) -> bool:
        """The value only feeds something without a graph (``.item()``, ``.size()``, a comparison, indices)."""
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad" and not self.create_graph:
            return True  # a .grad tensor has no graph unless backward(create_graph=True)
        if _comparison(receiver):
            return True
        arg, call = ancestors[-2], ancestors[-3] if len(ancestors) > 2 else None
        if isinstance(arg, cst.Arg) and isinstance(call, cst.Call):
            qualified = self.ctx.qualname(call.func) or ""
            if qualified.startswith("torch.nn.init."):
                return True  # init functions run under no_grad themselves
        index = len(ancestors) - 1
        while index >= 1:
            current, parent = ancestors[index], ancestors[index - 1]
            if isinstance(parent, cst.Attribute) and parent.value is current:
                name = parent.attr.value
                call = ancestors[index - 2] if index >= 2 else None
                if not (isinstance(call, cst.Call) and call.func is parent):
                    return name in METADATA_ATTRIBUTES
                if name in NO_GRAD_RESULTS or (name == "type" and not call.args):
                    return True
                if name in INDEX_RESULTS:
                    outer = ancestors[index - 3] if index >= 3 else None
                    return isinstance(outer, cst.Subscript) and outer.value is call and _index_value(outer) == 1
                if name in ("numpy", "data", "detach") or name.endswith("_"):
                    return False
                index -= 2
                continue
            if isinstance(parent, cst.Arg):
                call = ancestors[index - 2] if index >= 2 else None
                if not isinstance(call, cst.Call):
                    return False
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in COMPARISONS:
                    return True
                qualified = self.ctx.qualname(call.func) or ""
                return qualified.startswith("torch.") and qualified.rpartition(".")[2] in COMPARISONS
            if isinstance(parent, cst.ComparisonTarget):
                return isinstance(parent.operator, NUMERIC_COMPARISONS)
            if isinstance(parent, cst.Comparison):
                return all(isinstance(t.operator, NUMERIC_COMPARISONS) for t in parent.comparisons)
            if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)) or (
                    isinstance(parent, cst.Subscript) and parent.value is current):
                index -= 1
                continue
            return False
        return False


# -- small predicates ---------------------------------------------------------------------------
def _vetoed(receiver: cst.CSTNode) -> bool:
    """The name the receiver is built from says it is not a tensor (``dataset``, ``args``, ``self``)."""
    while isinstance(receiver, (cst.Subscript, cst.Call, cst.Attribute)):
        receiver = receiver.func if isinstance(receiver, cst.Call) else receiver.value
    return isinstance(receiver, cst.Name) and bool(NON_TENSOR_NAME.match(receiver.value))


def _reduces(call: cst.Call, positional_limit: int) -> bool:
    """A loss call/constructor that certainly reduces to one value (no ``reduce=False``/``reduction='none'``)."""
    if len(_positional(call)) > positional_limit or any(a.star for a in call.args):
        return False
    keywords = _keywords(call)
    reduce = keywords.get("reduce")
    if reduce is not None and not (isinstance(reduce.value, cst.Name) and reduce.value.value in ("True", "None")):
        return False
    reduction = keywords.get("reduction")
    if reduction is not None:
        return isinstance(reduction.value, cst.SimpleString) and reduction.value.evaluated_value in ("mean", "sum",
                                                                                                        "batchmean")
    return True


def _creates_leaf(value: Optional[cst.CSTNode]) -> bool:
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("Parameter", "requires_grad_"):
        return True
    if isinstance(func, cst.Name) and func.value == "Parameter":
        return True
    requires = _keywords(value).get("requires_grad")
    return requires is not None and isinstance(requires.value, cst.Name) and requires.value.value == "True"


def _inplace_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_VALUE_UPDATES


def _inplace_receiver(call: cst.Call) -> Optional[cst.CSTNode]:
    """``p.data`` for ``p.data.mul_(m).add_(x)``; ``None`` if the call is not an in-place method."""
    node: cst.CSTNode = call
    found = False
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _inplace_name(node.func.attr.value):
        node, found = node.func.value, True
    return node if found else None


def _tensor_context(subscript: cst.Subscript, grand: Optional[cst.CSTNode]) -> bool:
    """``x.data[0].numpy()``, ``x.data[0][1]``: the first row is used as a tensor."""
    return (isinstance(grand, cst.Attribute) and grand.value is subscript) or (
        isinstance(grand, cst.Subscript) and grand.value is subscript)


def _written(ancestors: Sequence[cst.CSTNode]) -> bool:
    """``ancestors[-1]`` (``x.data`` or ``x.data[i]``) is assigned to or changed in place (not a read)."""
    node, parent = ancestors[-1], ancestors[-2]
    if isinstance(parent, cst.Subscript) and parent.value is node:
        return _written(ancestors[:-1])
    if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.AugAssign) and parent.target is node):
        return True
    if isinstance(parent, cst.Del):
        return True
    if isinstance(parent, cst.Attribute) and parent.value is node and _inplace_name(parent.attr.value):
        return True
    return isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "out"


def _swaps_storage(ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside ``a.data = <value>``: the statement replaces a tensor's storage; left as written."""
    statement = next((n for n in reversed(ancestors) if isinstance(n, cst.Assign)), None)
    return statement is not None and any(
        isinstance(t.target, cst.Attribute) and t.target.attr.value == "data" for t in statement.targets)


def _writes_name(node: cst.CSTNode, name: str) -> bool:
    """``name.add_(...)``, ``name[i] = v``, ``name += v``, ``name.data = v`` inside a function body."""
    def is_name(n):
        return isinstance(n, cst.Name) and n.value == name
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _inplace_name(node.func.attr.value):
        receiver = node.func.value
        while isinstance(receiver, (cst.Subscript, cst.Attribute)) and not is_name(receiver):
            receiver = receiver.value
        return is_name(receiver)
    if isinstance(node, cst.AugAssign):
        return is_name(node.target) or (isinstance(node.target, (cst.Subscript, cst.Attribute))
                                        and is_name(node.target.value))
    if isinstance(node, cst.AssignTarget):
        return isinstance(node.target, (cst.Subscript, cst.Attribute)) and is_name(node.target.value)
    return False


def _comparison(node: cst.CSTNode) -> bool:
    """``a == b`` or ``a.eq(b)``: a result that never requires grad."""
    if isinstance(node, cst.Comparison):
        return all(isinstance(t.operator, NUMERIC_COMPARISONS) for t in node.comparisons)
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in COMPARISONS


def _number_chain(ancestors: List[cst.CSTNode]) -> Optional[cst.Subscript]:
    """``loss.data.cpu().numpy()[0]``: the ``[0]`` subscript reached through value-keeping calls."""
    index, steps = len(ancestors) - 1, 0
    while index >= 2:
        parent, call = ancestors[index - 1], ancestors[index - 2]
        if not (isinstance(parent, cst.Attribute) and parent.attr.value in TO_NUMBER_CHAIN
                and isinstance(call, cst.Call) and call.func is parent and not call.args):
            break
        index, steps = index - 2, steps + 1
    if steps == 0 or index < 1:
        return None
    subscript = ancestors[index - 1]
    grand = ancestors[index - 2] if index >= 2 else None
    if isinstance(subscript, cst.Subscript) and subscript.value is ancestors[index] \
            and _index_value(subscript) == 0 and not _tensor_context(subscript, grand):
        return subscript
    return None


# -- fixes (each builds from the updated node it receives) ------------------------------------------
def _method_call(receiver: cst.BaseExpression, name: str, args: Sequence[cst.Arg] = (), like=None):
    call = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=list(args))
    return call.with_changes(lpar=like.lpar, rpar=like.rpar) if like is not None else call


def _unwrap_data(node: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` for ``x.data`` (keeping parentheses around the attribute), else ``node``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        value = node.value
        return value.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar and not value.lpar else value
    return node


def _data_receiver(node: cst.BaseExpression) -> cst.BaseExpression:
    """``loss`` for ``loss.data``, ``loss.data.cpu().numpy()`` (the value-keeping chain)."""
    while (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
           and node.func.attr.value in TO_NUMBER_CHAIN and not node.args):
        node = node.func.value
    return _unwrap_data(node)


def _fix_item(subscript: cst.Subscript) -> cst.CSTNode:
    return _method_call(_data_receiver(subscript.value), "item", like=subscript)


def _fix_data_item(attr: cst.Attribute) -> cst.CSTNode:
    return _method_call(attr.value, "item", like=attr) if attr.attr.value == "data" else attr


def _fix_reduction_item(call: cst.Call) -> cst.CSTNode:
    func = call.func
    inner = cst.Call(func=func.with_changes(value=_unwrap_data(func.value)), args=call.args)
    return _method_call(inner, "item", like=call)


def _fix_plain(attr: cst.Attribute) -> cst.CSTNode:
    return _unwrap_data(attr)


def _fix_detach(attr: cst.Attribute) -> cst.CSTNode:
    return _method_call(attr.value, "detach", like=attr) if attr.attr.value == "data" else attr


class _StripData(cst.CSTTransformer):
    """Inside ``torch.no_grad()``: ``p.data`` -> ``p``, and current signatures for the in-place calls."""

    def __init__(self, keep: Set[str]):
        super().__init__()
        self.keep = keep

    def leave_Attribute(self, original_node, updated_node):
        if updated_node.attr.value == "data" and _code(updated_node.value) not in self.keep:
            return _unwrap_data(updated_node)
        return updated_node

    def leave_Call(self, original_node, updated_node):
        return modern_signature(updated_node, tensor_receiver=True) or updated_node


# -- the rules -------------------------------------------------------------------------------
class _DataSiteRule(Rule):
    """Reports the ``.data`` sites the shared analysis assigns to this rule."""

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        site = self.ctx.analysis(_Analysis).site(node, self.ctx.ancestors)
        if site is not None and site.code == self.code:
            self.report(site.node, site.message, site.fix, unsafe=site.unsafe)


ACCURACY = ("import torch\n\n\ndef accuracy(output, target, topk=(1,)):\n"
            "    _, pred = output.topk(max(topk), 1, True, True)\n"
            "    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))\n    res = []\n    for k in topk:\n"
            "        correct_k = correct[:k].view(-1).float().sum(0)\n"
            "        res.append(correct_k.mul_(100.0 / target.size(0)))\n    return res\n\n\n"
            "prec1, prec5 = accuracy(output.data, target, topk=(1, 5))\ntop1.update(prec1[0], n)\n")


class DataIndexZero(_DataSiteRule):
    """``loss.data[0]`` was how 0.3 read a loss: a 1-element 1-dim tensor's only element, a Python
    number. Since 0.4 a loss is 0-dim and ``[0]`` raises IndexError; ``loss.item()`` gives the same
    number. The rule proves the value has one element (a loss call, a criterion built from
    ``nn.*Loss()``, a full reduction, arithmetic of those, a name ``.backward()`` is called on
    without a gradient, a function of the file that returns one). Otherwise ``x.data[0]`` may be a
    first element or a first row: it is reported, with ``x.item()`` as an unsafe fix (``.item()``
    raises on more than one element rather than guessing); ``x.data[0].numpy()``-style row reads
    are left to TM303. The same holds without ``.data`` for a 0.3 *tensor* (not a Variable:
    there ``x[0]`` was a 1-element Variable) that is provably one value, e.g. the ImageNet
    ``accuracy`` helper's ``correct[:k].view(-1).float().sum(0)``, followed through ``mul_``,
    arithmetic, the list a function returns and tuple unpacking: ``prec1[0]`` becomes
    ``prec1.item()``."""

    code = "TM301"
    name = "data-index-zero"
    summary = "`loss.data[0]` (IndexError on a 0-dim loss) becomes `loss.item()` where the value is provably one number"
    triggers = (".data", "sum(", "mean(", "prod(")
    changes = (
        Example("import torch.nn.functional as F\n\nloss = F.nll_loss(output, target)\n"
                "print('loss {:.6f}'.format(loss.data[0]))\n",
                "import torch.nn.functional as F\n\nloss = F.nll_loss(output, target)\n"
                "print('loss {:.6f}'.format(loss.item()))\n"),
        Example("import torch.nn as nn\ncriterion = nn.CrossEntropyLoss().cuda()\n\n\n"
                "def train(model, criterion, losses):\n    loss = criterion(model(x), y)\n"
                "    losses.update(loss.data[0], x.size(0))\n",
                "import torch.nn as nn\ncriterion = nn.CrossEntropyLoss().cuda()\n\n\n"
                "def train(model, criterion, losses):\n    loss = criterion(model(x), y)\n"
                "    losses.update(loss.item(), x.size(0))\n"),
        Example("def step(model, optimizer):\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
                "    return float(loss.data[0])\n",
                "def step(model, optimizer):\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
                "    return float(loss.item())\n"),
        Example("import torch\ncriterion = torch.nn.MSELoss()\nerr = criterion(a, b) + criterion(c, d)\n"
                "m = torch.sum(x ** 2)\nprint(err.data[0], m.data.cpu().numpy()[0], (-0.5 * m).cpu().data[0])\n",
                "import torch\ncriterion = torch.nn.MSELoss()\nerr = criterion(a, b) + criterion(c, d)\n"
                "m = torch.sum(x ** 2)\nprint(err.item(), m.item(), (-0.5 * m).cpu().item())\n"),
        Example("import torch\n\nh = model(x)\nprint(h.data[0])\n", "import torch\n\nh = model(x)\nprint(h.item())\n",
                unsafe=True),
        Example(ACCURACY, ACCURACY.replace("prec1[0]", "prec1.item()")),
        Example("import torch\n\nacc = torch.sum((pred == y).data.view(-1), dim=0).float() / 64\nprint(acc[0])\n",
                "import torch\n\nacc = torch.sum((pred == y).data.view(-1), dim=0).float() / 64\nprint(acc.item())\n"),
    )
    keeps = (
        ACCURACY.replace("sum(0)", "sum(0, keepdim=True)"),  # 1-dim: `[0]` still works
        ACCURACY.replace("prec1, prec5 =", "prec1 ="),  # `prec1[0]`: the list's first element
        "import torch\nx = torch.randn(5)\ntotal = x.view(-1).sum(0)\nprint(total[0])\n",  # a graph in 0.3
        "out = model(x)\nimg = out.data[0].numpy()\n",  # the first image: a row read (TM303)
        "batch = dataset.data[0]\n",  # a dataset's `.data`, not a tensor's
        "import torch.nn.functional as F\nlosses = F.nll_loss(out, t, reduce=False)\nfirst = losses.data[0][1]\n",
        "value = loss.item()\n",
    )


    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``prec1[0]`` of a 0.3 tensor that holds one value (no ``.data``: those are the sites' work)."""
        value = node.value
        if _index_value(node) != 0 or (isinstance(value, cst.Attribute) and value.attr.value == "data"):
            return
        ancestors = self.ctx.ancestors
        if _tensor_context(node, ancestors[-2]) or _written(ancestors):
            return
        analysis = self.ctx.analysis(_Analysis)
        scope = analysis.scope_for(ancestors)
        if analysis.kind(value, scope) == SCALAR and analysis.graphless(value, scope):
            name = _code(value)
            self.report(node, f"`{name}` holds one value (a 1-dim tensor in 0.3, 0-dim now): `{name}[0]` raises "
                              f"IndexError; `{name}.item()` is the Python number it gave", _fix_item)


class LegacyPythonNumbers(_DataSiteRule):
    """In 0.3 a full reduction of a tensor (``x.data.sum()``, ``pred.eq(target).sum()``) returned a
    Python number, and ``total += loss.data`` made a 1-element counter read back with
    ``total[0]``. Now these are 0-dim tensors: counters silently become tensors (``total[0]``
    raises, ``'{}'.format(correct)`` and JSON dumps change, CUDA tensors pile up). ``.item()``
    keeps them Python numbers, as they were. Only where the value is used as a number (printed,
    compared, counted); a name that is later used as a tensor (``n.item()``, ``n[0]``) is left to
    TM303."""

    code = "TM302"
    name = "legacy-python-numbers"
    summary = ("0.3 reductions and counters that were Python numbers (`x.data.sum()`, `correct += "
               "pred.eq(t).sum()`, `total += loss.data`) stay numbers via `.item()`")
    triggers = (".data", ").sum()")
    changes = (
        Example("correct = 0\nfor x, t in loader:\n    pred = model(x).data.max(1)[1]\n"
                "    correct += pred.eq(t).cpu().sum()\nprint(100. * correct / n)\n",
                "correct = 0\nfor x, t in loader:\n    pred = model(x).data.max(1)[1]\n"
                "    correct += pred.eq(t).cpu().sum().item()\nprint(100. * correct / n)\n"),
        Example("import torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\n\n\ndef evaluate(data):\n"
                "    total_loss = 0\n    for x, y in data:\n"
                "        total_loss += len(x) * criterion(model(x), y).data\n    return total_loss[0] / len(data)\n",
                "import torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\n\n\ndef evaluate(data):\n"
                "    total_loss = 0\n    for x, y in data:\n"
                "        total_loss += len(x) * criterion(model(x), y).item()\n    return total_loss / len(data)\n"),
        Example("import torch\n\noutput = netD(x)\nD_x = output.data.mean()\nprint('D(x): %.4f' % D_x)\n",
                "import torch\n\noutput = netD(x)\nD_x = output.mean().item()\nprint('D(x): %.4f' % D_x)\n"),
    )
    keeps = (
        "param_norm = p.grad.data.norm(2)\ntotal_norm += param_norm.item() ** 2\n",  # 0.4 style: used as a tensor
        "correct = 0\ncorrect += pred.eq(t).sum()\nprint(correct.item())\n",
        "total += loss\n",  # a graph kept alive: a hazard, not a 0.3 number
        "n = mask.sum(1)\n",
    )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """``correct += pred.eq(target).cpu().sum()``: a comparison count, a number in 0.3."""
        value = node.value
        if not (isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name)
                and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in ("sum", "mean") and _full_reduction(value)):
            return
        receiver = value.func.value
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            return  # `x.data.sum()`: the `.data` site reports it
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and (
                receiver.func.attr.value in MOVES or receiver.func.attr.value in ("long", "int", "data")) \
                or isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.func.value if isinstance(receiver, cst.Call) else receiver.value
        if not _comparison(receiver):
            return
        analysis = self.ctx.analysis(_Analysis)
        scope = analysis.scope_for(self.ctx.ancestors)
        uses = scope.uses.get(node.target.value, set())
        if not uses:
            self.report(value, "a comparison count was a Python number in 0.3 and is a 0-dim tensor now: `.item()`",
                        lambda call: _method_call(call, "item"))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``total_loss[0]`` of a counter that TM302 turns into a Python number."""
        if not (isinstance(node.value, cst.Name) and _index_value(node) == 0):
            return
        analysis = self.ctx.analysis(_Analysis)
        if not analysis.has_data:
            return
        scope = analysis.scope_for(self.ctx.ancestors)
        if node.value.value in scope.bindings and analysis.converted_accumulator(node.value.value, scope):
            self.report(node, f"`{node.value.value}` is a Python number once its `.data` terms are `.item()`: "
                              f"`{node.value.value}[0]` becomes `{node.value.value}`",
                        lambda sub: sub.value.with_changes(lpar=sub.lpar, rpar=sub.rpar) if sub.lpar else sub.value)


class DataRead(_DataSiteRule):
    """``x.data`` gave 0.3 code the tensor inside a Variable. Today it returns a tensor that shares
    storage but is invisible to autograd: an in-place change through it silently corrupts
    gradients. ``x.detach()`` gives the same values and lets autograd detect such changes. Where
    the value only feeds something without a graph (``.item()``, ``.size()``, comparisons,
    ``max(1)[1]`` indices, ``new(...)``, ``nn.init`` calls, a ``.grad``), ``x`` alone is exact.
    Left alone: assignments to ``.data`` (storage swaps), in-place calls on ``.data`` of
    non-parameters (e.g. masking inside ``forward``), aliases (``h = x.data``) or arguments of
    functions of this file that are then changed in place (autograd would now see the change:
    not the same behaviour), and ``.data`` of datasets, namespaces, numpy arrays and modules."""

    code = "TM303"
    name = "data-read"
    summary = "`x.data` reads become `x.detach()` (or plain `x` where the result cannot carry a graph)"
    triggers = (".data",)
    changes = (
        Example("out = model(x)\nimgs = out.data.cpu().numpy()\n",
                "out = model(x)\nimgs = out.detach().cpu().numpy()\n"),
        Example("import torch\n\n\ndef test(model, data, target):\n    output = model(data)\n"
                "    pred = output.data.max(1, keepdim=True)[1]\n    hits = pred.eq(target.data.view_as(pred))\n",
                "import torch\n\n\ndef test(model, data, target):\n    output = model(data)\n"
                "    pred = output.max(1, keepdim=True)[1]\n    hits = pred.eq(target.view_as(pred))\n"),
        Example("import torch.nn as nn\n\n\ndef init(m):\n    nn.init.normal_(m.weight.data, 0.0, 0.02)\n"
                "    grad = m.weight.grad.data\n",
                "import torch.nn as nn\n\n\ndef init(m):\n    nn.init.normal_(m.weight, 0.0, 0.02)\n"
                "    grad = m.weight.grad\n"),
    )
    keeps = (
        "a.data = b.data\nh.data = h.data.cuda()\n",  # storage swaps: the whole statement stays
        "scores = attn(h)\nscores.data.masked_fill_(mask, -float('inf'))\n",  # in-place on a non-parameter
        "corpus = data.Corpus(args.data)\nx = train_set.data\ny = self.data\n",
        "import torch.utils.data\nloader = torch.utils.data.DataLoader(ds)\n",
        "def fill(t):\n    t.zero_()\n\n\nfill(h.data)\n",  # a function of this file that changes it in place
        "import torch\nx = torch.randn(3)\nh = x.data\nh.zero_()\nself.buf = x.data\n",  # aliases changed later
        "from torch import Tensor\ngetter = Tensor.data.__get__\nsize = Tensor.data\n",  # the class's descriptor
        "import torch\nimport compiler.lowering as L\nview = L.permute(node, dims).data\n",  # a module's function
    )


class DataUpdate(Rule):
    """Manual updates through ``.data`` (``p.data.add_(-lr, p.grad.data)``, ``w.data -= lr *
    w.grad.data``, ``p.grad.data.zero_()``, ``p.data.clamp_(-c, c)``, ``m.weight.data.normal_()``)
    hid the change from autograd. The current idiom does it on the tensor itself under
    ``torch.no_grad()``: the same values, no graph recorded, and autograd can still report a
    parameter changed while a graph needs it. Only updates of parameters and their gradients
    (``.weight``/``.bias``, loop variables over ``.parameters()``/``group['params']``, names
    whose ``.grad`` is read, ``nn.Parameter``/``requires_grad=True`` leaves); one ``with`` wraps a
    run of consecutive update statements (or a loop/``if`` made only of them), with the current
    argument order (``p.add_(p.grad, alpha=-lr)``). Not: ``x.data = y`` (a storage swap)."""

    code = "TM304"
    name = "data-update"
    summary = "in-place updates through `p.data` become `with torch.no_grad():` updates of `p` with current signatures"
    triggers = (".data",)
    changes = (
        Example("for p in model.parameters():\n    p.data.add_(-lr, p.grad.data)\n",
                "import torch\n\nwith torch.no_grad():\n    for p in model.parameters():\n"
                "        p.add_(p.grad, alpha=-lr)\n"),
        Example("import torch\nw = torch.randn(3, requires_grad=True)\n\n\ndef step(lr):\n"
                "    # gradient descent\n    w.data -= lr * w.grad.data\n\n    # reset\n    w.grad.data.zero_()\n"
                "    print(w)\n",
                "import torch\nw = torch.randn(3, requires_grad=True)\n\n\ndef step(lr):\n"
                "    # gradient descent\n    with torch.no_grad():\n        w -= lr * w.grad\n\n        # reset\n"
                "        w.grad.zero_()\n    print(w)\n"),
        Example("import torch\n\n\ndef weights_init(m):\n    classname = m.__class__.__name__\n"
                "    if classname.find('Conv') != -1:\n        m.weight.data.normal_(0.0, 0.02)\n"
                "    elif classname.find('BatchNorm') != -1:\n        m.weight.data.normal_(1.0, 0.02)\n"
                "        m.bias.data.fill_(0)\n",
                "import torch\n\n\ndef weights_init(m):\n    classname = m.__class__.__name__\n"
                "    with torch.no_grad():\n        if classname.find('Conv') != -1:\n"
                "            m.weight.normal_(0.0, 0.02)\n        elif classname.find('BatchNorm') != -1:\n"
                "            m.weight.normal_(1.0, 0.02)\n            m.bias.fill_(0)\n"),
    )
    keeps = (
        "import torch\nh.data = h.data.cuda()\np.data = torch.zeros(3)\n",  # storage swaps
        "scores.data.masked_fill_(mask, -1e9)\n",  # not a parameter: inside forward, a graph hack
        "import torch\n\nwith torch.no_grad():\n    for p in model.parameters():\n        p.add_(p.grad, alpha=-lr)\n",
    )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement(node)

    def visit_For(self, node: cst.For) -> None:
        self._statement(node)

    def visit_If(self, node: cst.If) -> None:
        self._statement(node)

    def _statement(self, node: cst.CSTNode) -> None:
        analysis = self.ctx.analysis(_Analysis)
        if not analysis.has_data:
            return
        ancestors = self.ctx.ancestors
        scope = analysis.scope_for(ancestors)
        if not analysis.is_update(node, scope) or analysis.inside_update(ancestors[:-1], scope):
            return
        block = ancestors[-2]
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return  # an `elif` branch: its `if` is the statement
        keep = {_code(a.value) for a in walk(node) if isinstance(a, cst.Attribute) and a.attr.value == "data"
                and not analysis.tensor_evidence(a.value, scope)}
        if analysis.in_no_grad(ancestors):
            fix = lambda updated: updated.visit(_StripData(keep))  # noqa: E731
        else:
            fix = self._grouped_fix(analysis, analysis.run_of(node, block, scope), node, keep)
        self.report(node, "in-place update through `.data`: update the tensor itself under `torch.no_grad()`", fix)

    def _grouped_fix(self, analysis: _Analysis, run: List[cst.CSTNode], node: cst.CSTNode, keep: Set[str]):
        """Statements before the last of a run move into the ``with`` that the last one builds."""
        stash = analysis.stashes.setdefault(id(run[0]), [])
        last = node is run[-1]

        def fix(updated):
            stripped = updated.visit(_StripData(keep))
            if not last:
                stash.append(stripped)
                return cst.RemoveFromParent()
            statements = [*stash, stripped]
            stash.clear()
            return self._no_grad_block(statements)
        return fix

    def _no_grad_block(self, statements: List[cst.CSTNode]) -> cst.With:
        spelled = self.ctx.imports.local_name("torch.no_grad")
        if spelled is None:
            self.ctx.add_import("torch")
            spelled = "torch.no_grad"
        first = statements[0]
        return cst.With(
            items=[cst.WithItem(item=cst.Call(func=cst.parse_expression(spelled)))],
            body=cst.IndentedBlock(body=[first.with_changes(leading_lines=()), *statements[1:]]),
            leading_lines=first.leading_lines,
        )


RULES = [DataIndexZero, LegacyPythonNumbers, DataRead, DataUpdate]
