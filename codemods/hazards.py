"""TM6xx: autograd hazards that ``torch-migrate check`` reports.

Removing ``Variable`` is mechanical; what breaks migrated training runs are the
autograd mistakes around it (the seed field notes in ``shared/SEEDS.md``):
state carried into the next iteration with its graph, in-place writes to
leaves, ``list(tensor)`` in a parameter list, ``retain_graph=True`` patches,
anomaly detection left on, ``.grad`` of non-leaves, ``requires_grad`` on
tensors that nothing optimises.

Every rule is a single-file static analysis built to stay silent on correct
code: a value is only treated as a tensor, a leaf, a parameter or a module
when the file shows it (``_File`` collects bindings per scope, ``_Flow``
follows each scope's statements in order). When the file does not tell, the
rule says nothing. Fixes change behaviour, so every fix is unsafe.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from codemods.base import Example, FileContext, Rule
from codemods.names import dotted
from codemods.walk import children
from codemods.torchapi import AUTOGRAD_CALLS, DERIVING_METHODS, GRAD_OFF, GRAD_READERS, GRAD_SWITCH, IDENTITY_METHODS, INPLACE_METHODS, MODULE_SELF_METHODS, NOT_MATH, OPTIMIZERS, PARAMETER, RNN_LAYERS, VARIABLE

# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------
# torch.<name>(...) builds a new leaf tensor (requires grad only with ``requires_grad=True``).
FACTORIES = frozenset({
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
    "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
    "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor",
})
# torch.nn layers and the attributes that are their parameters.
LAYER_PARAMS: Dict[str, Tuple[str, ...]] = {
    **{name: ("weight", "bias") for name in (
        "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm")},
    "Embedding": ("weight",), "EmbeddingBag": ("weight",), "PReLU": ("weight",),
    **{name: ("weight_ih", "weight_hh", "bias_ih", "bias_hh") for name in ("RNNCell", "LSTMCell", "GRUCell")},
}
PARAM_LAYERS = frozenset({*LAYER_PARAMS, *RNN_LAYERS, "MultiheadAttention", "Transformer", "TransformerEncoder",
                          "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer"})
# Methods whose result never requires grad.
NO_GRAD_METHODS = frozenset({"detach", "long", "int", "short", "byte", "char", "bool", "argmax", "argmin", "eq",
                             "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "nonzero", "new", "new_zeros",
                             "new_ones", "new_empty", "new_full", "new_tensor"})
# Calls that never carry a graph forward (values, sizes, printing).
PLAIN_BUILTINS = frozenset({"print", "len", "int", "float", "str", "repr", "bool", "isinstance", "type", "format",
                            "id", "hash", "range", "round", "abs", "min", "max", "sum"})
SCALAR_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "data_ptr", "element_size",
                            "nelement", "stride", "is_contiguous", "new_zeros", "new_ones", "new_empty", "new_full",
                            "new_tensor", "new", "zero_", "fill_"})
NOT_MODULE_CLASSES = ("torch.optim", "torch.utils", "torch.distributions", "torch.device", "torch.dtype",
                      "torch.Generator", "torch.Size", "torch.autograd", "torch.nn.Parameter",
                      "torch.nn.parameter", "argparse", "collections", "pathlib", "logging")
GRAD_ON = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})
DETECT_ANOMALY = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
SET_DETECT_ANOMALY = frozenset({"torch.autograd.set_detect_anomaly",
                                "torch.autograd.anomaly_mode.set_detect_anomaly"})
DEBUG_WORDS = ("debug", "anomal", "detect", "check", "verify")
# Calls that differentiate with respect to what they are given (inputs, not only parameters).
INPUT_GRADIENTS = ("torch.autograd.grad", "torch.autograd.functional", "torch.func")
# Calls that read or apply gradients of what they are given.
GRAD_CONSUMERS = ("torch.autograd", "torch.optim", "torch.func", "torch.distributed.autograd",
                  "torch.distributed.optim")

Scope = cst.CSTNode  # Module, FunctionDef, Lambda or ClassDef
Chain = Tuple[cst.CSTNode, ...]  # enclosing scopes, innermost first
Binding = Tuple[str, Optional[cst.CSTNode], cst.CSTNode]  # (kind, value, statement or target)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# Nodes with nothing under them for an analysis to find (or whose bodies run later).
_INERT = frozenset({cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Lambda,
                    cst.FunctionDef, cst.ClassDef})


# ---------------------------------------------------------------------------
# Small syntax helpers
# ---------------------------------------------------------------------------
def _literal(node: Optional[cst.CSTNode]) -> object:
    """``True``/``False``/``None`` for those names, a number for a number, else the sentinel ``...``."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _literal(node.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else ...
    return ...


def _kwarg(call: cst.Call, name: str, position: Optional[int] = None) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position]
    return None


def _method(node: cst.CSTNode) -> Optional[str]:
    """``m`` for a call ``x.m(...)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _last(name: Optional[str]) -> str:
    return (name or "").rpartition(".")[2]


def _camel(name: str) -> bool:
    """A class name (``Linear``, ``LSTM``): called, it constructs an object."""
    return name[:1].isupper()


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _path(node: cst.CSTNode) -> str:
    """The dotted module path an expression reaches: ``model.features`` for ``model.features[0]``."""
    parts: List[str] = []
    while True:
        if isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        elif isinstance(node, cst.Subscript):
            parts = []
            node = node.value
        elif isinstance(node, cst.Name):
            parts.append(node.value)
            return ".".join(reversed(parts))
        else:
            return ""


def _covers(paths: Iterable[str], path: str) -> bool:
    return any(p == path or path.startswith(p + ".") or p.startswith(path + ".") for p in paths)


def _target_names(target: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The Name / Attribute nodes a target binds (tuple targets unpacked)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)
    elif isinstance(target, (cst.Name, cst.Attribute)):
        yield target


_DEFERRED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})  # bodies that run later, if at all


def _expressions(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` that runs with it (not the bodies of nested functions, classes, lambdas)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in reversed(children(current)) if type(child) not in _DEFERRED)


def _statements(body: cst.CSTNode) -> List[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    return []


def _blocks(stmt: cst.CSTNode) -> List[cst.CSTNode]:
    """The blocks of a compound statement (bodies, else, handlers, finally), in order."""
    blocks: List[cst.CSTNode] = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if isinstance(part, cst.If):
            blocks.append(cst.IndentedBlock(body=[part]))
        elif isinstance(part, (cst.Else, cst.Finally)):
            blocks.append(part.body)
        elif isinstance(part, cst.BaseSuite):
            blocks.append(part)
    for handler in getattr(stmt, "handlers", ()):
        blocks.append(handler.body)
    return blocks


def _grad_mode(rule_qualname: Callable[[cst.CSTNode], Optional[str]], expr: cst.CSTNode) -> object:
    """``False`` for a context/decorator that turns grad off, ``True`` for one that turns it on, ``...`` for
    ``set_grad_enabled(<not a literal>)``, ``None`` for anything else."""
    call = expr.func if isinstance(expr, cst.Call) else expr
    qualified = rule_qualname(call)
    if qualified in GRAD_OFF:
        return False
    if qualified in GRAD_ON:
        return True
    if qualified in GRAD_SWITCH and isinstance(expr, cst.Call) and expr.args:
        value = _literal(expr.args[0].value)
        return value if isinstance(value, bool) else ...
    return None


# ---------------------------------------------------------------------------
# What the file says about its names (collected once, shared by every TM6xx rule)
# ---------------------------------------------------------------------------
class _File:
    """Bindings and uses per scope, classes, no-grad regions, frozen modules, backward calls."""

    def __init__(self, ctx: FileContext):
        self.module = module = ctx.module
        self.qualname = ctx.qualname
        self.parent: Dict[int, cst.CSTNode] = {}
        self._expressions: Dict[int, List[cst.CSTNode]] = {}
        self._runs_backward: Dict[int, bool] = {}
        self.param_names: Dict[int, Set[str]] = {}  # id(scope) -> ``_param_names`` of that scope
        self.function_of: Dict[int, Optional[cst.FunctionDef]] = {}
        self.chain_of: Dict[int, Chain] = {}  # id(scope node or statement) -> its chain
        self.binds: Dict[Tuple[int, str], List[Binding]] = {}
        self.bound: Dict[int, Set[str]] = {}
        self.scopes: Dict[int, Scope] = {}
        self._loads: List[Tuple[cst.Name, Chain]] = []
        self.uses: Dict[Tuple[int, str], List[Tuple[cst.Name, Chain]]] = {}
        self.functions: List[cst.FunctionDef] = []
        self.classes: Dict[str, cst.ClassDef] = {}
        self.class_of: Dict[int, cst.ClassDef] = {}  # id(method) -> class
        self.self_attrs: Dict[Tuple[str, str], List[Tuple[cst.CSTNode, cst.FunctionDef]]] = {}
        self.attr_stores: Dict[str, List[cst.CSTNode]] = {}  # attr -> assigned Attribute targets
        self.nograd_functions: Set[int] = set()  # id(FunctionDef) whose body runs without grad
        self.nograd_names: Set[str] = set()  # names referenced inside no-grad blocks
        self.nograd_nodes: Set[int] = set()  # statements inside with-no-grad blocks
        self.freeze_paths: Set[str] = set()
        self.class_freezes: Dict[str, Set[str]] = {}
        self.freeze_all = False
        self.backwards: List[Tuple[cst.Call, Chain]] = []
        self.input_gradients = False  # the file calls torch.autograd.grad / autograd.functional / torch.func
        self.loops: List[Tuple[cst.CSTNode, Chain]] = []
        self._stores: Set[int] = set()
        self.requires_grad_statements: List[Tuple[cst.CSTNode, str]] = []  # x.requires_grad_() / = True
        self.first_uses: Dict[Tuple[int, ...], Dict[str, bool]] = {}  # region -> name -> read before bound
        self.defines_typo = False  # the file has its own `require_grad` attribute, parameter or method
        self._freezes: List[Tuple[cst.CSTNode, Chain, Optional[cst.FunctionDef]]] = []
        self._walk(module, (module,), False, None)
        for tensor, chain, function in self._freezes:  # they need the parent links of the whole file
            self._freeze(tensor, chain, function)
        self._resolve_loads()
        self.module_classes = self._module_classes()
        self.backward_functions = {fn.name.value for fn in self.functions if self._has_backward(fn)}

    # -- collection ---------------------------------------------------------------
    def _bind(self, scope: Scope, name: str, kind: str, value: Optional[cst.CSTNode], where: cst.CSTNode) -> None:
        self.binds.setdefault((id(scope), name), []).append((kind, value, where))
        self.bound.setdefault(id(scope), set()).add(name)
        self.scopes[id(scope)] = scope

    def _target(self, target: cst.CSTNode, kind: str, value, chain: Chain, where: cst.CSTNode, function) -> None:
        if isinstance(target, cst.Name):
            self._stores.add(id(target))
            self._bind(chain[0], target.value, kind, value, where)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value, kind if kind in ("for", "comp", "with") else "unpack",
                             value, chain, where, function)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, "unpack", value, chain, where, function)
        elif isinstance(target, cst.Attribute):
            self.attr_stores.setdefault(target.attr.value, []).append(target)
            self.defines_typo |= target.attr.value in TYPOS and dotted(target.value) == "self"
            owner = self.class_of.get(id(function)) if function is not None else None
            name = dotted(target)
            if owner is not None and name and name.count(".") == 1 and name.startswith(_self_name(function) + "."):
                self.self_attrs.setdefault((owner.name.value, target.attr.value), []).append(
                    (value if kind == "value" else None, function))

    def _walk(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> None:
        """Record what ``node`` binds, reads and calls; ``chain``: its scopes; ``nograd``: inside no_grad."""
        kids = children(node)
        for kid in kids:
            self.parent[id(kid)] = node
        kind = type(node)
        handler = _WALKERS.get(kind)
        if handler is not None and handler(self, node, chain, nograd, function):
            return  # the handler walked what it needed
        if kind in _STATEMENTS:
            self.chain_of[id(node)] = chain
        for child in kids:
            if type(child) not in _LITERALS:
                self._walk(child, chain, nograd, function)

    def _walk_class(self, node: cst.ClassDef, chain: Chain, nograd: bool, function) -> bool:
        self._bind(chain[0], node.name.value, "class", node, node)
        self.classes.setdefault(node.name.value, node)
        for part in (*node.bases, *node.keywords, *node.decorators):
            self._walk(part, chain, nograd, function)
        self.chain_of[id(node)] = (node, *chain)
        self._walk(node.body, (node, *chain), nograd, function)
        return True

    def _walk_lambda(self, node: cst.Lambda, chain: Chain, nograd: bool, function) -> bool:
        inner = (node, *chain)
        self.chain_of[id(node)] = inner
        for param in _params(node.params):
            self._bind(node, param.name.value, "param", None, param)
        self._walk(node.body, inner, nograd, function)
        return True

    def _walk_import(self, node: Union[cst.Import, cst.ImportFrom], chain: Chain, nograd: bool, function) -> bool:
        for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
            local = alias.asname.name if alias.asname else alias.name
            while isinstance(local, cst.Attribute):
                local = local.value
            if isinstance(local, cst.Name):
                self._bind(chain[0], local.value, "import", None, node)
        return True

    def _walk_attribute(self, node: cst.Attribute, chain: Chain, nograd: bool, function) -> bool:
        if nograd:
            self.nograd_names.add(node.attr.value)
        self._walk(node.value, chain, nograd, function)
        return True

    def _walk_arg(self, node: cst.Arg, chain: Chain, nograd: bool, function) -> bool:
        self._walk(node.value, chain, nograd, function)
        return True

    def _walk_name(self, node: cst.Name, chain: Chain, nograd: bool, function) -> bool:
        if id(node) not in self._stores:
            self._loads.append((node, chain))
            if nograd:
                self.nograd_names.add(node.value)
        return True

    def _walk_assign(self, node: cst.Assign, chain: Chain, nograd: bool, function) -> bool:
        for target in node.targets:
            self._target(target.target, "value", node.value, chain, node, function)
        self._freeze_assign(node, chain, function)
        target = node.targets[0].target
        if (len(node.targets) == 1 and _literal(node.value) is True and isinstance(target, cst.Attribute)
                and target.attr.value == "requires_grad" and isinstance(target.value, cst.Name)):
            self.requires_grad_statements.append((node, target.value.value))
        return False

    def _walk_expr(self, node: cst.Expr, chain: Chain, nograd: bool, function) -> bool:
        if _method(node.value) == "requires_grad_" and isinstance(node.value.func.value, cst.Name):
            flag = _kwarg(node.value, "requires_grad", 0)
            if flag is None or _literal(flag.value) is True:
                self.requires_grad_statements.append((node, node.value.func.value.value))
        return False

    def _walk_binding(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> bool:
        """Annotated/augmented assignments, loops, comprehensions, walrus, with and except targets."""
        if isinstance(node, cst.AnnAssign) and node.value is not None:
            self._target(node.target, "value", node.value, chain, node, function)
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.target, cst.Name):
                self._loads.append((node.target, chain))
            self._target(node.target, "aug", node, chain, node, function)
        elif isinstance(node, cst.For):
            self._target(node.target, "for", node.iter, chain, node, function)
            self.loops.append((node, chain))
        elif isinstance(node, cst.While):
            self.loops.append((node, chain))
        elif isinstance(node, cst.CompFor):
            self._target(node.target, "comp", node.iter, chain, node, function)
        elif isinstance(node, cst.NamedExpr):
            self._target(node.target, "value", node.value, chain, node, function)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._target(node.asname.name, "with", node.item, chain, node, function)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            self._target(node.name.name, "with", None, chain, node, function)
        return False

    def _walk_with(self, node: cst.With, chain: Chain, nograd: bool, function) -> bool:
        self.chain_of[id(node)] = chain
        modes = [_grad_mode(self.qualname, item.item) for item in node.items]
        for item in node.items:
            self._walk(item, chain, nograd, function)
        inner = nograd
        if False in modes or ... in modes:
            inner = True  # (maybe) no grad: nothing assigned inside counts as carrying a graph
        elif True in modes:
            inner = False
        if inner:
            for stmt in _expressions(node.body):
                self.nograd_nodes.add(id(stmt))
        self._walk(node.body, chain, inner, function)
        return True

    def _walk_skip(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> bool:
        return True  # global / nonlocal

    def _function(self, node: cst.FunctionDef, chain: Chain, nograd: bool, function=None) -> bool:
        self._bind(chain[0], node.name.value, "def", node, node)
        self.functions.append(node)
        self.defines_typo |= node.name.value in TYPOS or any(p.name.value in TYPOS for p in _params(node.params))
        if isinstance(chain[0], cst.ClassDef):
            self.class_of[id(node)] = chain[0]
        off = nograd or any(_grad_mode(self.qualname, d.decorator) is False for d in node.decorators)
        if off:
            self.nograd_functions.add(id(node))
        for decorator in node.decorators:
            self._walk(decorator, chain, nograd, None)
        inner = (node, *chain)
        self.chain_of[id(node)] = inner
        for param in _params(node.params):
            self._bind(node, param.name.value, "param", None, param)
            if param.default is not None:
                self._walk(param.default, chain, nograd, None)
        self._walk(node.body, inner, off, node)
        return True

    def _call(self, node: cst.Call, chain: Chain, nograd: bool, function) -> bool:
        method = _method(node)
        if _is_backward(self.qualname, node):
            self.backwards.append((node, chain))
        if (self.qualname(node.func) or "").startswith(INPUT_GRADIENTS):
            self.input_gradients = True
        if method == "requires_grad_":
            flag = _kwarg(node, "requires_grad", 0)
            if flag is not None and _literal(flag.value) is not True:
                self._freezes.append((node.func.value, chain, function))
        return False

    def _freeze_assign(self, node: cst.Assign, chain: Chain, function) -> None:
        for target in node.targets:
            target = target.target
            if (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                    and _literal(node.value) is not True):
                self._freezes.append((target.value, chain, function))

    def _freeze(self, tensor: cst.CSTNode, chain: Chain, function) -> None:
        """Record which module paths ``tensor.requires_grad = False`` (or a flag) may freeze."""
        path = _path(tensor)
        if isinstance(tensor, cst.Name):
            loop = self._enclosing_for(tensor.value, tensor)
            if loop is not None:  # for p in model.parameters() / zip(a.parameters(), b.parameters()): all of them
                sources = [_path(n.func.value) for n in _expressions(loop.iter)
                           if _method(n) in ("parameters", "named_parameters")]
                if sources and all(sources):
                    for source in sources:
                        self._freeze_path(source, function)
                    return
                path = ""
            elif self._tensor_bindings(tensor.value, chain):
                return  # a plain tensor: _Flow follows it
        self._freeze_path(path, function)

    def _freeze_path(self, path: str, function) -> None:
        if not path:
            self.freeze_all = True
        elif path == "self" or path.startswith("self."):
            owner = self.class_of.get(id(function)) if function is not None else None
            if owner is None:
                self.freeze_all = True
            else:
                self.class_freezes.setdefault(owner.name.value, set()).add(path)
        else:
            self.freeze_paths.add(path)

    def _enclosing_for(self, name: str, node: cst.CSTNode) -> Optional[cst.For]:
        current = self.parent.get(id(node))
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, cst.For) and any(
                    isinstance(t, cst.Name) and t.value == name for t in _target_names(current.target)):
                return current
            current = self.parent.get(id(current))
        return None

    def _tensor_bindings(self, name: str, chain: Chain) -> bool:
        binds = self.binds.get((id(chain[0]), name), [])
        return bool(binds) and all(kind == "value" and _is_tensor_source(self.qualname, value)
                                   for kind, value, _ in binds)

    def _resolve_loads(self) -> None:
        for name, chain in self._loads:
            scope = self.resolve(name.value, chain)
            self.uses.setdefault((id(scope), name.value), []).append((name, chain))
        self._loads = []

    def resolve(self, name: str, chain: Chain) -> Scope:
        """The scope whose binding ``name`` refers to from ``chain`` (the module for globals and builtins)."""
        for index, scope in enumerate(chain):
            if isinstance(scope, cst.ClassDef) and index:
                continue
            if name in self.bound.get(id(scope), ()):
                return scope
        return chain[-1]

    def bindings(self, name: str, chain: Chain) -> List[Binding]:
        return self.binds.get((id(self.resolve(name, chain)), name), [])

    # -- classes ------------------------------------------------------------------
    def _module_classes(self) -> Dict[str, bool]:
        """Local nn.Module subclasses -> whether every base is ``nn.Module`` or another such local class
        (then the file shows every method that can reset the module's state)."""
        result: Dict[str, bool] = {}
        changed = True
        while changed:
            changed = False
            for name, cls in self.classes.items():
                if name in result:
                    continue
                kinds = []
                for base in cls.bases:
                    qualified = self.qualname(base.value) or ""
                    if qualified == "torch.nn.Module" or qualified == "torch.nn.modules.module.Module":
                        kinds.append(True)
                    elif dotted(base.value) in result:
                        kinds.append(result[dotted(base.value)])
                    elif qualified.startswith("torch.nn."):
                        kinds.append(False)
                    else:
                        kinds.append(None)
                if any(k is not None for k in kinds):
                    result[name] = all(k is True for k in kinds)
                    changed = True
        return result

    def class_methods(self, cls_name: str) -> Set[str]:
        names: Set[str] = set()
        todo = [cls_name]
        while todo:
            cls = self.classes.get(todo.pop())
            if cls is None:
                continue
            names.update(s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef))
            todo.extend(dotted(b.value) for b in cls.bases if dotted(b.value) in self.classes)
        return names

    def _class_attr_bindings(self, cls_name: str, attr: str) -> Optional[List[Tuple[cst.CSTNode, cst.FunctionDef]]]:
        todo = [cls_name]
        while todo:
            name = todo.pop()
            if (name, attr) in self.self_attrs:
                return self.self_attrs[(name, attr)]
            cls = self.classes.get(name)
            if cls is not None:
                todo.extend(dotted(b.value) for b in cls.bases if dotted(b.value) in self.classes)
        return None

    def class_frozen(self, cls_name: str, path: str) -> bool:
        return _covers(self.class_freezes.get(cls_name, ()), path)

    def frozen(self, expr: cst.CSTNode, owner: Optional[cst.ClassDef]) -> bool:
        """Whether the file may have frozen (``requires_grad = False``) the module reached by ``expr``."""
        if self.freeze_all:
            return True
        path = _path(expr)
        if not path:
            return True
        if path == "self" or path.startswith("self."):
            return owner is None or self.class_frozen(owner.name.value, path)
        return _covers(self.freeze_paths, path)

    # -- what a callee is -----------------------------------------------------------
    def callee(self, func: cst.CSTNode, chain: Chain) -> Optional[str]:
        """``"module"`` when ``func`` is a called object (a model, a layer, a passed-in callable),
        ``"function"`` for a def/lambda/method, ``None`` when the file does not tell."""
        if isinstance(func, cst.Name):
            binds = [b for b in self.bindings(func.value, chain) if b[0] != "import"]
            if not binds:
                return None
            if any(kind in ("def", "class") or isinstance(value, cst.Lambda) for kind, value, _ in binds):
                return "function"
            if any(kind == "param" for kind, _, _ in binds):
                return "module"
            if any(kind == "value" and self.constructs_module(value) for kind, value, _ in binds):
                return "module"
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = self._method_class(chain)
            if owner is not None and func.value.value == _self_name(chain[0]):
                if func.attr.value in self.class_methods(owner.name.value):
                    return "function"
                if self._class_attr_bindings(owner.name.value, func.attr.value):
                    return "module"
        return None

    def _method_class(self, chain: Chain) -> Optional[cst.ClassDef]:
        for scope in chain:
            if isinstance(scope, cst.FunctionDef):
                return self.class_of.get(id(scope))
        return None

    def constructs_module(self, value: Optional[cst.CSTNode]) -> bool:
        while _method(value) in MODULE_SELF_METHODS:
            value = value.func.value
        if not isinstance(value, cst.Call):
            return False
        qualified = self.qualname(value.func)
        if qualified is not None:
            if qualified.startswith(NOT_MODULE_CLASSES) or qualified.startswith("torch.nn.functional"):
                return False
            return _camel(_last(qualified)) or qualified == "torch.load"
        name = dotted(value.func)
        return bool(name) and _camel(_last(name))

    # -- backward -------------------------------------------------------------------
    def _has_backward(self, function: cst.FunctionDef) -> bool:
        return any(chain[0] is function for _, chain in self.backwards)

    def expressions(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """``_expressions(node)`` as a list, kept: each loop body is searched by several questions."""
        found = self._expressions.get(id(node))
        if found is None:
            found = self._expressions[id(node)] = list(_expressions(node))
        return found

    def runs_backward(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` (a loop body, a block) calls backward, directly or through a local function."""
        known = self._runs_backward.get(id(node))
        if known is None:
            known = self._runs_backward[id(node)] = self._calls_backward(node)
        return known

    def _calls_backward(self, node: cst.CSTNode) -> bool:
        for inner in self.expressions(node):
            if not isinstance(inner, cst.Call):
                continue
            if _is_backward(self.qualname, inner):
                return True
            func = inner.func  # train_step(...) or self.train_step(...)
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                func = func.attr
            if isinstance(func, cst.Name) and func.value in self.backward_functions:
                return True
        return False

    def in_nograd(self, node: cst.CSTNode, chain: Chain) -> bool:
        if id(node) in self.nograd_nodes:
            return True
        return any(isinstance(s, cst.FunctionDef) and self.function_nograd(s) for s in chain)

    def function_nograd(self, function: cst.FunctionDef) -> bool:
        return id(function) in self.nograd_functions or function.name.value in self.nograd_names


_WALKERS: Dict[type, Callable[..., bool]] = {
    cst.FunctionDef: _File._function, cst.ClassDef: _File._walk_class, cst.Lambda: _File._walk_lambda,
    cst.Import: _File._walk_import, cst.ImportFrom: _File._walk_import, cst.Global: _File._walk_skip,
    cst.Nonlocal: _File._walk_skip, cst.Attribute: _File._walk_attribute, cst.Arg: _File._walk_arg,
    cst.Name: _File._walk_name, cst.Assign: _File._walk_assign, cst.Expr: _File._walk_expr,
    cst.Call: _File._call, cst.With: _File._walk_with,
    **{kind: _File._walk_binding for kind in (cst.AnnAssign, cst.AugAssign, cst.For, cst.While, cst.CompFor,
                                              cst.NamedExpr, cst.WithItem, cst.ExceptHandler)},
}
_STATEMENTS = frozenset({cst.SimpleStatementLine, cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.With,
                         cst.Match})
_LITERALS = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString})  # nothing in them to record


def _is_backward(qualname, call: cst.Call) -> bool:
    """``t.backward(...)`` (not a module function named backward), ``torch.autograd.backward/grad``."""
    qualified = qualname(call.func)
    return (_method(call) == "backward" and qualified is None) or qualified in AUTOGRAD_CALLS


def _params(params: cst.Parameters) -> List[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


def _self_name(function: Optional[cst.CSTNode]) -> str:
    if isinstance(function, cst.FunctionDef):
        params = function.params.posonly_params or function.params.params
        if params and not any(dotted(d.decorator) in ("staticmethod", "classmethod") for d in function.decorators):
            return params[0].name.value
    return "\0"


def _is_tensor_source(qualname, value: Optional[cst.CSTNode]) -> bool:
    """A torch factory, ``Variable(...)`` or ``nn.Parameter(...)``, possibly moved or converted."""
    while _method(value) in IDENTITY_METHODS or _method(value) == "requires_grad_":
        value = value.func.value
    if not isinstance(value, cst.Call):
        return False
    qualified = qualname(value.func) or ""
    return qualified in VARIABLE or qualified in PARAMETER or _is_factory(qualified)


def _is_factory(qualified: str) -> bool:
    """``torch.zeros``, ``torch.FloatTensor``, ``torch.cuda.FloatTensor`` ..."""
    head, _, last = qualified.rpartition(".")
    return last in FACTORIES and head in ("torch", "torch.cuda")


def _file(rule: Rule) -> _File:
    """The file's facts, built once per file and shared by every TM6xx rule."""
    return rule.ctx.analysis(_File)


# ---------------------------------------------------------------------------
# Values, statement by statement (TM602, TM603, TM606)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Val:
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


PARAM = _Val("tensor", "leaf")
NO_GRAD_TENSOR = _Val("tensor", "no")
NOGRAD_KEY = ""  # env entry: True = grad off, False = grad on, None = not known


Env = Dict[str, Optional[_Val]]


def _meet(a: Env, b: Env) -> Env:
    return {key: a[key] for key in a if key in b and a[key] == b[key]}


class _Flow:
    """Follows each scope's statements in order, tracking what names certainly are, and records
    in-place writes to leaves, ``.grad`` reads of non-leaves and ``list(...)`` of tensors."""

    def __init__(self, facts: _File):
        self.facts = facts
        self.qualname = facts.qualname
        self.inplace: List[Tuple[cst.CSTNode, Optional[cst.SimpleStatementLine], str]] = []
        self.nonleaf_grads: List[Tuple[cst.Attribute, str]] = []
        self.tensors: Dict[int, cst.CSTNode] = {}  # list(...) calls / starred elements over a certain tensor
        self.module_env: Env = {}
        self._class_memo: Dict[Tuple[str, str], Optional[_Val]] = {}
        self.chain: Chain = (facts.module,)
        self.owner: Optional[cst.ClassDef] = None
        self.statement: Optional[cst.SimpleStatementLine] = None
        self.module_env = self._scope(facts.module, (facts.module,), {NOGRAD_KEY: False})
        for function in facts.functions:
            chain = facts.chain_of[id(function)]
            env: Env = {NOGRAD_KEY: facts.function_nograd(function) or any(
                isinstance(s, cst.FunctionDef) and facts.function_nograd(s) for s in chain[1:])}
            owner = facts.class_of.get(id(function))
            if owner is not None and owner.name.value in facts.module_classes and _self_name(function) != "\0":
                env[_self_name(function)] = _Val("module", cls=owner.name.value)
            self._scope(function.body, chain, env)

    def _scope(self, body: cst.CSTNode, chain: Chain, env: Env) -> Env:
        saved = self.chain, self.owner
        self.chain, self.owner = chain, self.facts._method_class(chain)
        stmts = body.body if isinstance(body, cst.Module) else _statements(body)
        env = self._block(stmts, env, True)
        self.chain, self.owner = saved
        return env

    # -- statements -------------------------------------------------------------------
    def _block(self, stmts: Sequence[cst.CSTNode], env: Env, record: bool) -> Env:
        for stmt in stmts:
            env = self._statement(stmt, env, record)
        return env

    def _statement(self, stmt: cst.CSTNode, env: Env, record: bool) -> Env:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            env = dict(env)
            for small in stmt.body:
                self.statement = stmt if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
                self._small(small, env, record)
            return env
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            env = dict(env)
            env.pop(stmt.name.value, None)
            return env
        if isinstance(stmt, cst.If):
            self._scan(stmt.test, env, record)
            then_env = dict(env)
            for name, val in self._guards(stmt.test, env):
                then_env[name] = val
            after_then = self._block(_statements(stmt.body), then_env, record)
            if isinstance(stmt.orelse, cst.If):
                after_else = self._statement(stmt.orelse, env, record)
            elif isinstance(stmt.orelse, cst.Else):
                after_else = self._block(_statements(stmt.orelse.body), env, record)
            else:
                after_else = env
            return _meet(after_then, after_else)
        if isinstance(stmt, (cst.For, cst.While)):
            return self._loop(stmt, env, record)
        if isinstance(stmt, cst.With):
            modes = [_grad_mode(self.qualname, item.item) for item in stmt.items]
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
                    for target in _target_names(item.asname.name):
                        inner.pop(dotted(target) or "", None)
            after = self._block(_statements(stmt.body), inner, record)
            after[NOGRAD_KEY] = env.get(NOGRAD_KEY)
            return after
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            after = self._block(_statements(stmt.body), env, record)
            merged = _meet(env, after)
            for handler in stmt.handlers:
                merged = _meet(merged, self._block(_statements(handler.body), merged, record))
            if stmt.orelse is not None:
                after = self._block(_statements(stmt.orelse.body), after, record)
                merged = _meet(merged, after)
            if stmt.finalbody is not None:
                merged = self._block(_statements(stmt.finalbody.body), merged, record)
            return merged
        # match statements and anything new: forget what the blocks bind
        env = dict(env)
        for block in _blocks(stmt):
            for inner in _expressions(block):
                if isinstance(inner, cst.Name):
                    env.pop(inner.value, None)
        return env

    def _loop(self, stmt: Union[cst.For, cst.While], env: Env, record: bool) -> Env:
        head = stmt.iter if isinstance(stmt, cst.For) else stmt.test
        self._scan(head, env, record)
        body = _statements(stmt.body)

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
            after = self._block(_statements(stmt.orelse.body), after, record)
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
            self._assign(target, _Val("group"), env)
        else:
            self._assign(target, None, env)

    def _guards(self, test: cst.CSTNode, env: Env) -> List[Tuple[str, _Val]]:
        """``isinstance(m, nn.Linear)``, ``type(m) == nn.Linear``, ``classname.find('Conv') != -1``."""
        found: List[Tuple[str, _Val]] = []
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._guards(test.left, env) + self._guards(test.right, env)
        if isinstance(test, cst.Call) and dotted(test.func) == "isinstance" and len(test.args) == 2:
            subject, classes = test.args[0].value, test.args[1].value
            options = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
            layer = self._common_layer(options)
            if layer and isinstance(subject, cst.Name):
                found.append((subject.value, _Val("module", cls=layer)))
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            left, right = test.left, test.comparisons[0].comparator
            operator = test.comparisons[0].operator
            if (isinstance(left, cst.Call) and dotted(left.func) == "type" and len(left.args) == 1
                    and isinstance(left.args[0].value, cst.Name)):
                options = [e.value for e in right.elements] if isinstance(right, (cst.Tuple, cst.List)) else [right]
                layer = self._common_layer(options)
                if layer and isinstance(operator, (cst.Equal, cst.Is, cst.In)):
                    found.append((left.args[0].value.value, _Val("module", cls=layer)))
            subject = self._classname_subject(left, right, operator)
            if subject is not None:
                found.append(subject)
        return found

    def _common_layer(self, options: Sequence[cst.CSTNode]) -> str:
        """One torch.nn layer name standing for all the options when they share their parameter names."""
        layers = {_last(self.qualname(o)) for o in options if (self.qualname(o) or "").startswith("torch.nn.")}
        if len(layers) != len(options) or not layers:
            return ""
        attrs = {LAYER_PARAMS.get(layer) for layer in layers}
        return sorted(layers)[0] if len(attrs) == 1 and None not in attrs else ""

    def _classname_subject(self, left, right, operator) -> Optional[Tuple[str, _Val]]:
        """DCGAN's ``classname.find('Conv') != -1`` with ``classname = m.__class__.__name__``."""
        if not (_method(left) == "find" and isinstance(operator, cst.NotEqual) and _literal(right) == -1):
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
        return owner, _Val("module", cls=layers[0])

    def _small(self, small: cst.CSTNode, env: Env, record: bool) -> None:
        if isinstance(small, cst.Assign):
            self._scan(small.value, env, record)
            for target in small.targets:
                self._scan_target(target.target, env, record)
            value = self.ev(small.value, env)
            for target in small.targets:
                self._assign(target.target, value, env, small.value)
            for target in small.targets:
                self._requires_grad_assign(target.target, small.value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._scan(small.value, env, record)
                self._assign(small.target, self.ev(small.value, env), env, small.value)
        elif isinstance(small, cst.AugAssign):
            self._scan(small.value, env, record)
            self._scan_target(small.target, env, record, augmented=True)
        elif isinstance(small, cst.Expr):
            self._scan(small.value, env, record)
            self._effects(small.value, env)
        elif isinstance(small, cst.Del):
            for target in _target_names(small.target):
                env.pop(dotted(target) or "", None)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            if not isinstance(small.names, cst.ImportStar):
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
        mode = _grad_mode(self.qualname, expr)
        if mode is not None and self.qualname(expr.func) in GRAD_SWITCH:
            env[NOGRAD_KEY] = None if mode is ... else not mode
        if _method(expr) == "requires_grad_" and isinstance(expr.func.value, cst.Name):
            name = expr.func.value.value
            env[name] = self.ev(expr, env)

    def _requires_grad_assign(self, target: cst.CSTNode, value: cst.CSTNode, env: Env) -> None:
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad" and isinstance(
                target.value, cst.Name):
            name = target.value.value
            current = env.get(name)
            flag = _literal(value)
            if current is not None and current.kind == "tensor" and current.grad in ("no", "leaf"):
                env[name] = PARAM if flag is True else (NO_GRAD_TENSOR if flag is False else _Val("tensor"))
            elif current is not None and flag is not True:
                env[name] = None

    def _assign(self, target: cst.CSTNode, value: Optional[_Val], env: Env, expr: Optional[cst.CSTNode] = None) -> None:
        if isinstance(target, cst.Name):
            env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            sources = [e.value for e in expr.elements] if isinstance(expr, (cst.Tuple, cst.List)) else None
            for index, element in enumerate(elements):
                if sources is not None and len(sources) == len(elements) and not isinstance(
                        target.elements[index], cst.StarredElement):
                    self._assign(element, self.ev(sources[index], env), env, sources[index])
                elif value is not None and value.kind == "value" and not isinstance(element, cst.StarredElement):
                    self._assign(element, value, env)
                else:
                    self._assign(element, None, env)
        elif isinstance(target, cst.StarredElement):
            self._assign(target.value, None, env)
        elif isinstance(target, cst.Attribute):
            name = dotted(target)
            for key in [k for k in env if k and name and (k == name or k.startswith(name + "."))]:
                del env[key]

    # -- expressions: events -------------------------------------------------------------
    def _scan_target(self, target: cst.CSTNode, env: Env, record: bool, augmented: bool = False) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._scan_target(element.value, env, record)
            return
        if isinstance(target, cst.StarredElement):
            self._scan_target(target.value, env, record)
            return
        if isinstance(target, cst.Subscript):
            self._scan(target.value, env, record)
            for element in target.slice:
                self._scan(element, env, record)
            self._inplace(target, target.value, env, record, "item assignment")
        elif isinstance(target, cst.Attribute):
            self._scan(target.value, env, record)
            if augmented:
                self._inplace(target, target, env, record, "augmented assignment")
        elif isinstance(target, cst.Name) and augmented:
            self._inplace(target, target, env, record, "augmented assignment")

    def _scan(self, node: cst.CSTNode, env: Env, record: bool) -> None:
        if type(node) in _INERT:
            return
        if isinstance(node, COMPREHENSIONS):
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
        if isinstance(node, cst.Call):
            method = _method(node)
            if method in INPLACE_METHODS:
                self._inplace(node, node.func.value, env, record, f"`.{method}()`")
            if (isinstance(node.func, cst.Name) and node.func.value == "list" and len(node.args) == 1
                    and not node.args[0].star and self._is_tensor(node.args[0].value, env)):
                self.tensors[id(node)] = node
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            for element in node.elements:
                if isinstance(element, cst.StarredElement) and self._is_tensor(element.value, env):
                    self.tensors[id(element)] = element
        elif isinstance(node, cst.Attribute) and node.attr.value == "grad" and isinstance(node.value, cst.Name):
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
            self.inplace.append((node, self.statement, f"{what} on `{_code(target)}`"))

    def _leaf(self, target: cst.CSTNode, env: Env) -> bool:
        value = self.ev(target, env)
        if value is not None and value.kind == "tensor" and value.grad == "leaf":
            return True
        if isinstance(target, cst.Subscript):  # a view of a leaf
            return self._leaf(target.value, env)
        return False

    # -- expressions: values -------------------------------------------------------------
    def ev(self, node: cst.CSTNode, env: Env) -> Optional[_Val]:
        nograd = env.get(NOGRAD_KEY)
        if isinstance(node, cst.Name):
            if node.value in env:
                return env[node.value]
            scope = self.facts.resolve(node.value, self.chain)
            if scope is self.facts.module and scope is not self.chain[0]:
                if len(self.facts.binds.get((id(scope), node.value), [])) == 1:
                    return self.module_env.get(node.value)
            return None
        if isinstance(node, cst.Attribute):
            return self._attribute(node, env)
        if isinstance(node, cst.Call):
            return self._call(node, env)
        if isinstance(node, cst.Subscript):
            base = self.ev(node.value, env)
            if base is None:
                return None
            if base.kind == "params":
                return PARAM
            if base.kind == "group":
                index = node.slice[0].slice if len(node.slice) == 1 else None
                if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) and (
                        index.value.evaluated_value == "params"):
                    return _Val("params")
                return None
            if base.kind in ("tensor", "value"):
                return _Val(base.kind, _derived(base.grad, nograd))
            return None
        if isinstance(node, cst.BinaryOperation):
            return self._combine([node.left, node.right], env, "tensor")
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            operand = self.ev(node.expression, env)
            if operand is not None and operand.kind in ("tensor", "value"):
                return _Val(operand.kind, _derived(operand.grad, nograd))
            return None
        if isinstance(node, cst.IfExp):
            body, orelse = self.ev(node.body, env), self.ev(node.orelse, env)
            return body if body == orelse else None
        return None

    def _combine(self, operands: Sequence[cst.CSTNode], env: Env, kind: str) -> Optional[_Val]:
        """The result of tensor math on ``operands``."""
        values = [self.ev(operand, env) for operand in operands]
        tensors = [v for v in values if v is not None and v.kind in ("tensor", "value")]
        if not tensors or any(isinstance(o, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))
                              for o in operands):
            return None
        kind = kind if any(v.kind == "tensor" for v in tensors) else "value"
        nograd = env.get(NOGRAD_KEY)
        if nograd is True:
            return _Val(kind, "no")
        if any(v.grad in ("leaf", "graph") for v in tensors):
            return _Val(kind, "graph" if nograd is False else "")
        plain = all(v is not None and (v.grad == "no" or v.kind not in ("tensor", "value")) or
                    isinstance(_literal(o), (int, float)) for v, o in zip(values, operands))
        return _Val(kind, "no" if plain else "")

    def _attribute(self, node: cst.Attribute, env: Env) -> Optional[_Val]:
        attr = node.attr.value
        name = dotted(node)
        if name and name in env:
            return env[name]
        base = self.ev(node.value, env)
        if attr == "data":
            return NO_GRAD_TENSOR if base is not None and base.kind == "tensor" else None
        if attr == "param_groups":
            return _Val("groups")
        if base is None:
            return None
        if attr in ("T", "mT", "H") and base.kind == "tensor":
            return _Val("tensor", _derived(base.grad, env.get(NOGRAD_KEY)))
        if base.kind != "module" or self.facts.frozen(node.value, self.owner):
            return None
        params = LAYER_PARAMS.get(base.cls, ())
        if attr in params or (base.cls in RNN_LAYERS and attr.startswith(("weight_", "bias_"))):
            return PARAM
        if base.cls in self.facts.classes:
            return self._class_attr(base.cls, attr)
        return None

    def _class_attr(self, cls_name: str, attr: str) -> Optional[_Val]:
        key = (cls_name, attr)
        if key in self._class_memo:
            return self._class_memo[key]
        self._class_memo[key] = None
        bindings = self.facts._class_attr_bindings(cls_name, attr)
        if not bindings or self.facts.class_frozen(cls_name, "self." + attr):
            return None
        saved = self.chain, self.owner
        values = []
        for value, method in bindings:
            self.chain, self.owner = self.facts.chain_of[id(method)], self.facts.class_of.get(id(method))
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
                    value.cls in PARAM_LAYERS or (value.cls in self.facts.classes and value.cls != cls_name
                                                  and self.has_params(value.cls)))):
                return True
        return False

    def _call(self, node: cst.Call, env: Env) -> Optional[_Val]:
        nograd = env.get(NOGRAD_KEY)
        qualified = self.qualname(node.func)
        if qualified is not None:
            flag = _kwarg(node, "requires_grad")
            wanted = _literal(flag.value) if flag is not None else False
            if _is_factory(qualified) or qualified in VARIABLE:
                return _Val("tensor", "leaf" if wanted is True else ("no" if wanted is False else ""))
            if qualified in PARAMETER:
                flag = _kwarg(node, "requires_grad", 1)
                wanted = _literal(flag.value) if flag is not None else True
                return _Val("tensor", "leaf" if wanted is True else ("no" if wanted is False else ""))
            last = _last(qualified)
            if qualified.startswith("torch.nn.") and _camel(last) and not qualified.startswith(
                    ("torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.parameter")):
                return _Val("module", cls=last)
            if qualified.startswith("torch.") and not qualified.startswith(NOT_MATH) and not _camel(last):
                args = [a.value for a in node.args if not a.star]
                flat = [e.value for a in args for e in (a.elements if isinstance(a, (cst.List, cst.Tuple)) else [])]
                found = self._combine(args + flat, env, "value")
                return _Val("value", found.grad) if found is not None and found.grad != "no" else None
            return None
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.facts.module_classes and any(
                kind == "class" for kind, _, _ in self.facts.bindings(func.value, self.chain)):
            return _Val("module", cls=func.value)
        if isinstance(func, cst.Name) and func.value == "list" and len(node.args) == 1:
            inner = self.ev(node.args[0].value, env)
            return inner if inner is not None and inner.kind in ("params", "named") else None
        if isinstance(func, cst.Attribute):
            receiver = self.ev(func.value, env)
            method = func.attr.value
            if receiver is None:
                if method in ("parameters", "named_parameters") and not self.facts.frozen(func.value, self.owner):
                    return _Val("params" if method == "parameters" else "named")
                return self._module_call(func, env)
            if receiver.kind == "module":
                if method in MODULE_SELF_METHODS:
                    return receiver
                if method in ("parameters", "named_parameters") and not self.facts.frozen(func.value, self.owner):
                    return _Val("params" if method == "parameters" else "named")
                return self._module_call(func, env)
            if receiver.kind == "tensor":
                return self._tensor_method(node, method, receiver, nograd)
            return None
        callee = self.ev(func, env)
        if callee is not None and callee.kind == "module":
            return self._output(callee, nograd)
        return None

    def _module_call(self, func: cst.Attribute, env: Env) -> Optional[_Val]:
        """``self.fc(x)``: a call of a submodule attribute."""
        callee = self._attribute(func, env) if isinstance(func, cst.Attribute) else None
        if callee is not None and callee.kind == "module":
            return self._output(callee, env.get(NOGRAD_KEY))
        return None

    def _output(self, module: _Val, nograd: Optional[bool]) -> Optional[_Val]:
        if nograd is True:
            return _Val("value", "no")
        if nograd is False and (module.cls in PARAM_LAYERS or (
                module.cls in self.facts.classes and self.has_params(module.cls))):
            return _Val("value", "graph")
        return None

    def _tensor_method(self, node: cst.Call, method: str, receiver: _Val, nograd: Optional[bool]) -> Optional[_Val]:
        if method == "requires_grad_":
            flag = _kwarg(node, "requires_grad", 0)
            wanted = _literal(flag.value) if flag is not None else True
            if wanted is False:
                return NO_GRAD_TENSOR if receiver.grad in ("no", "leaf") else None
            if wanted is True:
                return PARAM if receiver.grad in ("no", "leaf") else _Val("tensor", receiver.grad)
            return _Val("tensor")
        if method in NO_GRAD_METHODS:
            flag = _kwarg(node, "requires_grad")
            return NO_GRAD_TENSOR if flag is None else _Val("tensor")
        if method in INPLACE_METHODS:
            return receiver
        if method in IDENTITY_METHODS:
            if receiver.grad == "leaf" and self._copies(node):
                return _Val("tensor", _derived("leaf", nograd))
            return _Val("tensor", {"no": "no", "graph": "graph"}.get(receiver.grad, ""))
        if method in DERIVING_METHODS:
            return _Val("tensor", _derived(receiver.grad, nograd))
        return None


    def _copies(self, node: cst.Call) -> bool:
        """``torch.rand(3, requires_grad=True).cuda()`` / ``.double()``: a CPU float32 factory result moved to
        the GPU or to another dtype is a copy, a non-leaf (the classic "x.grad is None")."""
        factory = node.func.value
        if not (isinstance(factory, cst.Call) and _is_factory(self.qualname(factory.func) or "")):
            return False
        method = node.func.attr.value
        target = _kwarg(node, "device", 0)
        if method == "cuda" or (method == "to" and isinstance(target.value if target else None, cst.SimpleString)
                                and str(target.value.evaluated_value).startswith("cuda")):
            return _kwarg(factory, "device") is None
        return method in ("double", "half", "bfloat16") and _kwarg(factory, "dtype") is None and (
            _last(self.qualname(factory.func)) in ("rand", "randn", "zeros", "ones", "empty", "full", "linspace"))


def _derived(grad: str, nograd: Optional[bool]) -> str:
    """The autograd status of a differentiable function of a value with status ``grad``."""
    if grad == "no" or nograd is True:
        return "no"
    if grad in ("leaf", "graph"):
        return "graph" if nograd is False else ""
    return ""


def _flow(rule: Rule) -> _Flow:
    return rule.ctx.analysis(_file_flow)


def _file_flow(ctx: FileContext) -> _Flow:
    return _Flow(ctx.analysis(_File))


# ---------------------------------------------------------------------------
# Fix builders (all unsafe: each changes what the program computes)
# ---------------------------------------------------------------------------
def _no_grad_call(rule: Rule) -> cst.BaseExpression:
    spelled = rule.ctx.imports.local_name("torch.no_grad")
    if spelled is None:
        rule.ctx.add_import("torch")
        spelled = "torch.no_grad"
    return cst.parse_expression(f"{spelled}()")


def _wrap_no_grad(rule: Rule) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def fix(updated: cst.CSTNode) -> cst.CSTNode:
        if not isinstance(updated, cst.SimpleStatementLine):
            return updated  # already wrapped by an earlier fix on this line
        return cst.With(items=[cst.WithItem(_no_grad_call(rule))],
                        body=cst.IndentedBlock(body=[updated.with_changes(leading_lines=())]),
                        leading_lines=updated.leading_lines)
    return fix


def _detach(updated: cst.CSTNode) -> cst.CSTNode:
    """``x = e`` -> ``x = e.detach()``."""
    small = updated.body[0]
    value = small.value
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    detached = cst.Call(cst.Attribute(value, cst.Name("detach")))
    return updated.with_changes(body=[small.with_changes(value=detached), *updated.body[1:]])


def _without_arg(call: cst.Call, keyword: str) -> cst.Call:
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == keyword)]
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT and len(args) < len(call.args):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def _sole_in_block(facts: _File, stmt: cst.CSTNode) -> bool:
    block = facts.parent.get(id(stmt))
    return isinstance(block, (cst.IndentedBlock, cst.Module)) and len(block.body) == 1


def _statement_of(facts: _File, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    current = node
    while current is not None and not isinstance(current, cst.BaseStatement):
        current = facts.parent.get(id(current))
    return current if isinstance(current, cst.SimpleStatementLine) and len(current.body) == 1 else None


# ---------------------------------------------------------------------------
# TM601: recurrent state carried with its graph
# ---------------------------------------------------------------------------
DETACHING_WORDS = ("detach", "repackage")


class _Carry:
    """How an expression derives from a carried state ``H``: 0 not at all, 1 without adding graph (aliases,
    tensor methods, containers), 2 through a module call or math with parameters (so it carries a graph)."""

    def __init__(self, facts: _File, chain: Chain, params: Set[str]):
        self.facts = facts
        self.qualname = facts.qualname
        self.chain = chain
        self.params = params  # dotted names that are parameters or modules (math with them builds a graph)

    def level(self, node: cst.CSTNode, tainted: Dict[str, int]) -> int:
        name = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is not None and name in tainted:
            return tainted[name]
        if isinstance(node, cst.Attribute):
            if node.attr.value in ("data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf"):
                return 0
            return self.level(node.value, tainted)
        if isinstance(node, cst.Subscript):
            return self.level(node.value, tainted)
        if isinstance(node, (cst.Tuple, cst.List)):
            return max((self.level(e.value, tainted) for e in node.elements), default=0)
        if isinstance(node, cst.IfExp):
            return max(self.level(node.body, tainted), self.level(node.orelse, tainted))
        if isinstance(node, cst.UnaryOperation):
            return self.level(node.expression, tainted)
        if isinstance(node, cst.BinaryOperation):
            return self._math([node.left, node.right], tainted)
        if isinstance(node, cst.AugAssign):  # x += v computes x + v
            return self._math([node.target, node.value], tainted)
        if isinstance(node, COMPREHENSIONS):
            inner = dict(tainted)
            comp = node.for_in
            while comp is not None:
                source = self.level(comp.iter, inner)
                for target in _target_names(comp.target):
                    if source:
                        inner[dotted(target) or ""] = source
                comp = comp.inner_for_in
            return max((self.level(getattr(node, part), inner) for part in ("elt", "key", "value")
                        if getattr(node, part, None) is not None), default=0)
        if isinstance(node, cst.Call):
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
        method = _method(node)
        qualified = self.qualname(func)
        if any(word in _last(name).lower() for word in DETACHING_WORDS) or qualified in VARIABLE:
            return 0
        if method in SCALAR_METHODS or method in NO_GRAD_METHODS or name in PLAIN_BUILTINS:
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


def _state_name(name: str) -> bool:
    """A name that can hold recurrent state: ``h`` or ``self.h``."""
    return name.count(".") == 0 or (name.count(".") == 1 and name.startswith("self."))


def _carry_assignments(facts: "_File", region: cst.CSTNode
                       ) -> List[Tuple[cst.CSTNode, List[str], Optional[cst.CSTNode]]]:
    """(statement, bound names, value) for every binding in ``region``: value is the bound expression, the
    ``AugAssign`` itself for ``x += v``, None for a fresh binding (a loop or with target)."""
    found = []
    for node in facts.expressions(region):
        if isinstance(node, cst.Assign):
            names = [dotted(t) for target in node.targets for t in _target_names(target.target)]
            found.append((node, [n for n in names if n], node.value))
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            found.append((node, [n for n in (dotted(t) for t in _target_names(node.target)) if n], node.value))
        elif isinstance(node, cst.AugAssign):
            found.append((node, [n for n in (dotted(t) for t in _target_names(node.target)) if n], node))
        elif isinstance(node, (cst.For, cst.CompFor)):
            found.append((node, [n for n in (dotted(t) for t in _target_names(node.target)) if n], None))
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            found.append((node, [n for n in (dotted(t) for t in _target_names(node.asname.name)) if n], None))
        elif isinstance(node, cst.NamedExpr):
            found.append((node, [n for n in (dotted(t) for t in _target_names(node.target)) if n], node.value))
    return found


def _order(node: cst.CSTNode) -> Iterator[Tuple[bool, str]]:
    """(is_store, dotted name) for every name read or bound under ``node``, in execution order."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return
    if isinstance(node, (cst.Assign, cst.AnnAssign)):
        if node.value is not None:
            yield from _order(node.value)
        for target in ([t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]):
            yield from _stores(target)
    elif isinstance(node, cst.AugAssign):
        yield from _order(node.target)
        yield from _order(node.value)
        yield from _stores(node.target)
    elif isinstance(node, cst.For):
        yield from _order(node.iter)
        yield from _stores(node.target)
        for part in (node.body, node.orelse):
            if part is not None:
                yield from _order(part)
    elif isinstance(node, (cst.Name, cst.Attribute)):
        name = dotted(node)
        if name:
            yield False, name
        if isinstance(node, cst.Attribute):
            yield from _order(node.value)
    else:
        for child in children(node):
            yield from _order(child)


def _stores(target: cst.CSTNode) -> Iterator[Tuple[bool, str]]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _stores(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _stores(target.value)
    elif isinstance(target, (cst.Name, cst.Attribute)) and dotted(target):
        yield True, dotted(target)
        if isinstance(target, cst.Attribute):
            yield from _order(target.value)
    else:
        yield from _order(target)


def _read_first(facts: "_File", region: Sequence[cst.CSTNode], name: str) -> bool:
    """Whether ``name`` is read in ``region`` before it is bound there (it is live when the region starts)."""
    key = tuple(id(part) for part in region)
    first = facts.first_uses.get(key)
    if first is None:
        first = facts.first_uses[key] = {}
        for part in region:
            for is_store, seen in _order(part):
                first.setdefault(seen, not is_store)
    return first.get(name, False)


def _taint(carry: _Carry, facts: _File, chain: Chain, assignments, seed: str) -> Dict[str, int]:
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


def _param_names(facts: _File, flow: _Flow, chain: Chain) -> Set[str]:
    """Names in ``chain``'s scope (and ``self.x`` attributes) that hold parameters or modules."""
    names = facts.param_names.get(id(chain[0]))
    if names is None:
        names = facts.param_names[id(chain[0])] = _scope_param_names(facts, flow, chain)
    return names


def _scope_param_names(facts: _File, flow: _Flow, chain: Chain) -> Set[str]:
    names: Set[str] = set()
    owner = facts._method_class(chain)
    for scope_id in {id(chain[0]), id(facts.module)}:
        for name in facts.bound.get(scope_id, ()):
            if any(kind == "value" and _is_tensor_source(facts.qualname, value) and _requires_grad_source(facts, value)
                   for kind, value, _ in facts.binds[(scope_id, name)]):
                names.add(name)
    if owner is not None:
        self_name = _self_name(next(s for s in chain if isinstance(s, cst.FunctionDef)))
        for (cls_name, attr) in facts.self_attrs:
            if cls_name == owner.name.value:
                value = flow._class_attr(cls_name, attr)
                if value == PARAM or (value is not None and value.kind == "module"):
                    names.add(f"{self_name}.{attr}")
    return names


def _requires_grad_source(facts: _File, value: cst.CSTNode) -> bool:
    while _method(value) in IDENTITY_METHODS:
        value = value.func.value
    if _method(value) == "requires_grad_":
        flag = _kwarg(value, "requires_grad", 0)
        return flag is None or _literal(flag.value) is True
    if not isinstance(value, cst.Call):
        return False
    qualified = facts.qualname(value.func) or ""
    flag = _kwarg(value, "requires_grad", 1 if qualified in PARAMETER else None)
    if qualified in PARAMETER:
        return flag is None or _literal(flag.value) is True
    return flag is not None and _literal(flag.value) is True


def _surely_tensor(facts: _File, node: cst.CSTNode, assignments, depth: int = 0) -> bool:
    """An expression that is one tensor (so ``.detach()`` can be appended): math on torch calls."""
    if depth > 8:
        return False
    if isinstance(node, cst.BinaryOperation):
        return any(_surely_tensor(facts, side, assignments, depth + 1) for side in (node.left, node.right))
    if isinstance(node, cst.Call):
        qualified = facts.qualname(node.func) or ""
        if qualified.startswith("torch.") and _last(qualified) in (
                "mm", "matmul", "bmm", "tanh", "sigmoid", "relu", "cat", "stack", "addmm", "exp", "add", "mul"):
            return True
        return _method(node) in DERIVING_METHODS and _surely_tensor(facts, node.func.value, assignments, depth + 1)
    if isinstance(node, cst.Name):
        values = [value for _, names, value in assignments if node.value in names]
        return len(values) == 1 and values[0] is not None and _surely_tensor(facts, values[0], assignments, depth + 1)
    return False


class RecurrentStateNotDetached(Rule):
    """Recurrent state kept across iterations with its graph.

    ``self.hx = out`` in a module's ``forward``, or ``hidden = output`` / ``output, hidden = model(x, hidden)``
    in a training loop that calls ``backward()`` every iteration, feeds this iteration's graph into the next
    one. The first ``backward()`` frees that graph; the second walks into it: "RuntimeError: Trying to
    backward through the graph a second time" (seed 002: the hand-written RNN cell). With
    ``retain_graph=True`` it runs instead, back-propagating through every earlier step, ever slower. The
    state must be cut when it is carried over: ``out.detach()`` (truncated BPTT), ``repackage_hidden(h)``,
    or a fresh ``model.init_hidden(bsz)``. Only state that flows through a module call or math with
    parameters and back into itself is reported; a loop without backward is left alone.
    """

    code = "TM601"
    name = "recurrent-state-not-detached"
    summary = "recurrent state carried into the next iteration with its graph (detach it)"
    kind = "hazard"
    triggers = ("backward", "def forward")
    changes = (
        Example("import torch.nn as nn\n\nrnn = nn.GRU(4, 8)\nh = None\nfor x in data:\n    out, h = rnn(x, h)\n"
                "    out.sum().backward()\n"),
        Example(
            "import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.W = nn.Parameter(torch.randn(4, 4))\n        self.hx = torch.zeros(1, 4)\n\n"
            "    def forward(self, x):\n        out = torch.tanh(x + torch.mm(self.hx, self.W))\n"
            "        self.hx = out\n        return out\n",
            "import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.W = nn.Parameter(torch.randn(4, 4))\n        self.hx = torch.zeros(1, 4)\n\n"
            "    def forward(self, x):\n        out = torch.tanh(x + torch.mm(self.hx, self.W))\n"
            "        self.hx = out.detach()\n        return out\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch.nn as nn\n\nrnn = nn.LSTM(4, 8)\nhidden = None\nfor x, y in data:\n"
        "    hidden = repackage_hidden(hidden)\n    output, hidden = rnn(x, hidden)\n"
        "    loss = (output - y).pow(2).mean()\n    loss.backward()\n",
        "import torch.nn as nn\n\nrnn = nn.GRU(4, 8)\nhidden = None\nfor x in data:\n"
        "    output, hidden = rnn(x, hidden)\n",
        "import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.W = nn.Parameter(torch.randn(4, 4))\n        self.hx = torch.zeros(1, 4)\n\n"
        "    def forward(self, x):\n        out = torch.tanh(x + torch.mm(self.hx, self.W))\n"
        "        self.hx = out.detach()\n        return out\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = _file(self)
        reported: Set[int] = set()
        for stmt, name, fixable in [*self._loop_carries(facts), *self._module_state(facts)]:
            if id(stmt) in reported:
                continue
            reported.add(id(stmt))
            line = _statement_of(facts, stmt)
            fix = _detach if fixable and line is not None else None
            self.report(line if fix else stmt,
                        f"`{name}` is carried into the next iteration with its graph: the next backward() runs "
                        "into this iteration's freed graph ('Trying to backward through the graph a second time')",
                        fix, unsafe=True,
                        hint=f"carry `{name}.detach()` (truncated BPTT) or repackage/re-initialise it each iteration")

    def _loop_carries(self, facts: _File) -> Iterator[Tuple[cst.CSTNode, str, bool]]:
        flow = _flow(self)
        for loop, chain in facts.loops:
            if not facts.runs_backward(loop.body):
                continue
            if any(_method(n) == "detach_" for n in facts.expressions(loop.body) if isinstance(n, cst.Call)):
                continue
            assignments = _carry_assignments(facts, loop if isinstance(loop, cst.For) else loop.body)
            carry = _Carry(facts, chain, _param_names(facts, flow, chain))
            region = [loop.test, loop.body] if isinstance(loop, cst.While) else [loop.body]
            for candidate in {n for _, names, _ in assignments for n in names if _state_name(n)}:
                if _read_first(facts, region, candidate):
                    yield from self._carried(facts, chain, carry, assignments, candidate)

    @staticmethod
    def _carried(facts, chain, carry, assignments, name) -> Iterator[Tuple[cst.CSTNode, str, bool]]:
        mine = [(stmt, value) for stmt, names, value in assignments if name in names]
        tainted = _taint(carry, facts, chain, assignments, name)
        levels = [0 if value is None or facts.in_nograd(stmt, chain) else carry.level(value, tainted)
                  for stmt, value in mine]
        if mine and all(level == 2 for level in levels):
            for stmt, value in mine:
                single = isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and not isinstance(
                    stmt.targets[0].target, (cst.Tuple, cst.List))
                yield stmt, name, single and _surely_tensor(facts, value, assignments)

    def _module_state(self, facts: _File) -> Iterator[Tuple[cst.CSTNode, str, bool]]:
        """``self.x = f(self.x, ...)`` in a method of an nn.Module whose state nothing resets."""
        flow = _flow(self)
        for (cls_name, attr), bindings in facts.self_attrs.items():
            if not facts.module_classes.get(cls_name):
                continue
            outside = [(value, method) for value, method in bindings if method.name.value != "__init__"]
            external = [t for t in facts.attr_stores.get(attr, ()) if not (
                isinstance(t.value, cst.Name) and facts.class_of.get(id(_function_of(facts, t))) is not None
                and t.value.value == _self_name(_function_of(facts, t)))]
            if not outside or external or _resettable(facts, cls_name, bindings):
                continue
            results = []
            for value, method in outside:
                chain = facts.chain_of[id(method)]
                key = f"{_self_name(method)}.{attr}"
                assignments = _carry_assignments(facts, method.body)
                if not _read_first(facts, [method.body], key):
                    results = None
                    break
                carry = _Carry(facts, chain, _param_names(facts, flow, chain) - {key})
                tainted = _taint(carry, facts, chain, assignments, key)
                for stmt, names, assigned in assignments:
                    if key not in names:
                        continue
                    level = 0 if assigned is None or facts.in_nograd(stmt, chain) else carry.level(assigned, tainted)
                    if level != 2 and not _lazy_init(facts, stmt, key):
                        results = None
                        break
                    if level == 2:
                        results.append((stmt, key, _surely_tensor(facts, assigned, assignments)))
                if results is None:
                    break
            if results:
                yield from results


def _resettable(facts: _File, cls_name: str, bindings) -> bool:
    """The class offers its callers a way to reset the state: a ``reset*``/``init_hidden``-like method, or
    the state is built by one of its methods (``self.hidden = self.init_hidden()``, reused as
    ``model.hidden = model.init_hidden()`` in a training script elsewhere)."""
    methods = facts.class_methods(cls_name)
    if any("reset" in m.lower() or ("init" in m.lower() and ("hidden" in m.lower() or "state" in m.lower()))
           for m in methods):
        return True
    return any(isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
               and dotted(value.func.value) == _self_name(method) and value.func.attr.value in methods
               for value, method in bindings)


def _function_of(facts: _File, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    if id(node) not in facts.function_of:
        current = facts.parent.get(id(node))
        while current is not None and not isinstance(current, cst.FunctionDef):
            current = facts.parent.get(id(current))
        facts.function_of[id(node)] = current
    return facts.function_of[id(node)]


def _lazy_init(facts: _File, stmt: cst.CSTNode, key: str) -> bool:
    """``if self.hx is None: self.hx = zeros(...)``: a first-call initialisation, not a reset."""
    current = facts.parent.get(id(stmt))
    while current is not None and not isinstance(current, cst.FunctionDef):
        if isinstance(current, cst.If):
            return any(isinstance(n, cst.Comparison) and dotted(n.left) == key and any(
                isinstance(c.operator, cst.Is) and _literal(c.comparator) is None for c in n.comparisons)
                for n in _expressions(current.test))
        current = facts.parent.get(id(current))
    return False


# ---------------------------------------------------------------------------
# TM602: in-place operation on a leaf that requires grad
# ---------------------------------------------------------------------------
class InplaceOnLeaf(Rule):
    """In-place operation on a leaf tensor that requires grad, outside ``torch.no_grad()``.

    Parameters (``model.parameters()`` loop variables, ``layer.weight``/``.bias``, ``nn.Parameter``) and
    tensors made with ``requires_grad=True`` are leaves; ``p.copy_(...)``, ``w += ...``, ``w[0] = ...``,
    ``.zero_()``, ``.fill_()``, ``.uniform_()`` on them raise "RuntimeError: a leaf Variable that requires
    grad is being used in an in-place operation" (seed 002). Legacy code wrote through ``.data``, which the
    migration removes; the modern spelling is the same statement under ``with torch.no_grad():`` (the unsafe
    fix). ``.data``/``.grad`` writes, ``nn.init.*_`` (no_grad inside), no-grad blocks and functions, and
    modules the file freezes are left alone.
    """

    code = "TM602"
    name = "inplace-on-leaf"
    summary = "in-place operation on a parameter / leaf that requires grad outside `torch.no_grad()`"
    kind = "hazard"
    triggers = ("requires_grad", "parameters(", "Parameter(", ".weight", ".bias", "param_groups")
    changes = (
        Example(
            "import torch\nimport torch.nn as nn\n\nfc = nn.Linear(4, 2)\nfc.weight.fill_(0.01)\n",
            "import torch\nimport torch.nn as nn\n\nfc = nn.Linear(4, 2)\nwith torch.no_grad():\n"
            "    fc.weight.fill_(0.01)\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
            "w -= 0.1 * w.grad\n",
            "import torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
            "with torch.no_grad():\n    w -= 0.1 * w.grad\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\n\ndef soft_update(target, source, tau):\n"
            "    for t, s in zip(target.parameters(), source.parameters()):\n"
            "        t.copy_(tau * s + (1 - tau) * t)\n",
            "import torch\n\n\ndef soft_update(target, source, tau):\n"
            "    for t, s in zip(target.parameters(), source.parameters()):\n"
            "        with torch.no_grad():\n            t.copy_(tau * s + (1 - tau) * t)\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\nimport torch.nn as nn\n\nfc = nn.Linear(4, 2)\nwith torch.no_grad():\n"
        "    fc.weight.fill_(0.01)\nfc.bias.data.zero_()\nnn.init.xavier_uniform_(fc.weight)\n",
        "import torch\n\nw = torch.randn(3)\nw.add_(1)\nw.requires_grad_()\nloss = (w * 2).sum()\nloss.backward()\n"
        "w.grad.zero_()\n",
        "import torch\n\n\n@torch.no_grad()\ndef sgd(params, lr):\n    for p in params:\n"
        "        p.add_(p.grad, alpha=-lr)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        for target, line, what in _flow(self).inplace:
            fix = _wrap_no_grad(self) if line is not None else None
            self.report(line if fix else target,
                        f"in-place {what}, a leaf that requires grad: 'a leaf Variable that requires grad is being "
                        "used in an in-place operation'", fix, unsafe=True,
                        hint="do it under `with torch.no_grad():` (or in a `@torch.no_grad()` function)")


# ---------------------------------------------------------------------------
# TM603: list(tensor) in a parameter list
# ---------------------------------------------------------------------------
def _optimizer_call(facts: _File, call: cst.Call) -> bool:
    qualified = facts.qualname(call.func) or dotted(call.func) or ""
    last = _last(qualified)
    return (qualified.startswith("torch.optim.") and _camel(last) and "lr_scheduler" not in qualified) or (
        last in OPTIMIZERS) or _method(call) == "add_param_group"


def _sink(facts: _File, node: cst.CSTNode) -> Tuple[str, Optional[cst.CSTNode]]:
    """Where a list expression ends up: ``("optimizer", call)``, ``("name", target)`` or ``("", None)``."""
    current = node
    while True:
        parent = facts.parent.get(id(current))
        if isinstance(parent, (cst.BinaryOperation, cst.Element, cst.StarredElement, cst.List, cst.Tuple,
                               cst.DictElement, cst.Dict, cst.Arg)):
            current = parent
            continue
        if isinstance(parent, cst.Call):
            if _optimizer_call(facts, parent):
                return "optimizer", parent
            if dotted(parent.func) in ("itertools.chain", "chain", "list", "tuple"):
                current = parent
                continue
            return "", None
        if isinstance(parent, cst.AssignTarget):
            return "", None
        if isinstance(parent, (cst.Assign, cst.AugAssign)) and current is parent.value:
            target = parent.targets[0].target if isinstance(parent, cst.Assign) else parent.target
            if isinstance(target, cst.Name) and (isinstance(parent, cst.AugAssign) or len(parent.targets) == 1):
                return "name", target
        return "", None


def _feeds_parameters(facts: _File, target: cst.Name) -> bool:
    """The list bound to ``target`` is given to an optimizer or looped over to set ``requires_grad``."""
    chain = facts.chain_of.get(id(_statement_of(facts, target))) or (facts.module,)
    scope = facts.resolve(target.value, chain)
    for use, _ in facts.uses.get((id(scope), target.value), []):
        kind, _ = _sink(facts, use)
        if kind == "optimizer":
            return True
        parent = facts.parent.get(id(use))
        if isinstance(parent, cst.For) and use is parent.iter:
            loop_vars = {dotted(t) for t in _target_names(parent.target)}
            for inner in _expressions(parent.body):
                if (_method(inner) == "requires_grad_" and dotted(inner.func.value) in loop_vars) or (
                        isinstance(inner, cst.AssignTarget) and isinstance(inner.target, cst.Attribute)
                        and inner.target.attr.value == "requires_grad"
                        and dotted(inner.target.value) in loop_vars):
                    return True
    return False


class ListOfTensor(Rule):
    """``list(tensor)`` / ``[*tensor]`` where a list of parameters is built.

    ``list(t)`` iterates ``t``'s first dimension: ``list(model.parameters()) + list(perturbation)`` gives the
    optimizer the *rows* of ``perturbation`` (non-leaf views when it requires grad, which ``optim`` rejects;
    otherwise copies nobody reads), so ``perturbation`` itself is never optimised (seed 000). ``[t]`` was
    meant (the unsafe fix). Reported only when the argument is certainly a tensor (a torch factory,
    ``Variable(...)``, ``nn.Parameter``) and the list goes to an optimizer or to a ``requires_grad_`` loop;
    ``list(model.parameters())``, ``list(loader)``, ``list(range(n))`` are other things.
    """

    code = "TM603"
    name = "list-of-tensor"
    summary = "`list(tensor)` in a parameter list iterates its rows; `[tensor]` was meant"
    kind = "hazard"
    triggers = ("optim", "requires_grad")
    changes = (
        Example(
            "import torch\n\nz = torch.rand(1, 8, requires_grad=True)\n"
            "params = list(model.parameters()) + list(z)\noptimizer = torch.optim.Adam(params, 1e-3)\n",
            "import torch\n\nz = torch.rand(1, 8, requires_grad=True)\n"
            "params = list(model.parameters()) + [z]\noptimizer = torch.optim.Adam(params, 1e-3)\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\nz = torch.zeros(4, 3)\noptimizer = torch.optim.SGD([*z], lr=0.1)\n",
            "import torch\n\nz = torch.zeros(4, 3)\noptimizer = torch.optim.SGD([z], lr=0.1)\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\n\nparams = list(model.parameters()) + list(head.buffers())\n"
        "optimizer = torch.optim.Adam(params, 1e-3)\n",
        "import torch\n\nz = torch.rand(4, 8)\nrows = list(z)\noptimizer = torch.optim.Adam([z], 1e-3)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        flow = _flow(self)
        facts = _file(self)
        for found in flow.tensors.values():
            kind, target = _sink(facts, found)
            if kind == "optimizer" or (kind == "name" and _feeds_parameters(facts, target)):
                self._report(found)

    def _report(self, found: cst.CSTNode) -> None:
        if isinstance(found, cst.Call):
            inner = found.args[0].value
            fix = lambda updated: cst.List([cst.Element(updated.args[0].value)], lpar=updated.lpar,  # noqa: E731
                                           rpar=updated.rpar)
        else:
            inner = found.value
            fix = lambda updated: cst.Element(updated.value, comma=updated.comma)  # noqa: E731
        self.report(found, f"`{_code(found)}` iterates the rows of the tensor `{_code(inner)}`: the optimizer gets "
                           "its rows, never the tensor itself", fix, unsafe=True, hint=f"use `[{_code(inner)}]`")


# ---------------------------------------------------------------------------
# TM604: retain_graph=True on the only backward of a graph
# ---------------------------------------------------------------------------
def _receiver(call: cst.Call, qualified: Optional[str]) -> Optional[cst.CSTNode]:
    if _method(call) == "backward" and qualified not in AUTOGRAD_CALLS:
        return call.func.value
    first = _kwarg(call, "outputs" if qualified == "torch.autograd.grad" else "tensors", 0)
    return first.value if first is not None else None


class RetainGraphPatch(Rule):
    """``retain_graph=True`` on a ``backward()`` that is the only backward of its graph.

    ``retain_graph=True`` is needed when a second ``backward()``/``autograd.grad`` goes through the same
    graph (two losses sharing a forward, a gradient penalty). On the only backward of a graph built fresh each
    iteration it is the patch the seed warns about: it silences "Trying to backward through the graph a second
    time", whose cause is a graph kept from outside the loop (a tensor that should not require grad, a state
    that should be detached), and keeps every graph alive: memory and time grow (seed 000: it no longer fit on
    the GPU). Not reported when the scope has another backward, when the loss comes from the function's
    arguments or ``self``, or when the same loss is back-propagated repeatedly in a loop.
    """

    code = "TM604"
    name = "retain-graph-patch"
    summary = "`retain_graph=True` on the only backward of its graph hides a bug and keeps graphs alive"
    kind = "hazard"
    triggers = ("retain_graph", "retain_variables")
    changes = (
        Example(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
            "    loss.backward(retain_graph=True)\n    optimizer.step()\n"
        ),
        Example(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
            "    loss.backward(retain_variables=True)\n    optimizer.step()\n"
        ),
    )
    keeps = (
        "for x in loader:\n    policy_loss, value_loss = agent(x)\n    optimizer.zero_grad()\n"
        "    policy_loss.backward(retain_graph=True)\n    value_loss.backward()\n    optimizer.step()\n",
        "import torch\n\ny = f(x)\nfor i in range(3):\n"
        "    g, = torch.autograd.grad(y[i], x, retain_graph=True)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = _file(self)
        for call, chain in facts.backwards:
            retain = _kwarg(call, "retain_graph") or _kwarg(call, "retain_variables")  # the 0.3 spelling
            if retain is None or _literal(retain.value) is not True or _kwarg(call, "create_graph") is not None:
                continue
            if any(other is not call and other_chain[0] is chain[0] for other, other_chain in facts.backwards):
                continue
            receiver = _receiver(call, facts.qualname(call.func))
            if receiver is None or self._shared(facts, call, receiver, chain):
                continue
            if _enclosing_loop(facts, call, chain[0]) is not None:
                message = ("`retain_graph=True` on the only backward() of each iteration's graph: it hides a graph "
                           "kept from an earlier iteration and keeps every graph alive (memory and time grow)")
            else:
                message = ("`retain_graph=True` on the only backward() of this graph: nothing back-propagates "
                           "through it again, it only keeps the graph's buffers alive")
            self.report(call, message, hint="find what carries a graph across iterations (a tensor that should "
                                            "not require grad, a state to detach) and drop retain_graph")

    def _shared(self, facts: _File, call: cst.Call, receiver: cst.CSTNode, chain: Chain) -> bool:
        """Whether the graph may be back-propagated again: another backward in this scope, or the loss reads
        a value whose graph was built before the loop (or outside the function) and is reused."""
        scope = chain[0]
        for inner in _expressions(scope.body if not isinstance(scope, cst.Module) else scope):
            if isinstance(inner, cst.Call) and inner is not call and facts.runs_backward(inner):
                return True
        region = _enclosing_loop(facts, call, scope) or scope
        origin = _GraphOrigin(facts, _flow(self), chain, region)
        return any(origin.outside(name) == _GraphOrigin.GRAPH for name in origin.free_names(receiver))


def _enclosing_loop(facts: _File, node: cst.CSTNode, scope: Scope) -> Optional[Union[cst.For, cst.While]]:
    """The innermost loop around ``node`` within its scope."""
    current = facts.parent.get(id(node))
    while current is not None and current is not scope:
        if isinstance(current, (cst.For, cst.While)):
            return current
        current = facts.parent.get(id(current))
    return None


class _GraphOrigin:
    """Where the values a backward reads come from, relative to a region (its loop, or its function).

    A value built inside the region is rebuilt for every backward. One built before it shares its graph with
    every backward unless it has none: data, factories, frozen modules, or tensors whose ``requires_grad`` is
    itself a TM607 finding (the seed: ``style`` makes the Gram matrices of a frozen VGG carry a graph).
    """

    NONE, LEAF, GRAPH = 0, 1, 2
    NO_GRAPH_ATTRS = frozenset({"data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf"})
    SIZE_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "range", "print", "isinstance", "type",
                               "format", "id", "hash", "repr"})

    def __init__(self, facts: _File, flow: _Flow, chain: Chain, region: cst.CSTNode):
        self.facts, self.flow, self.chain, self.region = facts, flow, chain, region
        self.qualname = facts.qualname
        self.uses = _Uses(facts)
        body = region.body if isinstance(region, (cst.For, cst.While, cst.FunctionDef)) else region
        self.inside: Dict[str, List[cst.CSTNode]] = {}
        for node in _expressions(body):
            for target, value in _region_bindings(node):
                for bound in _target_names(target):
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
            if not values or _read_first(self.facts, self.parts, name):
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
                names -= {t.value for t in _target_names(comp.target) if isinstance(t, cst.Name)}
                comp = comp.inner_for_in
        return names

    def _fresh(self, call: cst.Call) -> bool:
        """A call whose result carries no graph from its arguments (factories, sizes, no-grad methods)."""
        qualified = self.qualname(call.func) or ""
        method = _method(call)
        return (_is_factory(qualified) and _kwarg(call, "requires_grad") is None) or (
            isinstance(call.func, cst.Name) and call.func.value in self.SIZE_BUILTINS and qualified == "") or (
            method in NO_GRAD_METHODS or method in SCALAR_METHODS) and qualified == ""

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
        current = self.facts.parent.get(id(node))
        while current is not None:
            if current is self.region:
                return not isinstance(self.region, (cst.FunctionDef, cst.Module))
            current = self.facts.parent.get(id(current))
        return False

    def _statement_sites(self, scope: Scope) -> List[str]:
        return [name for stmt, name in self.facts.requires_grad_statements
                if self.facts.chain_of.get(id(_statement_of(self.facts, stmt)), (None,))[0] is scope]

    def _legit(self, scope: Scope, name: str) -> bool:
        return self.uses.name_outcome(scope, name) != _Uses.NEUTRAL

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
        if _requires_grad_source(self.facts, call):
            return self.LEAF if self._legit(scope, bound) else self.NONE
        if self._fresh(call) or (self.qualname(call.func) or "") in VARIABLE:
            return self.NONE
        args = max((self.status(a.value, scope, bound) for a in call.args), default=self.NONE)
        func = call.func
        qualified = self.qualname(func)
        callee = self.facts.callee(func, self.facts.chain_of.get(id(scope), (scope,)))
        if callee == "module":
            return self.GRAPH if self._trainable(func) or args else self.NONE
        if qualified is not None:
            return (self.GRAPH if args else self.NONE) if qualified.startswith("torch.") else self.GRAPH
        if isinstance(func, cst.Attribute):
            receiver = self.status(func.value, scope, bound)
            if _method(call) in IDENTITY_METHODS:
                return receiver
            return self.GRAPH if receiver or args else (self.GRAPH if _method(call) not in DERIVING_METHODS
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
            if _covers(self.facts.freeze_paths, func.value) or self.facts.freeze_all:
                return False
            for kind, value, _ in self.facts.bindings(func.value, self.chain):
                while _method(value) in MODULE_SELF_METHODS:
                    value = value.func.value
                if kind == "value" and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and (
                        value.func.value in self.facts.module_classes) and self.facts.class_freezes.get(
                        value.func.value):
                    return False
        return not self.facts.frozen(func, self.facts._method_class(self.chain)) if isinstance(
            func, cst.Attribute) else True


def _region_bindings(node: cst.CSTNode) -> Iterator[Tuple[cst.CSTNode, cst.CSTNode]]:
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


# ---------------------------------------------------------------------------
# TM605: anomaly detection left on
# ---------------------------------------------------------------------------
def _test_or_debug(function: cst.FunctionDef) -> bool:
    """A test function, or one named for debugging: autograd checks there are deliberate."""
    name = function.name.value.lower().lstrip("_")
    return name.startswith("test") or any(word in name for word in DEBUG_WORDS)


class AnomalyDetectionOn(Rule):
    """``torch.autograd.set_detect_anomaly(True)`` / ``with torch.autograd.detect_anomaly():`` left on.

    Anomaly mode records a traceback for every autograd node and checks every backward for NaN: training runs
    2-3x slower (seed 002), and any NaN in backward becomes an error. It is a debugging switch; left on in a
    training script it costs every run. Not reported under an ``if`` on a debug/anomaly flag, in a function
    named ``debug*``/``test_*``, with a non-literal flag, or with an explicit ``check_nan=`` (a deliberate,
    configured use). The switch is global: a module-level call in a file without backward (a loss module)
    slows every script that imports it. The unsafe fix turns it off (``set_detect_anomaly(False)``) or
    removes the ``with``.
    """

    code = "TM605"
    name = "anomaly-detection-on"
    summary = "autograd anomaly detection left on for training (2-3x slower)"
    kind = "hazard"
    triggers = ("detect_anomaly",)
    changes = (
        Example(
            "import torch\n\ntorch.autograd.set_detect_anomaly(True)\nloss = model(x).sum()\nloss.backward()\n",
            "import torch\n\ntorch.autograd.set_detect_anomaly(False)\nloss = model(x).sum()\nloss.backward()\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\nfor x in loader:\n    with torch.autograd.detect_anomaly():\n"
            "        loss = model(x).sum()\n        loss.backward()\n",
            "import torch\n\nfor x in loader:\n    loss = model(x).sum()\n    loss.backward()\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\n\nif args.debug:\n    torch.autograd.set_detect_anomaly(True)\n"
        "loss = model(x).sum()\nloss.backward()\n",
        "import torch\n\ntorch.autograd.set_detect_anomaly(args.detect_anomaly)\ntorch.autograd.set_detect_anomaly(False)\n"
        "loss = model(x).sum()\nloss.backward()\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualname(node.func)
        if qualified not in SET_DETECT_ANOMALY:
            return
        flag = _kwarg(node, "mode", 0)
        if flag is None or _literal(flag.value) is not True or _kwarg(node, "check_nan") or self._debug_only():
            return
        fix = lambda updated: updated.with_changes(args=[  # noqa: E731
            a.with_changes(value=cst.Name("False")) if a.keyword is flag.keyword and (
                a.keyword is not None or a is updated.args[0]) else a for a in updated.args])
        self.report(node, "anomaly detection switched on: every backward is 2-3x slower and any NaN raises", fix,
                    unsafe=True, hint="turn it on only while debugging (behind a --debug flag)")

    def visit_With(self, node: cst.With) -> None:
        items = [item for item in node.items if isinstance(item.item, cst.Call)
                 and self.ctx.qualname(item.item.func) in DETECT_ANOMALY and not _kwarg(item.item, "check_nan")]
        if not items or self._debug_only():
            return
        self.report(node, "training under `detect_anomaly()`: every backward is 2-3x slower and any NaN raises",
                    self._unwrap, unsafe=True, hint="use it only while debugging (behind a --debug flag)")

    def _unwrap(self, updated: cst.With) -> Union[cst.With, cst.FlattenSentinel]:
        keep = [item for item in updated.items if not (
            isinstance(item.item, cst.Call) and self.ctx.qualname(item.item.func) in DETECT_ANOMALY)]
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=keep)
        if isinstance(updated.body, cst.SimpleStatementSuite):
            body = [cst.SimpleStatementLine(body=list(updated.body.body))]
        else:
            body = list(updated.body.body)
        body[0] = body[0].with_changes(leading_lines=[*updated.leading_lines, *body[0].leading_lines])
        return cst.FlattenSentinel(body)

    def _debug_only(self) -> bool:
        ancestors = self.ctx.ancestors
        for index, node in enumerate(ancestors):
            if isinstance(node, cst.If) and index + 1 < len(ancestors) and ancestors[index + 1] is not node.test:
                words = [n.value.lower() for n in _expressions(node.test) if isinstance(n, cst.Name)]
                if any(word in w for w in words for word in DEBUG_WORDS):
                    return True
            if isinstance(node, cst.FunctionDef) and _test_or_debug(node):
                return True
        return False


# ---------------------------------------------------------------------------
# TM606: .grad of a non-leaf
# ---------------------------------------------------------------------------
class NonLeafGrad(Rule):
    """Reading ``.grad`` of a tensor that is not a leaf.

    ``backward()`` stores gradients only in leaves (tensors made by the user or parameters). A result of
    an operation (``y = x * 2``, ``out = model(x)``, ``h = w.view(-1)``) has ``grad_fn`` set; its ``.grad``
    stays ``None`` (with a UserWarning), so code that reads it gets ``None`` or crashes on ``None.data`` (seed
    002). Call ``y.retain_grad()`` before backward if that gradient is really wanted, or read the leaf's
    ``.grad``. The classic case: ``w = torch.rand(10, requires_grad=True).cuda()`` names the GPU copy, not the
    leaf. Reported only when the file shows the tensor is computed from one that requires grad (a CPU float32
    factory moved by ``.cuda()``/``.to('cuda')``/``.double()`` is a copy; ``.to(device)`` may not be), and it
    never calls ``retain_grad()`` on it.
    """

    code = "TM606"
    name = "non-leaf-grad"
    summary = "`.grad` of a non-leaf tensor is None (call `retain_grad()` or read the leaf's grad)"
    kind = "hazard"
    triggers = (".grad",)
    changes = (
        Example(
            "import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.sum().backward()\nprint(y.grad)\n"
        ),
        Example(
            "import torch\n\nw = torch.rand(10, requires_grad=True).cuda()\nw.sum().backward()\nprint(w.grad)\n"
        ),
    )
    keeps = (
        "import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.retain_grad()\ny.sum().backward()\n"
        "print(x.grad, y.grad)\n",
        "import torch\n\nfor name, p in model.named_parameters():\n    if p.grad is not None:\n"
        "        print(name, p.grad.norm())\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = _file(self)
        for attribute, name in _flow(self).nonleaf_grads:
            if self._retains(facts, attribute, name):
                continue
            self.report(attribute, f"`{name}` is not a leaf (it is computed from tensors that require grad): "
                                   f"`{name}.grad` is None", hint=f"call `{name}.retain_grad()` before backward, or "
                                                                  "read the gradient of the leaf")

    @staticmethod
    def _retains(facts: _File, attribute: cst.Attribute, name: str) -> bool:
        chain = facts.chain_of.get(id(_statement_of(facts, attribute) or attribute))
        if chain is None:
            current = attribute
            while id(current) not in facts.chain_of:
                current = facts.parent[id(current)]
            chain = facts.chain_of[id(current)]
        scope = facts.resolve(name, chain)
        return any(_method(facts.parent.get(id(facts.parent.get(id(use))))) == "retain_grad"
                   for use, _ in facts.uses.get((id(scope), name), []))


# ---------------------------------------------------------------------------
# TM607: requires_grad on a tensor nothing optimises
# ---------------------------------------------------------------------------
class _Uses:
    """Classifies what happens to a tensor after ``requires_grad`` is set on it.

    ``USED``: its gradient is wanted (``.grad``, a hook, an optimizer, ``torch.autograd``), directly or through
    a value computed from it. ``ESCAPES``: it leaves what the file shows (returned, stored, passed on).
    ``NEUTRAL``: only math, module calls and rebinding. Values computed from it are non-leaves, so for them
    only gradient reads count.
    """

    USED, NEUTRAL, ESCAPES = "used", "neutral", "escapes"
    NO_GRAD_RESULTS = frozenset({"detach", "size", "dim", "numel", "item", "tolist", "numpy", "data_ptr",
                                 "requires_grad_"})

    def __init__(self, facts: _File):
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
        parent = self.facts.parent.get(id(node))
        if isinstance(parent, cst.Attribute) and parent.value is node:
            grand = self.facts.parent.get(id(parent))
            if isinstance(grand, cst.AssignTarget):
                return self.NEUTRAL  # x.requires_grad = True, x.grad = None
            if parent.attr.value in GRAD_READERS:
                return self.USED
            if not (isinstance(grand, cst.Call) and grand.func is parent):
                return self.NEUTRAL  # .shape, .data, .requires_grad, .device
            method = parent.attr.value
            if method in self.NO_GRAD_RESULTS:
                return self.NEUTRAL if method != "requires_grad_" else self.use(grand, name, chain, depth, derived)
            return self.use(grand, name, chain, depth, derived or method not in IDENTITY_METHODS)
        if isinstance(parent, cst.Arg):
            call = self.facts.parent.get(id(parent))
            return self._argument(call, parent, name, chain, depth, derived) if isinstance(call, cst.Call) else other
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)) or (
                isinstance(parent, cst.Subscript) and parent.value is node):
            return self.use(parent, name, chain, depth, True)
        if isinstance(parent, cst.CompFor) and parent.iter is node:
            comprehension = parent
            while not isinstance(comprehension, COMPREHENSIONS):
                comprehension = self.facts.parent.get(id(comprehension))
            return self.use(comprehension, name, chain, depth, True)
        if isinstance(parent, cst.IfExp) and node is not parent.test:
            return self.use(parent, name, chain, depth, derived)
        if isinstance(parent, (cst.Index, cst.SubscriptElement)):
            return other  # a key: grads[t] reads its gradient from a dict
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.IfExp,
                               cst.FormattedStringExpression, cst.Expr, cst.Del)):
            return self.NEUTRAL
        if isinstance(parent, (cst.Assign, cst.AugAssign)) and parent.value is node:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            if not all(isinstance(t, cst.Name) for t in targets):
                return other
            outcomes = {self.NEUTRAL if t.value == name and not isinstance(parent, cst.AugAssign) else
                        self.name_outcome(self.facts.resolve(t.value, chain), t.value, depth + 1, derived)
                        for t in targets}
            return self.USED if self.USED in outcomes else (other if self.ESCAPES in outcomes else self.NEUTRAL)
        return other

    def _argument(self, call: cst.Call, arg: cst.Arg, name: str, chain: Chain, depth: int, derived: bool) -> str:
        other = self.NEUTRAL if derived else self.ESCAPES
        qualified = self.qualname(call.func)
        if (qualified or "").startswith(GRAD_CONSUMERS) or _optimizer_call(
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
            matches = [p for p in _params(function.params) if p.name.value == arg.keyword.value]
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            matches = [params[index]] if index < len(params) else []
        if len(matches) != 1:
            return self.ESCAPES
        return self.name_outcome(function, matches[0].name.value, depth + 1, derived)


class UnusedRequiresGrad(Rule):
    """``requires_grad`` set on a tensor that nothing optimises or differentiates with respect to.

    The seed's bug (000): migrating ``style = Variable(style.repeat(...)).cuda()`` by hand into
    ``style.repeat(...).to(device).requires_grad_(True)``. ``style`` is not in any optimizer, its ``.grad`` is
    never read, it is not an input of ``torch.autograd.grad``; but the features computed from it once, before
    the training loop, now carry a graph. The first ``backward()`` frees it and the second fails: "Trying to
    backward through the graph a second time" (and with ``retain_graph=True``: memory and time grow). Even
    without that, every backward computes a gradient nobody reads. Reported when every use of the tensor in
    its scope is math, a module call or a rebinding; any other use (returned, stored, passed to an unknown
    function, put in a container) keeps it quiet. The unsafe fix drops the ``requires_grad``.
    """

    code = "TM607"
    name = "unused-requires-grad"
    summary = "`requires_grad` on a tensor no optimizer or autograd.grad uses: wasted work, shared-graph errors"
    kind = "hazard"
    triggers = ("requires_grad",)
    changes = (
        Example(
            "import torch\n\nstyle = torch.rand(1, 3, 8, 8).requires_grad_(True)\nvgg = Vgg16()\n"
            "style_features = vgg(style)\n",
            "import torch\n\nstyle = torch.rand(1, 3, 8, 8)\nvgg = Vgg16()\nstyle_features = vgg(style)\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\n\ndef main():\n    target = torch.zeros(4, requires_grad=True)\n"
            "    loss = ((model(x) - target) ** 2).mean()\n    loss.backward()\n",
            "import torch\n\n\ndef main():\n    target = torch.zeros(4)\n"
            "    loss = ((model(x) - target) ** 2).mean()\n    loss.backward()\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\n\nz = torch.zeros(4, requires_grad=True)\noptimizer = torch.optim.Adam([z], 0.1)\n",
        "import torch\n\nx = images.clone().requires_grad_(True)\nloss = model(x).sum()\nloss.backward()\n"
        "adv = x + 0.1 * x.grad.sign()\n",
        "import torch\n\ninterp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)\nd = critic(interp)\n"
        "g = torch.autograd.grad(d.sum(), interp, create_graph=True)[0]\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = _file(self)
        uses = _Uses(facts)
        for (scope_id, name), binds in facts.binds.items():
            scope = facts.scopes[scope_id]
            if isinstance(scope, (cst.ClassDef, cst.Lambda)) or any(k == "param" for k, _, _ in binds) or (
                    isinstance(scope, cst.FunctionDef) and _test_or_debug(scope)):
                continue
            for kind, value, where in binds:
                site = self._set_site(facts, kind, value, where)
                if site is not None and uses.name_outcome(scope, name) == _Uses.NEUTRAL:
                    self._report(site, name)
        for stmt_node, name in facts.requires_grad_statements:
            stmt = _statement_of(facts, stmt_node)
            chain = facts.chain_of.get(id(stmt)) if stmt is not None else None
            if chain is None:
                continue
            scope = facts.resolve(name, chain)
            binds = facts.binds.get((id(scope), name), [])
            if scope is not chain[0] or not binds or any(k not in ("value",) for k, _, _ in binds) or (
                    isinstance(scope, cst.FunctionDef) and _test_or_debug(scope)):
                continue
            if uses.name_outcome(scope, name) == _Uses.NEUTRAL:
                fix = (lambda updated: cst.RemoveFromParent()) if not _sole_in_block(facts, stmt) else None
                self.report(stmt, self._message(name), fix, unsafe=True, hint=self._hint(name))

    @staticmethod
    def _set_site(facts: _File, kind: str, value, where) -> Optional[cst.Call]:
        """The call that makes ``name = <value>`` require grad (not a Parameter: modules optimise those)."""
        if kind != "value" or not isinstance(where, cst.Assign) or len(where.targets) != 1 or not isinstance(
                where.targets[0].target, cst.Name):
            return None
        if _method(value) == "requires_grad_":
            flag = _kwarg(value, "requires_grad", 0)
            return value if flag is None or _literal(flag.value) is True else None
        if isinstance(value, cst.Call):
            qualified = facts.qualname(value.func) or ""
            flag = _kwarg(value, "requires_grad")
            if (_is_factory(qualified) or qualified in VARIABLE) and flag is not None and _literal(
                    flag.value) is True:
                return value
        return None

    def _report(self, site: cst.Call, name: str) -> None:
        if _method(site) == "requires_grad_":
            fix = lambda updated: updated.func.value  # noqa: E731
        else:
            fix = lambda updated: _without_arg(updated, "requires_grad")  # noqa: E731
        self.report(site, self._message(name), fix, unsafe=True, hint=self._hint(name))

    @staticmethod
    def _message(name: str) -> str:
        return (f"`{name}` requires grad but nothing optimises it or differentiates with respect to it: every "
                "backward computes its gradient for nothing, and values computed from it once (before a loop) "
                "make the second backward fail ('Trying to backward through the graph a second time')")

    @staticmethod
    def _hint(name: str) -> str:
        return f"drop requires_grad on `{name}` (a Variable without requires_grad=True becomes the plain tensor)"


# ---------------------------------------------------------------------------
# TM608: require_grad typo
# ---------------------------------------------------------------------------
TYPOS = {"require_grad": "requires_grad", "require_grad_": "requires_grad_"}


class RequiresGradTypo(Rule):
    """``require_grad`` / ``require_grad_`` (missing ``s``).

    ``t.require_grad_(True)`` is an AttributeError only when that line runs (seed 000's hand migration);
    ``t.require_grad = True`` silently sets an unused attribute, so the tensor never requires grad;
    ``torch.zeros(3, require_grad=True)`` is a TypeError at run time. The unsafe fix spells it
    ``requires_grad``; not reported in a file that defines its own ``require_grad`` attribute or parameter.
    """

    code = "TM608"
    name = "requires-grad-typo"
    summary = "`require_grad` is not a PyTorch name: `requires_grad` / `requires_grad_`"
    kind = "hazard"
    triggers = ("require_grad",)
    changes = (
        Example("import torch\n\nx = torch.rand(3).require_grad_(True)\n",
                "import torch\n\nx = torch.rand(3).requires_grad_(True)\n", unsafe=True),
        Example("import torch\n\nw = torch.zeros(3)\nw.require_grad = True\n",
                "import torch\n\nw = torch.zeros(3)\nw.requires_grad = True\n", unsafe=True),
        Example("import torch\n\nw = torch.zeros(3, require_grad=True)\n",
                "import torch\n\nw = torch.zeros(3, requires_grad=True)\n", unsafe=True),
    )
    keeps = (
        "class Block:\n    def __init__(self, require_grad=False):\n        self.require_grad = require_grad\n\n"
        "    def freeze(self):\n        return not self.require_grad\n",
        "import torch\n\nx = torch.rand(3).requires_grad_(True)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.own = _file(self).defines_typo

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in TYPOS and not self.own:
            fix = lambda updated: updated.with_changes(attr=cst.Name(TYPOS[updated.attr.value]))  # noqa: E731
            self.report(node, f"`{node.attr.value}` is not a tensor attribute (`{TYPOS[node.attr.value]}` is)", fix,
                        unsafe=True, hint=f"spell it `{TYPOS[node.attr.value]}`")

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None or node.keyword.value != "require_grad" or self.own:
            return
        call = self.ctx.parent(1)
        qualified = self.ctx.qualname(call.func) if isinstance(call, cst.Call) else None
        if qualified and (_is_factory(qualified) or qualified in VARIABLE or qualified in PARAMETER):
            fix = lambda updated: updated.with_changes(keyword=cst.Name("requires_grad"))  # noqa: E731
            self.report(node, "`require_grad=` is not a keyword of torch factories (`requires_grad=` is)", fix,
                        unsafe=True, hint="spell it `requires_grad=`")


RULES = [RecurrentStateNotDetached, InplaceOnLeaf, ListOfTensor, RetainGraphPatch, AnomalyDetectionOn, NonLeafGrad,
         UnusedRequiresGrad, RequiresGradTypo]
