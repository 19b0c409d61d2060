"""TM5xx: behaviour changes after 0.4 that still break legacy training scripts on current PyTorch.

Removing ``Variable`` is not enough: between 0.4 and 2.x defaults and semantics
changed again (``torch.load`` loads weights only, ``torch.full`` infers its
dtype, ``/`` on integer tensors divides truly, masks are ``bool``, schedulers
step after the optimizer, torchvision renamed its transforms). Each rule keeps
the legacy meaning where it is certain and reports where it is not.

The rules see one file at a time, so "what a value is" is decided from that
file alone (``_Facts``): a name's bindings in its scope (flow-insensitive),
names used as modules (``.eval()``, ``.train()``, ``.parameters()`` ...), the
file's ``torch.save`` calls and its argparse defaults. ``BEHAVIOUR_CHANGES`` is
the table of every change checked on torch 2.13 by the scripts in
``tests/rules/legacy_behaviour/`` and how the tool handles it.
"""
from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemods.base import Example, FileContext, Rule
from codemods.names import dotted
from codemods.walk import children, visit
from codemods.torchapi import INDEX_RESULTS, MODULE_METHODS, NOT_MODULES, PARAMETERLESS_MODULES, PERMUTING_METHODS


def _change(change: str, version: str, handling: str, script: str) -> Dict[str, str]:
    """A ``BEHAVIOUR_CHANGES`` row; ``script`` (in tests/rules/legacy_behaviour/) shows it on current torch."""
    return {"change": change, "version": version, "handling": handling, "script": script}


# handling: a rule code, "harness compat", or "not handled: <why>".
BEHAVIOUR_CHANGES: Tuple[Dict[str, str], ...] = (
    _change("`torch.load` defaults to `weights_only=True` and refuses pickled modules, optimizers, "
            "`argparse.Namespace` and numpy values (state dicts, tensors and plain containers still load)",
            "2.6", "TM501", "load_weights_only.py"),
    _change("`torch.full(size, <int or bool>)` returns int64/bool instead of the default float dtype "
            "(e.g. BCELoss then fails: 'Found dtype Long but expected Float')",
            "1.7 (1.5 warned, 1.6 raised)", "TM502", "full_dtype.py"),
    _change("`.numpy()` on a tensor that requires grad raises (0.3 code called it on `.data`)",
            "0.4", "TM503", "numpy_requires_grad.py"),
    _change("`/` and `torch.div` on integer tensors divide truly (they truncated toward zero); "
            "`t /= 2` on an integer tensor raises; `//` floors (it truncated until 1.13)",
            "1.7 (1.5 warned, 1.6 raised)", "TM504", "integer_division.py"),
    _change("uint8 masks: `masked_fill(_)`, `masked_select`, `masked_scatter` and `x[mask] = v` raise; "
            "`x[mask]` and `torch.where` only warn", "1.2 deprecated, later removed", "TM505",
            "uint8_masks.py"),
    _change("`lr_scheduler.step()` before `optimizer.step()`: the constructor already sets the first "
            "lr, so stepping at the top of the epoch shifts the whole schedule one epoch early",
            "1.1", "TM506", "scheduler_order.py"),
    _change("torchvision `transforms.Scale`/`RandomSizedCrop` removed; `make_grid`/`save_image` "
            "`range=` is `value_range=`; `pretrained=True` still works with a warning and maps to the "
            "`*_Weights.IMAGENET1K_V1` enum", "torchvision 0.13-0.28", "TM507", "torchvision_renames.py"),
    _change("`F.grid_sample`/`F.affine_grid` default `align_corners` changed from True to False "
            "(values differ; a warning on every call)", "1.3", "TM508", "grid_sample_align.py"),
    _change("numpy aliases of builtins `np.float`, `np.int`, `np.object`, `np.str`, `np.complex`, "
            "`np.unicode` removed (numpy 1.24; torch 2.13 runs on numpy 2)", "numpy 1.24", "TM509",
            "numpy_aliases.py"),
    _change("legacy autograd `Function` with a non-static `forward` (called as `MyFn()(x)`) raises",
            "1.3 (deprecated since 0.4)", "TM510", "legacy_autograd_function.py"),
    _change("elementwise results (comparisons, arithmetic, conversions) keep the layout of a transposed input "
            "instead of being contiguous: `.view()` of them raises 'view size is not compatible with input tensor's "
            "size and stride' (the ImageNet `accuracy()`'s `correct[:k].view(-1)`)", "1.7 (pytorch/examples#836)",
            "TM511", "view_non_contiguous.py"),
    _change("comparison results are `bool`, not uint8: `1 - (x > 0)` and `-(x > 0)` raise, "
            "`(a > 0) + (b > 0)` is a logical or", "1.2",
            "not handled: the legacy uint8 arithmetic has no short exact spelling; TM505 covers masks",
            "bool_comparisons.py"),
    _change("`torch.arange` of integers returns int64 (a FloatTensor in 0.3 and 0.4.0): in-place float "
            "ops, `.mean()` and `requires_grad` on it raise", "0.4.1",
            "not handled: 0.4.1+ code relies on the int64 result (indexing), the era is not visible",
            "arange_dtype.py"),
    _change("`torch.randint` returns int64 (float in 0.4.x)", "1.0",
            "not handled: 0.4-era code converted it explicitly; 1.0+ code relies on int64",
            "arange_dtype.py"),
    _change("`.mean()` of an integer tensor raises ('could not infer output dtype')", "1.x",
            "not handled: the legacy integer mean is not known exactly", "arange_dtype.py"),
    _change("`torch.set_default_tensor_type` is deprecated (still works, warns)", "2.1",
            "not handled: still works", "removed_apis.py"),
    _change("`torch.gels`, `torch.rfft` removed; `torch.stft` needs `return_complex`", "1.2-2.0",
            "not handled: renamed/removed functions are TM4xx's", "removed_apis.py"),
    _change("`torch.utils.serialization.load_lua`, `torch.legacy`, `torch.utils.trainer`, "
            "`dataloader.DataLoaderIter` removed", "1.0", "not handled: no replacement in torch",
            "removed_apis.py"),
    _change("unchanged, checked: `torch.cat` with an empty 1-D tensor, `index_add_`, `nonzero()` shape, "
            "`Tensor.type()` strings, `torch.norm`, `sum()` of uint8 (int64), `pin_memory` without GPU "
            "(warns), `nn.DataParallel` on CPU, `register_backward_hook`", "-",
            "nothing to do", "unchanged_apis.py"),
)


# ---------------------------------------------------------------------------
# What one file tells about its values
# ---------------------------------------------------------------------------
Binding = Tuple[str, Optional[cst.CSTNode], Tuple[cst.CSTNode, ...]]  # (kind, expression, scope chain)

MODULE_CONTAINERS = ("torch.nn.", "torchvision.models.")
SCHEDULER_PREFIX = "torch.optim.lr_scheduler."
INT_DTYPES = frozenset({"long", "int64", "int", "int32", "short", "int16", "int8", "uint8"})
INT_TENSOR_TYPES = frozenset({"LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor"})
INT_CASTS = frozenset({"long", "int", "short", "char", "byte"})
# Methods whose result keeps the receiver's dtype.
SAME_DTYPE_METHODS = frozenset({"view", "view_as", "reshape", "squeeze", "unsqueeze", "expand", "expand_as",
                                "repeat", "t", "transpose", "permute", "contiguous", "clone", "cpu", "cuda", "narrow",
                                "flip", "zero_", "fill_", "masked_fill_", "index_fill_", "scatter_"})
# Methods whose result can never require grad.
NO_GRAD_METHODS = frozenset({"detach", "numpy", "item", "tolist", "size", "dim", "long", "int", "short", "char",
                             "byte", "bool", "argmax", "argmin", "eq", "ne", "gt", "lt", "ge", "le", "nonzero",
                             "data_ptr", "numel", "isnan", "isinf", "logical_not", "all", "any"})


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _arg(call: cst.Call, index: int, keyword: str) -> Optional[cst.Arg]:
    """The argument at positional ``index`` or named ``keyword``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index] if index < len(positional) else None


def _has_keyword(call: cst.Call, *names: str) -> bool:
    return any(a.star == "**" or (a.keyword is not None and a.keyword.value in names) for a in call.args)


def _method(node: cst.CSTNode) -> Optional[str]:
    """``attr`` for a call ``x.attr(...)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _string(node: Optional[cst.CSTNode]) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _int_literal(node: cst.CSTNode) -> Optional[int]:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = _int_literal(node.expression)
        if inner is None:
            return None
        return -inner if isinstance(node.operator, cst.Minus) else inner
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    return None


def _scope_chain(ancestors: Sequence[cst.CSTNode]) -> Tuple[cst.CSTNode, ...]:
    """Innermost first: the enclosing functions, then the module (class bodies are not scopes for methods)."""
    return tuple(n for n in reversed(ancestors) if isinstance(n, (cst.FunctionDef, cst.Module)))


def _enclosing_class(ancestors: Sequence[cst.CSTNode]) -> Optional[cst.ClassDef]:
    return next((n for n in reversed(ancestors) if isinstance(n, cst.ClassDef)), None)


class _Facts(cst.CSTVisitor):
    """One walk over the file: bindings per scope, module evidence, saves, argparse defaults."""

    def __init__(self, ctx: FileContext):
        super().__init__()
        module = ctx.module
        self.qualname = ctx.qualname
        self.stack: List[cst.CSTNode] = []
        self.bindings: Dict[Tuple[int, str], List[Binding]] = {}
        self.module_names: Set[str] = set()  # dotted names used as nn.Modules
        self.called_names: Set[str] = set()
        self.state_dict_args: Set[str] = set()  # names passed to ``.load_state_dict(...)``
        self.saves: List[Tuple[cst.Call, Tuple[cst.CSTNode, ...]]] = []
        self.argparse_defaults: Dict[str, cst.CSTNode] = {}
        self.functions: Dict[str, cst.FunctionDef] = {}
        self.returns: Dict[int, List[Tuple[cst.CSTNode, Tuple[cst.CSTNode, ...]]]] = {}  # id(function) -> values
        self.makes_uint8 = False  # the file builds uint8 tensors somewhere
        self.module_classes: Set[str] = set()
        self._class_bases: Dict[str, List[cst.CSTNode]] = {}
        visit(module, self)
        self._close_module_classes()

    # -- collection -----------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        handler = getattr(self, f"visit_{type(node).__name__}", None)
        if handler is not None:
            handler(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _bind(self, target: cst.CSTNode, kind: str, value: Optional[cst.CSTNode], chain=None) -> None:
        chain = chain if chain is not None else _scope_chain(self.stack)
        if isinstance(target, cst.Name):
            self.bindings.setdefault((id(chain[0]), target.value), []).append((kind, value, chain))
        elif isinstance(target, cst.Attribute) and dotted(target) and dotted(target).startswith("self."):
            owner = _enclosing_class(self.stack)
            if owner is not None:
                self.bindings.setdefault((id(owner), dotted(target)), []).append((kind, value, chain))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, "unknown", None, chain)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, "unknown", None, chain)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, "value", node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, "value", node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, "aug", node)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, "for", node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, "with", node.item)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.setdefault(node.name.value, node)
        chain = (node,) + _scope_chain(self.stack[:-1])
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self._bind(param.name, "param", param.default, chain)

    def visit_Return(self, node: cst.Return) -> None:
        chain = _scope_chain(self.stack)
        if node.value is not None and isinstance(chain[0], cst.FunctionDef):
            self.returns.setdefault(id(chain[0]), []).append((node.value, chain))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_bases[node.name.value] = [base.value for base in node.bases]
        if any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in node.body.body):
            self.module_classes.add(node.name.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            name = dotted(func.value)
            if name and func.attr.value in MODULE_METHODS:
                self.module_names.add(name)
            if func.attr.value == "load_state_dict" and node.args and dotted(node.args[0].value):
                self.state_dict_args.add(dotted(node.args[0].value))
        elif isinstance(func, cst.Name):
            self.called_names.add(func.value)
        qualified = self.qualname(func)
        last = (qualified or "").rpartition(".")[2]
        if last == "ByteTensor" or _method(node) == "byte" or any(
                a.keyword is not None and a.keyword.value == "dtype" and dotted(a.value) and
                dotted(a.value).endswith("uint8") for a in node.args):
            self.makes_uint8 = True
        if qualified == "torch.save" and node.args:
            self.saves.append((node, _scope_chain(self.stack)))
        if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
            self._argparse(node)

    def _argparse(self, node: cst.Call) -> None:
        flags = [_string(a.value) for a in node.args if a.keyword is None]
        flags = [f for f in flags if f]
        dest = _arg(node, 99, "dest")
        default = _arg(node, 99, "default")
        if default is None:
            return
        name = _string(dest.value) if dest is not None else None
        if name is None:
            longs = [f for f in flags if f.startswith("--")] or flags
            if not longs:
                return
            name = longs[0].lstrip("-").replace("-", "_")
        self.argparse_defaults[name] = default.value

    def _close_module_classes(self) -> None:
        changed = True
        while changed:
            changed = False
            for name, bases in self._class_bases.items():
                if name in self.module_classes:
                    continue
                for base in bases:
                    qualified = self.qualname(base) or ""
                    if qualified.startswith(MODULE_CONTAINERS) or dotted(base) in self.module_classes:
                        self.module_classes.add(name)
                        changed = True
                        break

    # -- queries ---------------------------------------------------------------
    def lookup(self, node: cst.CSTNode, chain: Tuple[cst.CSTNode, ...],
               owner: Optional[cst.ClassDef] = None) -> Optional[List[Binding]]:
        """The bindings ``node`` (a Name, or ``self.x``) can refer to, innermost scope that binds it."""
        name = dotted(node)
        if name is None:
            return None
        if name.startswith("self.") and owner is not None:
            return self.bindings.get((id(owner), name))
        if not isinstance(node, cst.Name):
            return None
        for scope in chain:
            found = self.bindings.get((id(scope), name))
            if found is not None:
                return found
        return None

    def is_module_constructor(self, call: cst.CSTNode) -> Optional[bool]:
        """True/False for a call that builds an nn.Module (with/without parameters), None if it does not."""
        if not isinstance(call, cst.Call):
            return None
        qualified = self.qualname(call.func) or ""
        last = qualified.rpartition(".")[2]
        if (qualified.startswith("torch.nn.") and last[:1].isupper() and last != "Parameter"
                and not qualified.startswith(NOT_MODULES)):
            return last not in PARAMETERLESS_MODULES and not last.endswith("Loss")
        if qualified.startswith("torchvision.models.") or (
                isinstance(call.func, cst.Name) and call.func.value in self.module_classes):
            return True
        return None


def facts(rule: Rule) -> _Facts:
    """The file's facts, built once per file and shared by every TM5xx rule."""
    return rule.ctx.analysis(_Facts)


class _Evaluator:
    """Answers "what can this expression be" in the scope where it occurs, from the file's facts."""

    def __init__(self, rule: Rule, ancestors: Sequence[cst.CSTNode]):
        self.facts = facts(rule)
        self.qualname = rule.ctx.qualname
        self.chain = _scope_chain(ancestors)
        self.owner = _enclosing_class(ancestors)
        self.memo: Dict[Tuple[str, int], object] = {}

    def _over_bindings(self, purpose: str, node: cst.CSTNode, chain, default, combine: Callable[[List[Binding]], object]):
        """``combine`` over the bindings of the variable ``node`` names, memoized (cycles give ``default``);
        None when ``node`` is not a bound variable."""
        bound = self.facts.lookup(node, chain, self.owner)
        if not bound:
            return None
        key = (purpose, id(bound))
        if key not in self.memo:
            self.memo[key] = default
            self.memo[key] = combine(bound)
        return self.memo[key]

    # -- modules ----------------------------------------------------------------
    def is_module(self, node: cst.CSTNode, chain=None) -> bool:
        chain = chain or self.chain
        name = dotted(node)
        if name is not None and name in self.facts.module_names:
            return True
        if self.facts.is_module_constructor(node):
            return True
        if isinstance(node, (cst.Name, cst.Attribute)):
            called = isinstance(node, cst.Name) and node.value in self.facts.called_names
            return bool(self._over_bindings("module", node, chain, False, lambda bound: any(
                (k == "value" and (self.is_module(v, c) or (called and self._loads(v))))
                or (k == "for" and _method(v) in ("modules", "children")) for k, v, c in bound)))
        return False

    def _loads(self, node: cst.CSTNode) -> bool:
        """``torch.load(...)`` (possibly moved): a called, loaded object is a whole pickled module."""
        while _method(node) in ("to", "cuda", "cpu", "float", "double", "half"):
            node = node.func.value
        return isinstance(node, cst.Call) and self.qualname(node.func) == "torch.load"

    # -- gradients ----------------------------------------------------------------
    def may_require_grad(self, node: cst.CSTNode, chain=None) -> bool:
        chain = chain or self.chain
        if isinstance(node, (cst.Name, cst.Attribute)):
            if isinstance(node, cst.Attribute):
                if node.attr.value in ("data", "grad", "shape", "dtype", "device"):
                    return False
                owner = node.value
                if node.attr.value in ("weight", "bias") and (self.is_module(owner, chain) or (
                        isinstance(owner, cst.Attribute) and self.is_module(owner.value, chain))):
                    return True  # a parameter of a module or of one of its submodules
            found = self._over_bindings("grad", node, chain, False, lambda bound: any(
                (kind == "value" and self.may_require_grad(value, at))
                or (kind == "for" and _method(value) in ("parameters", "named_parameters"))
                or (kind == "aug" and self.may_require_grad(value.value, at)) for kind, value, at in bound))
            if found is None:
                return isinstance(node, cst.Attribute) and node.attr.value == "T" and self.may_require_grad(
                    node.value, chain)
            return bool(found)
        if isinstance(node, cst.Call):
            return self._call_requires_grad(node, chain)
        if isinstance(node, cst.BinaryOperation):
            return self.may_require_grad(node.left, chain) or self.may_require_grad(node.right, chain)
        if isinstance(node, cst.UnaryOperation):
            return self.may_require_grad(node.expression, chain)
        if isinstance(node, cst.Subscript):
            index = node.slice[0].slice if len(node.slice) == 1 else None
            if (isinstance(index, cst.Index) and _int_literal(index.value) == 1
                    and _method(node.value) in INDEX_RESULTS):
                return False
            return self.may_require_grad(node.value, chain)
        if isinstance(node, cst.IfExp):
            return self.may_require_grad(node.body, chain) or self.may_require_grad(node.orelse, chain)
        return False

    def _call_requires_grad(self, node: cst.Call, chain) -> bool:
        if any(a.keyword is not None and a.keyword.value == "requires_grad"
               and not (isinstance(a.value, cst.Name) and a.value.value == "False") for a in node.args):
            return True
        method = _method(node)
        if method is not None:
            if method in NO_GRAD_METHODS:
                return False
            if method == "requires_grad_":
                return True
        qualified = self.qualname(node.func) or ""
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return True
        parameters = self.facts.is_module_constructor(node)
        if parameters is not None:
            return False  # building a module, not calling it
        args = [a.value for a in node.args]
        if self.is_module(node.func, chain):
            if isinstance(node.func, (cst.Name, cst.Attribute)):
                for kind, value, _ in self.facts.lookup(node.func, chain, self.owner) or ():
                    if kind == "value" and self.facts.is_module_constructor(value) is False:
                        return any(self.may_require_grad(a, chain) for a in args)
            return True
        if method is not None:
            return self.may_require_grad(node.func.value, chain) or any(self.may_require_grad(a, chain) for a in args)
        if qualified.startswith("torch."):
            return any(self.may_require_grad(a, chain) for a in args)
        return False

    # -- dtypes -------------------------------------------------------------------
    def dtype_kind(self, node: cst.CSTNode, chain=None) -> str:
        """"int" (integer tensor in every legacy version), "uint8", "scalar" (Python int), "float" or "unknown"."""
        chain = chain or self.chain
        if _int_literal(node) is not None:
            return "scalar"
        if isinstance(node, cst.Float):
            return "float"
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self._over_bindings("dtype", node, chain, "same", self._bindings_dtype) or "unknown"
        if isinstance(node, cst.Call):
            return self._call_dtype(node, chain)
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Modulo)):
            kinds = {self.dtype_kind(node.left, chain), self.dtype_kind(node.right, chain)}
            if kinds <= {"int", "scalar", "same"}:  # "same": the variable being resolved (x = x + 1)
                return next(k for k in ("int", "same", "scalar") if k in kinds)
            return "unknown"
        return "unknown"

    def _bindings_dtype(self, bound: List[Binding]) -> str:
        kinds = set()
        for kind, value, at in bound:
            if kind == "value":
                kinds.add(self.dtype_kind(value, at))
            elif kind == "aug" and isinstance(value.operator, (cst.AddAssign, cst.SubtractAssign,
                                                               cst.MultiplyAssign, cst.ModuloAssign)):
                kinds.add("same")  # keeps the target's dtype
            elif kind == "aug" and isinstance(value.operator, cst.DivideAssign):
                kinds.add("divided")  # in place on a tensor; a Python int becomes a float
            else:
                kinds.add("unknown")
        if "divided" in kinds and kinds & {"scalar", "unknown"}:
            return "unknown"
        kinds -= {"same", "divided"}
        return kinds.pop() if len(kinds) == 1 else "unknown"

    def _call_dtype(self, node: cst.Call, chain) -> str:
        qualified = self.qualname(node.func) or ""
        last = qualified.rpartition(".")[2]
        if qualified in ("len", "int") or (isinstance(node.func, cst.Name) and node.func.value == "len"):
            return "scalar"
        if qualified.startswith(("torch.", "torch.cuda.")) and last in INT_TENSOR_TYPES:
            return "uint8" if last == "ByteTensor" else "int"
        dtype = _arg(node, 99, "dtype")
        if dtype is not None and qualified.startswith("torch."):
            spelled = (self.qualname(dtype.value) or "").rpartition(".")[2]
            return "uint8" if spelled == "uint8" else "int" if spelled in INT_DTYPES else "unknown"
        if qualified in ("torch.randperm", "torch.multinomial", "torch.nonzero"):
            return "int"
        method = _method(node)
        if method in INT_CASTS and not node.args:
            return "uint8" if method == "byte" else "int"
        if method == "type" and node.args:
            spelled = _string(node.args[0].value) or self.qualname(node.args[0].value) or ""
            last = spelled.rpartition(".")[2]
            return "uint8" if last == "ByteTensor" else "int" if last in INT_TENSOR_TYPES else "unknown"
        if method in SAME_DTYPE_METHODS:
            return self.dtype_kind(node.func.value, chain)
        if method == "size" and node.args:
            return "scalar"
        function = self.facts.functions.get(dotted(node.func) or "") if isinstance(node.func, cst.Name) else None
        if function is not None and self.qualname(node.func) is None:
            key = ("returns", id(function))
            if key not in self.memo:
                self.memo[key] = "unknown"  # while its returns are read: a recursive call is unknown
                kinds = {self.dtype_kind(value, at) for value, at in self.facts.returns.get(id(function), [])}
                self.memo[key] = kinds.pop() if len(kinds) == 1 else "unknown"
            return self.memo[key]
        return "unknown"


def _spell(rule: Rule, qualified: str) -> str:
    """How the file can spell ``qualified`` (importing its top module if needed)."""
    local = rule.ctx.imports.local_name(qualified)
    if local is None:
        rule.ctx.add_import(qualified.split(".")[0])
        local = qualified
    return local


def _attr_call(receiver: cst.BaseExpression, name: str, args: Sequence[cst.Arg] = ()) -> cst.Call:
    """``receiver.name(args)``, parenthesizing the receiver when it is not a primary expression."""
    if not isinstance(receiver, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not receiver.lpar:
        receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=list(args))


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _append_keyword(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` with ``arg`` added last, keeping a trailing comma and multi-line layout."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg])
    last_comma = args[-1].comma
    if last_comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return call.with_changes(args=[*args, arg])
    between = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args[-1] = args[-1].with_changes(comma=between)
    return call.with_changes(args=[*args, arg.with_changes(comma=last_comma)])


def _calls_in(node: cst.CSTNode, predicate: Callable[[cst.Call], bool]) -> List[cst.Call]:
    """The calls under ``node`` (pre-order) that satisfy ``predicate``."""
    found: List[cst.Call] = []

    class _Collect(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if predicate(call):
                found.append(call)

    visit(node, _Collect())
    return found


def _statement(ancestors: Sequence[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """The innermost statement that can carry a comment line above it."""
    return next((n for n in reversed(ancestors) if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement))),
                None)


# ---------------------------------------------------------------------------
# TM501 torch.load
# ---------------------------------------------------------------------------
_SAVED_RANK = {"safe": 0, "unknown": 1, "other": 2, "module": 2}


class LoadWeightsOnly(Rule):
    """``torch.load`` defaults to ``weights_only=True`` since PyTorch 2.6.

    It refuses whole pickled models (``torch.save(model)``), optimizers,
    ``argparse.Namespace`` and numpy values, which every legacy checkpoint
    script loaded with plain pickle. Where the file shows that the load reads
    such an object (the loaded value is used as a module, or this file writes
    the same path with ``torch.save`` of a module or another object), the legacy
    behaviour is kept explicitly with a comment; a load used as a state dict is
    left alone; a file this file writes with anything but a state dict, tensors
    or plain values is the project's own and keeps full unpickling; any other
    load is reported, never weakened silently.

    "This file writes the path" means: the ``torch.save`` path and the
    ``torch.load`` path share the same expression, variable, string literal
    (normalized), argparse default (``args.save`` with ``default='model.pt'``),
    or ``open(...)`` target.
    """

    code = "TM501"
    min_torch = "1.13"
    name = "load-weights-only"
    summary = "`torch.load` of a whole pickled model/object keeps `weights_only=False` (True by default since 2.6)"
    triggers = ("load(",)
    requires = ("torch",)
    changes = (
        Example(
            "import torch\nwith open(args.checkpoint, 'rb') as f:\n    model = torch.load(f)\nmodel.eval()\n",
            "import torch\nwith open(args.checkpoint, 'rb') as f:\n"
            "    # weights_only=False: it loads a whole pickled model, which weights_only=True (the default since "
            "torch 2.6) refuses\n    model = torch.load(f, weights_only=False)\nmodel.eval()\n",
        ),
        Example(
            "import torch\ntorch.save(model, 'net.pth')\nnet = torch.load('./net.pth')\n",
            "import torch\ntorch.save(model, 'net.pth')\n# weights_only=False: this file writes it with "
            "`torch.save(model)`, which weights_only=True (the default since torch 2.6) refuses\n"
            "net = torch.load('./net.pth', weights_only=False)\n",
        ),
        Example(
            "import torch\nparser.add_argument('--save', default='ckpt.pt')\n"
            "torch.save({'net': net.state_dict(), 'args': args}, args.save)\nstate = torch.load('ckpt.pt')\n",
            "import torch\nparser.add_argument('--save', default='ckpt.pt')\n"
            "torch.save({'net': net.state_dict(), 'args': args}, args.save)\n# weights_only=False: this file writes "
            "it with `torch.save({'net': net.state_dict(), 'args': args})`, which weights_only=True (the default "
            "since torch 2.6) refuses\nstate = torch.load('ckpt.pt', weights_only=False)\n",
        ),
        Example("import torch\ncheckpoint = torch.load(args.resume)\nstart = checkpoint['epoch']\n"),
    )
    keeps = (
        "import torch\nmodel.load_state_dict(torch.load('model.pt'))\n",
        "import torch\nsd = torch.load(path, map_location='cpu')\nnet.load_state_dict(sd)\n",
        "import torch\ntorch.save(net.state_dict(), 'w.pt')\nw = torch.load('w.pt')\n",
        "import torch\nm = torch.load(p, weights_only=False)\nm.eval()\n",
        "import torch, pickle\nm = torch.load(p, pickle_module=pickle)\n",
        "import numpy as np\nx = np.load('a.npy')\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, (cst.Name, cst.Attribute)) or self.ctx.qualname(node.func) != "torch.load":
            return
        if not node.args or _has_keyword(node, "weights_only", "pickle_module"):
            return
        evaluator = _Evaluator(self, self.ctx.ancestors)
        use = self._use(node, evaluator)
        if use == "state":
            return
        if use == "module":
            reason = "it loads a whole pickled model"
        else:
            kind, saved = self._saved(node, evaluator)
            if kind == "safe":
                return
            reason = f"this file writes it with `torch.save({_code(saved)})`" if saved is not None else None
        if reason is None:
            self.report(node, "`torch.load` loads weights only by default since PyTorch 2.6: a file holding a "
                              "whole model, an optimizer, an argparse Namespace or numpy values now fails to load",
                        hint="if this project wrote the file, pass `weights_only=False` (only for trusted files)")
            return
        self._report_with_comment(node, reason)

    def _use(self, node: cst.Call, evaluator: _Evaluator) -> Optional[str]:
        """"module" / "state" when the loaded value is used as a module / a state dict."""
        ancestors = self.ctx.ancestors
        index = len(ancestors) - 1
        value: cst.CSTNode = node
        while index >= 2:
            parent, grand = ancestors[index - 1], ancestors[index - 2]
            if isinstance(parent, cst.Arg) and _method(grand) == "load_state_dict":
                return "state"
            if isinstance(parent, cst.Call) and parent.func is value:
                return "module"  # called
            if isinstance(parent, cst.Attribute) and isinstance(grand, cst.Call) and grand.func is parent:
                method = parent.attr.value
                if method in MODULE_METHODS:
                    return "module"
                if method in ("to", "cuda", "cpu", "float", "double", "half"):
                    value, index = grand, index - 2
                    continue
            break
        parent = ancestors[index - 1] if index >= 1 else None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and dotted(parent.targets[0].target):
            name = dotted(parent.targets[0].target)
            facts_ = evaluator.facts
            if name in facts_.module_names or name in facts_.called_names:
                return "module"
            if name in facts_.state_dict_args:
                return "state"
        return None

    def _saved(self, node: cst.Call, evaluator: _Evaluator) -> Tuple[str, Optional[cst.CSTNode]]:
        """How this file's ``torch.save`` to the same path classifies the saved object."""
        path = _arg(node, 0, "f")
        keys = _path_keys(evaluator, path.value, evaluator.chain)
        best: Tuple[str, Optional[cst.CSTNode]] = ("none", None)
        for save, chain in evaluator.facts.saves:
            obj, target = _arg(save, 0, "obj"), _arg(save, 1, "f")
            if obj is None or target is None or not keys & _path_keys(evaluator, target.value, chain):
                continue
            kind = _saved_kind(evaluator, obj.value, chain)
            if best[0] == "none" or _SAVED_RANK[kind] > _SAVED_RANK[best[0]]:
                best = (kind, obj.value)
        return best

    def _report_with_comment(self, node: cst.Call, reason: str) -> None:
        statement = _statement(self.ctx.ancestors[:-1])
        comment = (f"# weights_only=False: {reason}, which weights_only=True (the default since torch 2.6) "
                   f"refuses")
        is_load = lambda call: self.ctx.qualname(call.func) == "torch.load" and not _has_keyword(  # noqa: E731
            call, "weights_only", "pickle_module")
        position = next(i for i, call in enumerate(_calls_in(statement, is_load)) if call is node)

        def fix(updated: cst.CSTNode) -> cst.CSTNode:
            if not isinstance(updated, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return updated
            loads = _calls_in(updated, is_load)
            if position >= len(loads):
                return updated
            load = loads[position]
            updated = updated.deep_replace(load, _append_keyword(load, _keyword("weights_only", cst.Name("False"))))
            line = cst.EmptyLine(comment=cst.Comment(comment))
            return updated.with_changes(leading_lines=[*updated.leading_lines, line])

        self.report(statement, f"`torch.load` of a file that needs full unpickling: {reason}; since PyTorch 2.6 "
                               f"it needs `weights_only=False` (kept, with a comment)", fix,
                    hint="only for files this project writes: unpickling runs code from the file")


def _path_keys(evaluator: _Evaluator, expr: cst.CSTNode, chain, depth: int = 0) -> Set[str]:
    """Everything that identifies the file an expression names (see ``LoadWeightsOnly``)."""
    keys = {"code:" + "".join(_code(expr).split())}
    text = _string(expr)
    if text:
        keys.add("path:" + os.path.normpath(text))
    if depth > 3:
        return keys
    if isinstance(expr, cst.Call) and dotted(expr.func) == "open" and expr.args:
        keys |= _path_keys(evaluator, expr.args[0].value, chain, depth + 1)
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        default = evaluator.facts.argparse_defaults.get(expr.attr.value)
        if default is not None:
            keys |= _path_keys(evaluator, default, chain, depth + 1)
    elif isinstance(expr, cst.Name):
        for kind, value, at in evaluator.facts.lookup(expr, chain) or ():
            if value is not None and kind in ("value", "with", "param"):
                keys |= _path_keys(evaluator, value, at, depth + 1)
    return keys


def _saved_kind(evaluator: _Evaluator, obj: cst.CSTNode, chain, depth: int = 0) -> str:
    """"module", "other" (refused by weights_only=True), "safe" (loads), or "unknown"."""
    if isinstance(obj, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
            isinstance(obj, cst.Name) and obj.value in ("True", "False", "None")):
        return "safe"
    if evaluator.is_module(obj, chain):
        return "module"
    if _method(obj) in ("state_dict", "item", "tolist"):
        return "safe"
    if isinstance(obj, (cst.Dict, cst.List, cst.Tuple)):
        values = [e.value for e in obj.elements if isinstance(e, (cst.DictElement, cst.Element))]
        if len(values) != len(obj.elements):
            return "unknown"
        kinds = [_saved_kind(evaluator, v, chain, depth + 1) for v in values] or ["safe"]
        return max(kinds, key=_SAVED_RANK.get)
    if isinstance(obj, cst.Call):
        qualified = evaluator.qualname(obj.func) or ""
        if qualified.startswith(("torch.optim.", "numpy.")) or _method(obj) == "parse_args":
            return "other"
        return "unknown"
    if isinstance(obj, cst.Attribute) and isinstance(obj.value, cst.Name):
        bound = evaluator.facts.lookup(obj.value, chain)
        if bound and all(k == "value" and _method(v) == "parse_args" for k, v, _ in bound):
            return "safe"  # argparse values are str/int/float/bool/lists
    if isinstance(obj, (cst.Name, cst.Attribute)) and depth < 3:
        bound = evaluator.facts.lookup(obj, chain, evaluator.owner)
        if not bound:
            return "unknown"
        kinds = []
        for kind, value, at in bound:
            if kind == "value":
                kinds.append(_saved_kind(evaluator, value, at, depth + 1))
            elif kind == "for" and isinstance(value, cst.Call) and dotted(value.func) == "range":
                kinds.append("safe")
            else:
                kinds.append("unknown")
        return max(kinds, key=_SAVED_RANK.get)
    return "unknown"


# ---------------------------------------------------------------------------
# TM502 torch.full
# ---------------------------------------------------------------------------
def _number_kind(evaluator: _Evaluator, node: cst.CSTNode, chain, depth: int = 0) -> str:
    """"int" (a Python int/bool), "float", or "unknown" for a fill value."""
    if _int_literal(node) is not None or (isinstance(node, cst.Name) and node.value in ("True", "False")):
        return "int"
    if isinstance(node, cst.Float) or (isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Float)):
        return "float"
    if isinstance(node, cst.Call) and dotted(node.func) == "float":
        return "float"
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Divide):
            return "float"
        kinds = {_number_kind(evaluator, node.left, chain, depth), _number_kind(evaluator, node.right, chain, depth)}
        return "float" if "float" in kinds else "int" if kinds == {"int"} else "unknown"
    if isinstance(node, cst.Name) and depth < 3:
        bound = evaluator.facts.lookup(node, chain)
        kinds = {_number_kind(evaluator, v, at, depth + 1) if k == "value" else "unknown" for k, v, at in bound or ()}
        return kinds.pop() if len(kinds) == 1 else "unknown"
    return "unknown"


class FullIntFill(Rule):
    """``torch.full(size, 1)`` returned the default float dtype until PyTorch 1.6; since 1.7 an int fill
    gives int64 and a bool fill gives bool.

    DCGAN-style labels (``torch.full((b,), real_label)``) then crash ``BCELoss``
    ("Found dtype Long but expected Float"). A float fill value (``1.0``,
    ``float(real_label)``) restores the legacy dtype exactly: it follows
    ``torch.get_default_dtype()`` as the legacy call did (``dtype=torch.float``
    would not), and every int up to 2**53 converts exactly.
    """

    code = "TM502"
    name = "full-int-fill"
    summary = "`torch.full(size, <int>)` keeps the legacy float dtype (an int fill gives int64 since 1.7)"
    triggers = ("full(",)
    requires = ("torch",)
    changes = (
        Example("import torch\nlabel = torch.full((batch_size,), 1, device=device)\n",
                "import torch\nlabel = torch.full((batch_size,), 1.0, device=device)\n"),
        Example("import torch\nreal_label = 1\nlabel = torch.full((b,), real_label)\n",
                "import torch\nreal_label = 1\nlabel = torch.full((b,), float(real_label))\n"),
        Example("import torch\nm = torch.full((2, 2), -1)\n", "import torch\nm = torch.full((2, 2), -1.0)\n"),
        Example("import torch\ndef f(v):\n    return torch.full((3,), v)\n",
                "import torch\ndef f(v):\n    return torch.full((3,), float(v))\n", unsafe=True),
    )
    keeps = (
        "import torch\nx = torch.full((2,), 0.5)\n",
        "import torch\nx = torch.full((2,), 1, dtype=torch.long)\n",
        "import torch\nfake_label = 0.\ny = torch.full((2,), fake_label)\n",
        "import torch\ny = torch.full_like(x, 1)\n",
        "import numpy as np\ny = np.full((2,), 1)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.full" or _has_keyword(node, "dtype", "out"):
            return
        fill = _arg(node, 1, "fill_value")
        if fill is None:
            return
        value = fill.value
        literal = _int_literal(value)
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            literal = int(value.value == "True")
        message = ("`torch.full` with an integer fill returned the default float dtype before PyTorch 1.7; "
                   "it returns int64 (bool for a bool fill) now")
        if literal is not None:
            if abs(literal) > 2 ** 53:
                self.report(node, message, hint="pass `dtype=torch.get_default_dtype()` to keep the legacy dtype")
                return
            self.report(node, message, self._replace_fill(lambda _: cst.parse_expression(repr(float(literal)))))
            return
        kind = _number_kind(_Evaluator(self, self.ctx.ancestors), value, _scope_chain(self.ctx.ancestors))
        if kind == "float":
            return
        wrap = self._replace_fill(lambda old: cst.Call(func=cst.Name("float"), args=[cst.Arg(old)]))
        if kind == "int":
            self.report(node, message, wrap)
        else:
            self.report(node, message + " (if this fill is an int)", wrap, unsafe=True)

    @staticmethod
    def _replace_fill(make: Callable[[cst.BaseExpression], cst.BaseExpression]):
        def fix(updated: cst.Call) -> cst.Call:
            fill = _arg(updated, 1, "fill_value")
            return updated.deep_replace(fill, fill.with_changes(value=make(fill.value)))
        return fix


# ---------------------------------------------------------------------------
# TM503 .numpy() on tensors that may require grad
# ---------------------------------------------------------------------------
class NumpyRequiresGrad(Rule):
    """``.numpy()`` raises on a tensor that requires grad ("Can't call numpy() on Tensor that requires
    grad").

    Legacy code called it on ``.data``; once ``Variable`` and ``.data`` are
    gone, outputs of models, parameters and tensors created with
    ``requires_grad=True`` reach ``.numpy()`` directly. ``.detach()`` first
    gives the same array (it shares storage) and never changes gradients. A
    value may require grad when it comes (in this scope) from calling a module,
    from a parameter, from ``requires_grad=True``, or from arithmetic on such
    values; data (loader batches, factories, ``.data``, indices) is left alone.
    """

    code = "TM503"
    name = "numpy-requires-grad"
    summary = "`.numpy()` on a value that may require grad becomes `.detach().numpy()` (`.cpu()` kept)"
    triggers = (".numpy()",)
    changes = (
        Example("import torch\nmodel = torch.load(opt.model)\nout = model(x)\nimg = out.cpu().numpy()\n",
                "import torch\nmodel = torch.load(opt.model)\nout = model(x)\nimg = out.detach().cpu().numpy()\n"),
        Example("import torch.nn as nn\nfc = nn.Linear(2, 2)\nw = fc.weight.numpy()\n",
                "import torch.nn as nn\nfc = nn.Linear(2, 2)\nw = fc.weight.detach().numpy()\n"),
        Example("import torch\nw = torch.zeros(3, requires_grad=True)\nprint((w * 2).numpy())\n",
                "import torch\nw = torch.zeros(3, requires_grad=True)\nprint((w * 2).detach().numpy())\n"),
        Example("def test(net):\n    net.eval()\n    y = net(x)[0]\n    return y.numpy()\n",
                "def test(net):\n    net.eval()\n    y = net(x)[0]\n    return y.detach().numpy()\n"),
    )
    keeps = (
        "import torch\nfor data, target in loader:\n    a = data.numpy()\n",
        "import torch\nout = model(x)\nimg = out.data.cpu().numpy()\n",
        "import torch\nmodel.eval()\npred = model(x).max(1)[1]\np = pred.numpy()\n",
        "import torch\nz = torch.randn(3)\nz.numpy()\n",
        "import torch\nmodel.eval()\nout = model(x).detach()\nout.numpy()\n",
        "import torch\nmodel.eval()\nlabels = model(x).argmax(1).numpy()\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if node.args or _method(node) != "numpy":
            return
        receiver = node.func.value
        via_cpu = _method(receiver) == "cpu" and not receiver.args
        inner = receiver.func.value if via_cpu else receiver
        if not _Evaluator(self, self.ctx.ancestors).may_require_grad(inner):
            return

        def fix(updated: cst.Call) -> cst.Call:
            outer = updated.func.value
            if via_cpu:
                cpu = outer.func
                outer = outer.with_changes(func=cpu.with_changes(value=_attr_call(cpu.value, "detach")))
            else:
                outer = _attr_call(outer, "detach")
            return updated.with_changes(func=updated.func.with_changes(value=outer))

        self.report(node, "`.numpy()` raises on a tensor that requires grad; `.detach()` gives the same array", fix)


# ---------------------------------------------------------------------------
# TM504 integer division
# ---------------------------------------------------------------------------
INTEGER = frozenset({"int", "uint8"})


class IntegerDivision(Rule):
    """``/`` and ``torch.div`` on integer tensors truncated toward zero before PyTorch 1.5 (1.6 raised);
    since 1.7 they divide truly and return floats (``t /= 2`` on an integer tensor raises).

    Where both operands are known integers (a ``LongTensor``/``.long()``/integer
    ``dtype=`` tensor and an int), ``rounding_mode="trunc"`` keeps the legacy
    result exactly; ``//`` would floor, which differs for negative values.
    ``torch.arange`` and ``.sum()`` results are not "known integer": 0.3 gave a
    FloatTensor and a Python number for them, so the legacy meaning depends on
    the version; an integer tensor divided by something unknown is reported.
    """

    code = "TM504"
    min_torch = "1.8"
    name = "integer-division"
    summary = "`/` on integer tensors keeps the legacy truncation: `torch.div(a, b, rounding_mode=\"trunc\")`"
    triggers = ("/", "div")
    changes = (
        Example("import torch\nidx = torch.LongTensor([7, -7])\nrow = idx / 2\n",
                "import torch\nidx = torch.LongTensor([7, -7])\nrow = torch.div(idx, 2, rounding_mode=\"trunc\")\n"),
        Example("import torch\nt = x.long()\nt /= n_cols\n"),
        Example("import torch\nt = x.long()\nt /= 4\n",
                "import torch\nt = x.long()\nt.div_(4, rounding_mode=\"trunc\")\n"),
        Example("import torch\nk = torch.zeros(3, dtype=torch.long)\ny = k.div(2)\n",
                "import torch\nk = torch.zeros(3, dtype=torch.long)\ny = k.div(2, rounding_mode=\"trunc\")\n"),
        Example("import torch\npos = x.max(1)[1].long()\nr = torch.div(pos, 3)\n",
                "import torch\npos = x.max(1)[1].long()\nr = torch.div(pos, 3, rounding_mode=\"trunc\")\n"),
    )
    keeps = (
        "import torch\nacc = correct / total\n",
        "import torch\ny = torch.arange(10) / 2\n",
        "import torch\nx = torch.randn(3).long()\ny = x.float() / 2\n",
        "import torch\nt = torch.LongTensor([3])\nr = t / 2.0\n",
        "import torch\ns = (pred == y).sum() / len(y)\n",
        "import torch\nt = torch.LongTensor([3])\nr = torch.div(t, 2, rounding_mode='floor')\n",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide):
            self._check(node, node.left, node.right, self._fix_operator)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.DivideAssign):
            self._check(node, node.target, node.value, self._fix_augmented)

    def visit_Call(self, node: cst.Call) -> None:
        if _has_keyword(node, "rounding_mode") or _method(node) not in ("div", "div_"):
            return
        qualified = self.ctx.qualname(node.func)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if qualified == "torch.div" and len(positional) == 2:
            self._check(node, positional[0], positional[1], self._fix_call)
        elif qualified is None and len(positional) == 1:
            self._check(node, node.func.value, positional[0], self._fix_call)

    def _check(self, node, left, right, fix) -> None:
        evaluator = _Evaluator(self, self.ctx.ancestors)
        kinds = (evaluator.dtype_kind(left), evaluator.dtype_kind(right))
        if not INTEGER & set(kinds) or "float" in kinds:
            return
        message = ("integer tensor division truncated toward zero before PyTorch 1.5; it divides truly "
                   "(floats) since 1.7")
        if set(kinds) <= INTEGER | {"scalar"}:
            self.report(node, message + ": `rounding_mode=\"trunc\"` keeps the legacy result", fix)
        else:
            self.report(node, message + "; the other operand's type is not known here",
                        hint="`torch.div(a, b, rounding_mode=\"trunc\")` if both are integers")

    def _trunc(self) -> cst.Arg:
        return _keyword("rounding_mode", cst.SimpleString('"trunc"'))

    def _fix_operator(self, updated: cst.BinaryOperation) -> cst.Call:
        torch = _spell(self, "torch")
        return cst.Call(func=cst.parse_expression(f"{torch}.div"),
                        args=[cst.Arg(updated.left, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                              cst.Arg(updated.right, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                              self._trunc()], lpar=updated.lpar, rpar=updated.rpar)

    def _fix_augmented(self, updated: cst.AugAssign) -> cst.Expr:
        return cst.Expr(_attr_call(updated.target, "div_", [
            cst.Arg(updated.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), self._trunc()]))

    def _fix_call(self, updated: cst.Call) -> cst.Call:
        return _append_keyword(updated, self._trunc())


# ---------------------------------------------------------------------------
# TM505 uint8 masks
# ---------------------------------------------------------------------------
MASK_METHODS = {"masked_fill": 0, "masked_fill_": 0, "masked_select": 0, "masked_scatter": 0, "masked_scatter_": 0}
MASK_FUNCTIONS = {"torch.masked_fill": 1, "torch.masked_select": 1, "torch.masked_scatter": 1, "torch.where": 0}
BOOLEAN_METHODS = frozenset({"eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "logical_not", "logical_and",
                             "logical_or", "bool"})


def _is_boolean(node: cst.CSTNode) -> bool:
    """A comparison: its uint8 (legacy) and bool (current) results have the same 0/1 values."""
    if isinstance(node, cst.Comparison) or _method(node) in BOOLEAN_METHODS:
        return True
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert) and _is_boolean(
        node.expression)


class Uint8Mask(Rule):
    """uint8 masks (``ByteTensor``, ``.byte()``, ``dtype=torch.uint8``) were the legacy boolean type.

    Since 1.2 masks are ``bool``: ``masked_fill``, ``masked_select``,
    ``masked_scatter`` and ``x[mask] = v`` now raise on uint8 masks, ``x[mask]``
    and ``torch.where`` warn. ``mask.bool()`` at the use means exactly what the
    uint8 mask meant (non-zero selects); ``cmp.byte()`` becomes ``cmp.bool()``.
    A mask is uint8 when it is built so in its scope or returned so by a
    function of the file; a ``masked_*``/``where`` mask that is a parameter
    gets ``.bool()`` too when the file builds uint8 tensors (a no-op on bool).
    The producer is left as it is: other uses of the variable (``1 - mask``,
    sums) keep their uint8 arithmetic.
    """

    code = "TM505"
    min_torch = "1.2"
    name = "uint8-mask"
    summary = "uint8 masks used for indexing/`masked_fill`/`masked_select`/`where` become `bool`"
    triggers = ("Byte", "byte", "uint8")
    changes = (
        Example("import torch\nmask = torch.ByteTensor([1, 0, 1])\nx.masked_fill_(mask, 0)\n",
                "import torch\nmask = torch.ByteTensor([1, 0, 1])\nx.masked_fill_(mask.bool(), 0)\n"),
        Example("import torch\ny = x[(x > 0).byte()]\n", "import torch\ny = x[(x > 0).bool()]\n"),
        Example("import torch\nm = torch.zeros(4, dtype=torch.uint8)\nx[m] = 0\n",
                "import torch\nm = torch.zeros(4, dtype=torch.uint8)\nx[m.bool()] = 0\n"),
        Example("import torch\nkeep = t.byte()\ny = torch.where(keep, a, b)\n",
                "import torch\nkeep = t.byte()\ny = torch.where(keep.bool(), a, b)\n"),
        Example("import torch\ndef pad_mask(n):\n    return torch.ByteTensor(n, 5).zero_()\n"
                "def attend(scores, mask):\n    return scores.masked_fill(mask, -1e9)\n",
                "import torch\ndef pad_mask(n):\n    return torch.ByteTensor(n, 5).zero_()\n"
                "def attend(scores, mask):\n    return scores.masked_fill(mask.bool(), -1e9)\n"),
    )
    keeps = (
        "import torch\nmask = x > 0\nx.masked_fill_(mask, 0)\n",
        "import torch\nimg = (x * 255).byte()\nout = img.float() / 255\n",
        "import torch\nm = torch.ByteTensor([1, 0])\ny = x[m.bool()]\n",
        "import torch\nidx = torch.LongTensor([0, 2])\ny = x[idx]\n",
        "import torch\ndef attend(scores, mask):\n    return scores.masked_fill(mask, -1e9)\nb = torch.uint8\n",
    )

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index):
            self._check(node.slice.value)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualname(node.func)
        if qualified in MASK_FUNCTIONS:
            position, keyword = MASK_FUNCTIONS[qualified], "condition" if qualified == "torch.where" else "mask"
        elif qualified is None and _method(node) in MASK_METHODS:
            position, keyword = MASK_METHODS[_method(node)], "mask"
        else:
            return
        mask = _arg(node, position, keyword)
        if mask is not None:
            self._check(mask.value, passed_in=True)

    @staticmethod
    def _parameter(evaluator: _Evaluator, mask: cst.BaseExpression) -> bool:
        """A mask passed in as a parameter, in a file that builds uint8 tensors: ``.bool()`` is exact for
        both uint8 and bool masks (masked_* raise on anything else)."""
        bound = evaluator.facts.lookup(mask, evaluator.chain) if isinstance(mask, cst.Name) else None
        return evaluator.facts.makes_uint8 and bool(bound) and all(kind == "param" for kind, _, _ in bound)

    def _check(self, mask: cst.BaseExpression, passed_in: bool = False) -> None:
        evaluator = _Evaluator(self, self.ctx.ancestors)
        kind = evaluator.dtype_kind(mask)
        if kind != "uint8" and not (passed_in and kind == "unknown" and self._parameter(evaluator, mask)):
            return

        def fix(updated: cst.BaseExpression) -> cst.BaseExpression:
            if _method(updated) == "byte" and not updated.args and _is_boolean(updated.func.value):
                return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("bool")))
            return _attr_call(updated, "bool")

        self.report(mask, "uint8 mask: masks are bool since PyTorch 1.2 (uint8 raises in masked_fill/"
                          "masked_select/index assignment)", fix)


# ---------------------------------------------------------------------------
# TM506 lr_scheduler.step() before optimizer.step()
# ---------------------------------------------------------------------------
class _StepEvidence(cst.CSTVisitor):
    """Does a statement step an optimizer (directly, through a function of this file, or a training call)?"""

    def __init__(self, rule: "SchedulerOrder", depth: int = 0):
        super().__init__()
        self.rule, self.depth, self.found = rule, depth, False

    def visit_Call(self, node: cst.Call) -> None:
        if self.found:
            return
        if _method(node) == "step" and self.rule.is_optimizer(node.func.value):
            self.found = True
            return
        callee = dotted(node.func) or ""
        receiver, _, last = callee.rpartition(".")
        training = "train" in last.lower() and not (last == "train" and receiver in self.rule.facts.module_names)
        if training or any(self.rule.is_optimizer(a.value) for a in node.args):
            self.found = True
            return
        function = self.rule.facts.functions.get(callee)
        if function is not None and self.depth < 2:
            inner = _StepEvidence(self.rule, self.depth + 1)
            visit(function.body, inner)
            self.found = inner.found


def _exits_loop(body: cst.CSTNode) -> bool:
    """``continue``/``break`` for this loop, or ``return``/``yield`` anywhere: the end of the body may not run."""
    found = []

    class _Exits(cst.CSTVisitor):
        def __init__(self):
            super().__init__()
            self.loops = 0

        def visit_For(self, node):
            self.loops += 1

        def leave_For(self, node):
            self.loops -= 1

        def visit_While(self, node):
            self.loops += 1

        def leave_While(self, node):
            self.loops -= 1

        def visit_FunctionDef(self, node):
            return False

        def visit_Continue(self, node):
            found.append(node) if self.loops == 0 else None

        def visit_Break(self, node):
            found.append(node) if self.loops == 0 else None

        def visit_Return(self, node):
            found.append(node)

        def visit_Yield(self, node):
            found.append(node)

    visit(body, _Exits())
    return bool(found)


class SchedulerOrder(Rule):
    """Since PyTorch 1.1 an ``lr_scheduler`` sets the first learning rate in its constructor and
    ``step()`` belongs after ``optimizer.step()``.

    Legacy scripts call ``scheduler.step()`` at the top of each epoch: on
    0.4 that made epoch ``e`` train with ``lr(e)``; now it trains with
    ``lr(e + 1)`` (the whole schedule one epoch early, and PyTorch warns).
    Moving the call to the end of the same loop body restores ``lr(e)`` for
    every epoch (code after the loop then sees one more step). It is an unsafe
    fix: a ``continue``/``break``/``return`` in the body, or the call inside an
    ``if``, leaves it as a report. ``scheduler.step(epoch)`` (closed form) and
    ``ReduceLROnPlateau.step(metric)`` are unaffected.
    """

    code = "TM506"
    name = "scheduler-step-order"
    summary = "`scheduler.step()` before `optimizer.step()` shifts the schedule since 1.1 (unsafe fix: step last)"
    triggers = (".step()",)
    changes = (
        Example(
            "from torch.optim import lr_scheduler\nscheduler = lr_scheduler.StepLR(optimizer, 30)\n"
            "for epoch in range(90):\n    scheduler.step()\n    train(epoch)\n    validate()\n",
            "from torch.optim import lr_scheduler\nscheduler = lr_scheduler.StepLR(optimizer, 30)\n"
            "for epoch in range(90):\n    train(epoch)\n    validate()\n    scheduler.step()\n",
            unsafe=True,
        ),
        Example(
            "import torch\nsched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)\nfor epoch in range(3):\n"
            "    sched.step()\n    for x, y in loader:\n        opt.zero_grad()\n        loss_fn(net(x), y).backward()\n"
            "        opt.step()\n",
            "import torch\nsched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)\nfor epoch in range(3):\n"
            "    for x, y in loader:\n        opt.zero_grad()\n        loss_fn(net(x), y).backward()\n"
            "        opt.step()\n    sched.step()\n",
            unsafe=True,
        ),
        Example(
            "for epoch in range(9):\n    for phase in ['train', 'val']:\n        if phase == 'train':\n"
            "            scheduler.step()\n        run_epoch(model, optimizer)\n",
        ),
    )
    keeps = (
        "for epoch in range(9):\n    train(epoch)\n    scheduler.step()\n",
        "for epoch in range(9):\n    scheduler.step(epoch)\n    train(epoch)\n",
        "for x in loader:\n    optimizer.step()\n    scheduler.step()\n",
        "import torch\nplateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)\nfor e in range(3):\n"
        "    plateau.step()\n    train()\n",
        "for i in range(3):\n    env.step()\n    train(i)\n",
        "for epoch in range(3):\n    scheduler.step()\n    model.train()\n    evaluate(model)\n",
        "while scheduler.step():\n    train()\nfor e in range(2):\n    pass\nelse:\n    scheduler.step()\n    train()\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if node.args or _method(node) != "step" or not self.is_scheduler(node.func.value):
            return
        ancestors = self.ctx.ancestors
        loop_index = next((i for i in range(len(ancestors) - 1, -1, -1)
                           if isinstance(ancestors[i], (cst.For, cst.While))), None)
        if loop_index is None or ancestors[loop_index + 1] is not ancestors[loop_index].body or not isinstance(
                ancestors[loop_index].body, cst.IndentedBlock):
            return  # not in a loop body (a loop header, an `else:` block, a one-line loop)
        loop = ancestors[loop_index]
        statement = ancestors[loop_index + 2]  # loop -> IndentedBlock -> statement
        body = list(loop.body.body)
        position = next(i for i, s in enumerate(body) if s is statement)
        if self._steps(body[:position]) or not self._steps(body[position + 1:]):
            return
        message = (f"`{_code(node)}` runs before the optimizer steps in this loop: since PyTorch 1.1 this shifts "
                   f"the schedule one step early")
        simple = (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                  and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is node)
        if not simple or _exits_loop(loop.body):
            self.report(node, message, hint="call it after the optimizer steps (end of the epoch/iteration)")
            return

        def fix(updated: cst.CSTNode) -> cst.CSTNode:
            if not isinstance(updated, (cst.For, cst.While)):
                return updated
            stmts = list(updated.body.body)
            matches = [i for i, s in enumerate(stmts) if s.deep_equals(statement)]
            if len(matches) != 1:
                return updated
            moved = stmts.pop(matches[0])
            moved = moved.with_changes(leading_lines=[])
            return updated.with_changes(body=updated.body.with_changes(body=[*stmts, moved]))

        self.report(loop, message + "; moved to the end of the loop body", fix, unsafe=True)

    @property
    def facts(self) -> _Facts:
        return facts(self)

    def _constructor(self, node: cst.CSTNode) -> str:
        """The qualified constructor ``node`` is bound to in this scope, if one."""
        for kind, value, _ in self.facts.lookup(node, _scope_chain(self.ctx.ancestors),
                                                _enclosing_class(self.ctx.ancestors)) or ():
            if kind == "value" and isinstance(value, cst.Call):
                return self.ctx.qualname(value.func) or ""
        return ""

    def is_scheduler(self, node: cst.CSTNode) -> bool:
        constructor = self._constructor(node)
        if constructor:
            return constructor.startswith(SCHEDULER_PREFIX) and not constructor.endswith("ReduceLROnPlateau")
        return "sched" in (dotted(node) or "").lower()

    def is_optimizer(self, node: cst.CSTNode) -> bool:
        constructor = self._constructor(node)
        if constructor:
            return constructor.startswith("torch.optim.") and not constructor.startswith(SCHEDULER_PREFIX)
        name = (dotted(node) or "").rpartition(".")[2].lower()
        return "optim" in name or name in ("opt", "optg", "optd") or name.startswith("opt_")

    def _steps(self, statements: Iterable[cst.CSTNode]) -> bool:
        for statement in statements:
            evidence = _StepEvidence(self)
            visit(statement, evidence)
            if evidence.found:
                return True
        return False


# ---------------------------------------------------------------------------
# TM507 torchvision
# ---------------------------------------------------------------------------
# Removed transforms -> (current name, legacy positional arguments that are keywords now).
TORCHVISION_RENAMES: Dict[str, Tuple[str, Tuple[Optional[str], ...]]] = {
    "torchvision.transforms.Scale": ("Resize", ()),
    "torchvision.transforms.RandomSizedCrop": ("RandomResizedCrop", (None, "interpolation")),
}
TORCHVISION_KEYWORDS: Dict[str, Dict[str, str]] = {
    "torchvision.utils.make_grid": {"range": "value_range"},
    "torchvision.utils.save_image": {"range": "value_range"},
}
# Model builders of the legacy era: `pretrained=True` means exactly `weights=<Enum>.IMAGENET1K_V1`
# (torchvision 0.28 `handle_legacy_interface`).
PRETRAINED_WEIGHTS: Dict[str, str] = {
    "alexnet": "AlexNet_Weights", "vgg11": "VGG11_Weights", "vgg11_bn": "VGG11_BN_Weights",
    "vgg13": "VGG13_Weights", "vgg13_bn": "VGG13_BN_Weights", "vgg16": "VGG16_Weights",
    "vgg16_bn": "VGG16_BN_Weights", "vgg19": "VGG19_Weights", "vgg19_bn": "VGG19_BN_Weights",
    "resnet18": "ResNet18_Weights", "resnet34": "ResNet34_Weights", "resnet50": "ResNet50_Weights",
    "resnet101": "ResNet101_Weights", "resnet152": "ResNet152_Weights",
    "densenet121": "DenseNet121_Weights", "densenet161": "DenseNet161_Weights",
    "densenet169": "DenseNet169_Weights", "densenet201": "DenseNet201_Weights",
    "squeezenet1_0": "SqueezeNet1_0_Weights", "squeezenet1_1": "SqueezeNet1_1_Weights",
    "inception_v3": "Inception_V3_Weights", "googlenet": "GoogLeNet_Weights",
    "mobilenet_v2": "MobileNet_V2_Weights", "shufflenet_v2_x0_5": "ShuffleNet_V2_X0_5_Weights",
    "shufflenet_v2_x1_0": "ShuffleNet_V2_X1_0_Weights", "resnext50_32x4d": "ResNeXt50_32X4D_Weights",
    "resnext101_32x8d": "ResNeXt101_32X8D_Weights", "wide_resnet50_2": "Wide_ResNet50_2_Weights",
    "wide_resnet101_2": "Wide_ResNet101_2_Weights", "mnasnet0_5": "MNASNet0_5_Weights",
    "mnasnet1_0": "MNASNet1_0_Weights",
}


def _torchvision_name(qualified: Optional[str]) -> Optional[str]:
    if not qualified or not qualified.startswith("torchvision."):
        return None
    return qualified.replace("torchvision.transforms.transforms.", "torchvision.transforms.")


class TorchvisionRenames(Rule):
    """torchvision removed the names legacy training scripts use.

    ``transforms.Scale`` and ``transforms.RandomSizedCrop`` are gone (same
    behaviour as ``Resize``/``RandomResizedCrop``; the second positional
    argument of ``RandomSizedCrop`` is ``interpolation=``); ``make_grid``/
    ``save_image`` take ``value_range=`` instead of ``range=`` (a TypeError
    now). ``pretrained=True`` still works with a deprecation warning and means
    exactly ``weights=<Model>_Weights.IMAGENET1K_V1`` (the table is torchvision
    0.28's own mapping), so it is rewritten to that for the legacy-era models.
    """

    code = "TM507"
    name = "torchvision-renames"
    summary = "torchvision renames: `Scale`->`Resize`, `RandomSizedCrop`->`RandomResizedCrop`, `range=`, `pretrained=`"
    triggers = ("Scale", "RandomSizedCrop", "range=", "pretrained=")
    requires = ("torch",)
    changes = (
        Example("import torchvision.transforms as transforms\nt = transforms.Scale(256)\n",
                "import torchvision.transforms as transforms\nt = transforms.Resize(256)\n"),
        Example("from torchvision import transforms\nt = transforms.RandomSizedCrop(224, Image.BICUBIC)\n",
                "from torchvision import transforms\nt = transforms.RandomResizedCrop(224, interpolation=Image.BICUBIC)\n"),
        Example("from torchvision.transforms import Scale, ToTensor\nt = Scale(64)\n",
                "from torchvision.transforms import Resize, ToTensor\nt = Resize(64)\n"),
        Example("import torchvision.utils as vutils\nvutils.save_image(x, 'a.png', normalize=True, range=(-1, 1))\n",
                "import torchvision.utils as vutils\nvutils.save_image(x, 'a.png', normalize=True, value_range=(-1, 1))\n"),
        Example("from torchvision import models\nnet = models.resnet18(pretrained=True)\n",
                "from torchvision import models\nnet = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)\n"),
        Example("import torchvision.models as models\nnet = models.vgg16(pretrained=args.pretrained)\n",
                "import torchvision.models as models\nnet = models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1 "
                "if args.pretrained else None)\n"),
    )
    keeps = (
        "from torchvision import transforms\nt = transforms.Resize(256)\n",
        "import torchvision.transforms as T\nt = T.Compose([T.ToTensor(), T.Lambda(lambda x: x)])\n",
        "class Scale(object):\n    pass\ns = Scale()\n",
        "for i in range(3):\n    print(i)\n",
        "import timm\nm = timm.create_model('resnet18', pretrained=True)\n",
    )

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        parent = self.ctx.parent(1)
        if not isinstance(parent, cst.ImportFrom) or parent.module is None:
            return
        qualified = _torchvision_name(f"{dotted(parent.module)}.{dotted(node.name)}")
        if qualified in TORCHVISION_RENAMES:
            new = TORCHVISION_RENAMES[qualified][0]
            self.report(node, f"`{dotted(node.name)}` was removed from torchvision: `{new}`",
                        lambda updated: updated.with_changes(name=cst.Name(new)))

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> None:
        parent = self.ctx.parent(1)
        if isinstance(parent, (cst.ImportAlias, cst.Attribute)) and not (
                isinstance(parent, cst.Attribute) and parent.value is not node):
            return  # an import, or the inside of a longer chain
        qualified = _torchvision_name(self.ctx.qualname(node))
        if qualified not in TORCHVISION_RENAMES:
            return
        local = node.attr.value if isinstance(node, cst.Attribute) else node.value
        legacy = qualified.rpartition(".")[2]
        if local != legacy:
            return  # an alias (`import Scale as S`): only the import changes
        new, keywords = TORCHVISION_RENAMES[qualified]

        def rename(updated: cst.BaseExpression) -> cst.BaseExpression:
            if isinstance(updated, cst.Attribute):
                return updated.with_changes(attr=cst.Name(new))
            return updated.with_changes(value=new)

        self.report(node, f"`{legacy}` was removed from torchvision: `{new}`", rename)
        if keywords and isinstance(parent, cst.Call) and parent.func is node:
            positional = [a for a in parent.args if a.keyword is None and not a.star]
            if any(k and i < len(positional) for i, k in enumerate(keywords)):
                self.report(parent, f"`{new}` takes these arguments by keyword", self._keywords(keywords))

    @staticmethod
    def _keywords(keywords: Tuple[Optional[str], ...]):
        def fix(updated: cst.Call) -> cst.Call:
            args, position = [], 0
            for arg in updated.args:
                if arg.keyword is None and not arg.star:
                    name = keywords[position] if position < len(keywords) else None
                    position += 1
                    if name:
                        arg = arg.with_changes(keyword=cst.Name(name), equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
                args.append(arg)
            return updated.with_changes(args=args)
        return fix

    def visit_Call(self, node: cst.Call) -> None:
        qualified = _torchvision_name(self.ctx.qualname(node.func))
        if qualified is None:
            return
        renames = TORCHVISION_KEYWORDS.get(qualified, {})
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in renames:
                new = renames[arg.keyword.value]
                self.report(arg, f"`{arg.keyword.value}=` is `{new}=` in current torchvision",
                            lambda updated, new=new: updated.with_changes(keyword=cst.Name(new)))
        builder = qualified.rpartition(".")[2]
        if qualified.startswith("torchvision.models.") and builder in PRETRAINED_WEIGHTS:
            pretrained = _arg(node, 99, "pretrained")
            if pretrained is not None and not _has_keyword(node, "weights"):
                self.report(pretrained, "`pretrained=` is deprecated in torchvision (since 0.13): `weights=`",
                            self._weights(node.func, PRETRAINED_WEIGHTS[builder]))

    def _weights(self, func: cst.BaseExpression, enum: str):
        def fix(updated: cst.Arg) -> cst.Arg:
            if isinstance(func, cst.Attribute):
                weights = f"{_code(func.value)}.{enum}.IMAGENET1K_V1"
            else:
                self.ctx.add_import("torchvision.models", enum)
                weights = f"{enum}.IMAGENET1K_V1"
            value = updated.value
            if isinstance(value, cst.Name) and value.value in ("True", "False"):
                text = weights if value.value == "True" else "None"
            else:
                text = f"{weights} if {_code(value)} else None"
            return updated.with_changes(keyword=cst.Name("weights"), value=cst.parse_expression(text))
        return fix


# ---------------------------------------------------------------------------
# TM508 grid_sample / affine_grid align_corners
# ---------------------------------------------------------------------------
ALIGN_CORNERS_POSITION = {"torch.nn.functional.grid_sample": 4, "torch.nn.functional.affine_grid": 2}


class GridAlignCorners(Rule):
    """``F.grid_sample``/``F.affine_grid`` computed with ``align_corners=True`` before PyTorch 1.3; the
    default is False since then (different values, and a warning on every call). Legacy code never passed
    it, so ``align_corners=True`` keeps its values exactly."""

    code = "TM508"
    min_torch = "1.3"
    name = "grid-align-corners"
    summary = "`F.grid_sample`/`F.affine_grid` without `align_corners` keep the legacy `align_corners=True`"
    triggers = ("grid_sample", "affine_grid")
    requires = ("torch",)
    changes = (
        Example("import torch.nn.functional as F\ngrid = F.affine_grid(theta, x.size())\ny = F.grid_sample(x, grid)\n",
                "import torch.nn.functional as F\ngrid = F.affine_grid(theta, x.size(), align_corners=True)\n"
                "y = F.grid_sample(x, grid, align_corners=True)\n"),
    )
    keeps = (
        "import torch.nn.functional as F\ny = F.grid_sample(x, g, align_corners=False)\n",
        "import torch.nn.functional as F\ng = F.affine_grid(theta, size, True)\n",
        "def grid_sample(a, b):\n    pass\ny = grid_sample(x, g)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        position = ALIGN_CORNERS_POSITION.get(self.ctx.qualname(node.func) or "")
        if position is None or _has_keyword(node, "align_corners"):
            return
        if len([a for a in node.args if a.keyword is None]) > position:
            return
        self.report(node, "the default `align_corners` changed from True to False in PyTorch 1.3",
                    lambda updated: _append_keyword(updated, _keyword("align_corners", cst.Name("True"))))


# ---------------------------------------------------------------------------
# TM509 numpy aliases of builtins
# ---------------------------------------------------------------------------
NUMPY_REMOVED_ALIASES = {"numpy.float": "float", "numpy.int": "int", "numpy.object": "object", "numpy.str": "str",
                         "numpy.complex": "complex", "numpy.unicode": "str"}


class NumpyBuiltinAliases(Rule):
    """``np.float``, ``np.int``, ``np.object``, ... were the Python builtins themselves; NumPy 1.24 removed
    them (AttributeError), and current PyTorch runs with NumPy 2. The builtin is exactly what they were."""

    code = "TM509"
    name = "numpy-builtin-aliases"
    summary = "`np.float`/`np.int`/`np.object`/... (removed in NumPy 1.24) become the builtins they were"
    triggers = tuple(f"{prefix}.{alias}" for prefix in ("np", "numpy") for alias in ("float", "int", "object", "str",
                                                                                    "complex", "unicode"))
    changes = (
        Example("import numpy as np\na = np.zeros(3, dtype=np.float)\nn = np.int(a.sum())\n",
                "import numpy as np\na = np.zeros(3, dtype=float)\nn = int(a.sum())\n"),
    )
    keeps = (
        "import numpy as np\na = np.zeros(3, dtype=np.float32)\nb = np.bool_(True)\n",
        "class np:\n    float = 1\nx = np.float\n",
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        builtin = NUMPY_REMOVED_ALIASES.get(self.ctx.qualname(node) or "")
        if builtin is not None:
            self.report(node, f"`{_code(node)}` was removed in NumPy 1.24: it was the builtin `{builtin}`",
                        lambda updated: cst.Name(builtin, lpar=updated.lpar, rpar=updated.rpar))


# ---------------------------------------------------------------------------
# TM510 legacy autograd Function
# ---------------------------------------------------------------------------
def _is_static(function: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) == "staticmethod" for d in function.decorators)


class LegacyAutogradFunction(Rule):
    """An ``autograd.Function`` with a non-static ``forward`` (called as ``MyFn()(x)``) raises since
    PyTorch 1.3 ("Legacy autograd function with non-static forward method is deprecated").

    When the class has no ``__init__`` state, its ``forward``/``backward`` become
    ``@staticmethod`` (the first parameter, ``self``, is then the ``ctx``, which
    has ``save_for_backward``, ``saved_tensors``, ``needs_input_grad`` and holds
    attributes) and every ``MyFn()(args)`` in the file becomes
    ``MyFn.apply(args)``. A class with ``__init__`` arguments, or used in other
    ways, is reported: its state has to become arguments of ``apply``.
    """

    code = "TM510"
    name = "legacy-autograd-function"
    summary = "legacy `autograd.Function` with non-static `forward`: `@staticmethod` and `MyFn.apply(...)`"
    triggers = ("Function",)
    requires = ("torch",)
    changes = (
        Example(
            "from torch.autograd import Function\nclass Double(Function):\n    def forward(self, x):\n"
            "        return x * 2\n\n    def backward(self, g):\n        return g * 2\ny = Double()(x)\n",
            "from torch.autograd import Function\nclass Double(Function):\n    @staticmethod\n"
            "    def forward(self, x):\n        return x * 2\n\n    @staticmethod\n    def backward(self, g):\n"
            "        return g * 2\ny = Double.apply(x)\n",
        ),
        Example(
            "import torch\nclass Scale(torch.autograd.Function):\n    def __init__(self, k):\n        self.k = k\n"
            "    def forward(self, x):\n        return x * self.k\ny = Scale(2)(x)\n",
        ),
    )
    keeps = (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        return x\ny = F.apply(x)\n",
        "class Function:\n    def forward(self, x):\n        return x\n",
    )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not any((self.ctx.qualname(b.value) or "") in ("torch.autograd.Function", "torch.autograd.function.Function")
                   for b in node.bases):
            return
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        forward = methods.get("forward")
        if forward is None or _is_static(forward):
            return
        message = ("legacy autograd Function (non-static `forward`) raises since PyTorch 1.3")
        uses = self._uses(node.name.value)
        if "__init__" in methods or uses is None or set(methods) - {"forward", "backward"}:
            self.report(node, message, hint="make forward/backward @staticmethod (ctx first) and call "
                                            "`MyFn.apply(...)`; pass __init__ state as apply arguments")
            return
        self.report(node, message + ": made static, called with `.apply`", self._make_static)
        for call in uses:
            self.report(call, f"`{node.name.value}()(...)` is `{node.name.value}.apply(...)` for a static Function",
                        lambda updated: updated.with_changes(func=cst.Attribute(
                            value=updated.func.func, attr=cst.Name("apply"))))

    def _uses(self, name: str) -> Optional[List[cst.Call]]:
        """Every ``Name()(...)`` use of the class in this file, or None if it is used any other way."""
        module = self.ctx.module
        calls = _calls_in(module, lambda c: isinstance(c.func, cst.Call) and dotted(c.func.func) == name
                          and not c.func.args)
        inner = {id(c.func.func) for c in calls}
        others = []

        class _Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                if node.value == name and id(node) not in inner:
                    others.append(node)

            def visit_ClassDef(self, node: cst.ClassDef) -> None:
                inner.add(id(node.name))

        visit(module, _Names())
        return None if others else calls

    @staticmethod
    def _make_static(updated: cst.ClassDef) -> cst.ClassDef:
        body = []
        for statement in updated.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in ("forward", "backward") \
                    and not _is_static(statement):
                statement = statement.with_changes(decorators=[cst.Decorator(cst.Name("staticmethod")),
                                                               *statement.decorators])
            body.append(statement)
        return updated.with_changes(body=updated.body.with_changes(body=body))


# ---------------------------------------------------------------------------
# TM511 .view() of a non-contiguous result
# ---------------------------------------------------------------------------
# Layouts (ordered): STRIDED = not contiguous but dims in stride order (expanded, narrowed); elementwise
# ops give a contiguous result for it. PERMUTED = dims out of stride order (transposed); elementwise ops
# keep that order (TensorIterator), so their result is not contiguous either.
STRIDED, PERMUTED = 1, 2
PERMUTING_ATTRIBUTES = frozenset({"T", "mT"})
STRIDING_METHODS = frozenset({"expand", "expand_as", "narrow", "unfold", "diagonal", "as_strided"})
# The result is the receiver, or a view of it, or (a dtype/device conversion) may be: same layout.
LAYOUT_ALIASES = frozenset({"view", "view_as", "reshape", "reshape_as", "flatten", "squeeze", "unsqueeze", "select",
                            "detach", "float", "double", "half", "long", "int", "short", "char", "byte", "bool",
                            "type", "type_as", "to", "cpu", "cuda"})
# Elementwise ops (methods, and ``torch.``/``F.`` functions of the same name): a permuted operand gives a
# permuted result. Each entry is checked on the installed torch by tests/rules/test_current.py.
ELEMENTWISE = frozenset({"eq", "ne", "gt", "lt", "ge", "le", "add", "sub", "mul", "div", "pow", "remainder", "fmod",
                         "abs", "neg", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "leaky_relu", "elu",
                         "clamp", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "logical_not", "clone",
                         "sin", "cos", "where"})
# Methods whose result is a new tensor: writes to it cannot reach the viewed tensor.
FRESH_RESULTS = ELEMENTWISE - {"clone"} | frozenset({
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "norm", "std", "var", "all", "any", "item", "tolist",
    "topk", "sort", "nonzero", "numel", "size", "dim", "equal", "dot", "mm", "matmul", "bmm", "cumsum", "softmax",
    "log_softmax"})
RESHAPES = {"view": "reshape", "view_as": "reshape_as"}
DTYPE_NAMES = frozenset({"float", "float16", "float32", "float64", "double", "half", "bfloat16", "int", "int8",
                         "int16", "int32", "int64", "long", "uint8", "bool", "short", "complex64", "complex128"})
_READS = (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation, cst.BooleanOperation,
          cst.Return, cst.Expr, cst.Index, cst.FormattedStringExpression, cst.Yield, cst.AugAssign)
_PASS_THROUGH = (cst.Element, cst.List, cst.Tuple, cst.IfExp)
_BLOCKS = (cst.IndentedBlock, cst.Module, cst.SimpleStatementSuite)
_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef)
_BINDERS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.WithItem)


def _in_place(method: str) -> bool:
    return method.endswith("_") and not method.startswith("_")


def _size_arguments(call: cst.Call) -> bool:
    """``view(sizes)``, not ``view(dtype)`` (a reinterpretation ``reshape`` cannot do; numpy's ``view``)."""
    for arg in call.args:
        name = dotted(arg.value) or ""
        if arg.keyword is not None or ("." in name and name.rpartition(".")[2] in DTYPE_NAMES):
            return False
    return bool(call.args)


class _Binding:
    __slots__ = ("end", "block", "value")

    def __init__(self, end: int, block: int, value: Optional[cst.CSTNode]):
        self.end, self.block, self.value = end, block, value


class _ScopeIndex:
    """One function (or the module's top level, without nested functions and classes), read once: parents,
    source order, the bindings of each name (with the block they sit in) and the loads of each name."""

    def __init__(self, scope: cst.CSTNode, qualname: Callable[[cst.CSTNode], Optional[str]]):
        self.qualname = qualname
        self.parent: Dict[int, cst.CSTNode] = {}
        self.span: Dict[int, Tuple[int, int]] = {}
        self.bindings: Dict[str, List[_Binding]] = {}
        self.loads: Dict[str, List[cst.Name]] = {}
        self.augmented: Set[str] = set()
        self.memo: Dict[int, int] = {}
        self._targets: Set[int] = set()
        self._count = 0
        if isinstance(scope, cst.FunctionDef):
            params = scope.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                self.bindings.setdefault(param.name.value, []).append(_Binding(-1, id(scope.body), None))
            self._index(scope.body, scope, id(scope.body))
        else:
            self._index(scope, None, id(scope))

    def _index(self, node: cst.CSTNode, parent: Optional[cst.CSTNode], block: int) -> None:
        start = self._count
        self._count += 1
        if parent is not None:
            self.parent[id(node)] = parent
        node_type = type(node)
        if node_type in _BLOCKS:
            block = id(node)
        elif node_type is cst.Name and id(node) not in self._targets and not (
                (parent.__class__ is cst.Attribute and parent.attr is node)
                or (parent.__class__ is cst.Arg and parent.keyword is node) or parent.__class__ is cst.Param):
            self.loads.setdefault(node.value, []).append(node)
        bound = self._bound(node) if node_type in _BINDERS else ()
        for child in children(node):
            if type(child) not in _NESTED_SCOPES:  # read as scopes of their own
                self._index(child, node, block)
        self.span[id(node)] = (start, self._count)
        for target, value in bound:
            self.bindings.setdefault(target.value, []).append(_Binding(self._count, block, value))

    def _bound(self, node: cst.CSTNode) -> List[Tuple[cst.Name, Optional[cst.CSTNode]]]:
        """The names ``node`` binds, each with its value when it is a plain ``name = value``."""
        if isinstance(node, cst.Assign):
            pairs = [(t.target, node.value) for t in node.targets]
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.target, cst.Name):
                self.augmented.add(node.target.value)
            return []
        elif isinstance(node, (cst.For, cst.CompFor)):
            pairs = [(node.target, None)]
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            pairs = [(node.asname.name, None)]
        else:
            return []
        names = []
        for target, value in pairs:
            if isinstance(target, cst.Name):
                names.append((target, value))
            elif isinstance(target, (cst.Tuple, cst.List)):
                names.extend((e.value, None) for e in target.elements if isinstance(e.value, cst.Name))
        self._targets.update(id(name) for name, _ in names)
        return names

    # -- what layout can an expression have ---------------------------------------------------
    def layout(self, node: cst.CSTNode) -> int:
        if isinstance(node, cst.Name):
            return max((self._binding_layout(b) for b in self._reaching(node)), default=0)
        if isinstance(node, cst.Attribute):
            if node.attr.value in PERMUTING_ATTRIBUTES:
                return PERMUTED
            return self.layout(node.value) if node.attr.value == "data" else 0
        if isinstance(node, cst.Subscript):  # slices keep the stride order
            return self.layout(node.value)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self._call_layout(node)
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            return self._elementwise([node.left, node.right])
        if isinstance(node, cst.Comparison):
            return self._elementwise([node.left, *(c.comparator for c in node.comparisons)])
        if isinstance(node, cst.UnaryOperation):
            return self._elementwise([node.expression])
        if isinstance(node, cst.IfExp):
            return max(self.layout(node.body), self.layout(node.orelse))
        return 0

    def _call_layout(self, node: cst.Call) -> int:
        method = node.func.attr.value
        operands = [a.value for a in node.args if a.keyword is None and not a.star]
        if (self.qualname(node.func) or "").startswith("torch."):
            receiver = operands.pop(0) if operands else None  # torch.transpose(x, 0, 1), F.relu(x)
        else:
            receiver = node.func.value
        if method in PERMUTING_METHODS:
            return PERMUTED
        if method == "contiguous" or receiver is None:
            return 0
        if method in STRIDING_METHODS:
            return max(STRIDED, self.layout(receiver))
        if method in LAYOUT_ALIASES or _in_place(method):
            return self.layout(receiver)
        if method in ELEMENTWISE:
            return self._elementwise([receiver, *operands])
        return 0

    def _elementwise(self, operands: Sequence[cst.CSTNode]) -> int:
        return PERMUTED if any(self.layout(o) == PERMUTED for o in operands) else 0

    def _binding_layout(self, binding: _Binding) -> int:
        if binding.value is None:
            return 0
        key = id(binding.value)
        if key not in self.memo:
            self.memo[key] = 0  # a cycle through this binding adds nothing
            self.memo[key] = self.layout(binding.value)
        return self.memo[key]

    def _reaching(self, use: cst.Name) -> List[_Binding]:
        """The bindings of ``use`` that can reach it: back to the latest one in a block around it."""
        bound = self.bindings.get(use.value, [])
        start = self.span.get(id(use), (0, 0))[0]
        before = [b for b in bound if b.end <= start]
        if not before:
            return bound  # read before any binding: a loop-carried value, or none of this scope
        around = set()
        node = use
        while node is not None:
            around.add(id(node))
            node = self.parent.get(id(node))
        reaching = []
        for binding in reversed(before):
            reaching.append(binding)
            if binding.block in around:
                break
        return reaching

    # -- is the viewed result written in place ----------------------------------------------------
    def fate(self, node: cst.CSTNode, depth: int = 0) -> str:
        """"read", "write" (written in place) or "unknown" for the value of ``node``, followed through
        aliasing methods, slices and names bound to it."""
        while True:
            parent = self.parent.get(id(node))
            grand = self.parent.get(id(parent))
            if isinstance(parent, cst.Attribute) and parent.value is node:
                if isinstance(grand, cst.Call) and grand.func is parent:
                    method = parent.attr.value
                    if _in_place(method):
                        return "write"
                    if method in FRESH_RESULTS:
                        return "read"
                    node = grand
                elif self._target(parent, grand):
                    return "write"
                elif parent.attr.value in ("data", "T", "mT"):
                    node = parent
                else:
                    return "read"
            elif isinstance(parent, cst.Subscript) and parent.value is node:
                if self._target(parent, grand):
                    return "write"
                node = parent
            elif isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
                keyword = parent.keyword.value if parent.keyword is not None else ""
                function = isinstance(grand.func, cst.Name) or self.qualname(grand.func) is not None
                last = (dotted(grand.func) or "").rpartition(".")[2]
                first = grand.args[0] is parent
                return "write" if keyword == "out" or (function and first and _in_place(last)) else "read"
            elif isinstance(parent, _PASS_THROUGH):
                node = parent
            elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
                targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
                if not all(isinstance(t, cst.Name) for t in targets):
                    return "unknown"
                return max((self._name_fate(t.value, depth) for t in targets), key=("read", "unknown", "write").index)
            elif isinstance(parent, _READS) or isinstance(parent, cst.Lambda):
                return "read"
            else:
                return "unknown"

    @staticmethod
    def _target(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
        return isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AugAssign, cst.AnnAssign))
                                                         and parent.target is node)

    def _name_fate(self, name: str, depth: int) -> str:
        if name in self.augmented:
            return "write"  # `v += 1` on a tensor is in place
        if depth >= 2:
            return "unknown"
        fates = {self.fate(load, depth + 1) for load in self.loads.get(name, ())}
        return "write" if "write" in fates else "unknown" if "unknown" in fates else "read"


class _ViewScope:
    __slots__ = ("node", "views", "has_source")

    def __init__(self, node: cst.CSTNode):
        self.node, self.views, self.has_source = node, [], False


class ViewNonContiguous(Rule):
    """Elementwise ops (comparisons, arithmetic, conversions) returned contiguous tensors in 0.3/0.4; since
    PyTorch 1.7 they keep the dimension order of a transposed input (TensorIterator), so ``.view()`` of
    their result raises "view size is not compatible with input tensor's size and stride". The ImageNet
    ``accuracy()`` (``pred = pred.t()``; ``correct = pred.eq(...)``; ``correct[:k].view(-1)``) is the
    classic case; pytorch/examples fixed it with ``.reshape(-1)``.

    ``.reshape()`` is exactly ``.view()`` wherever a view is possible and copies otherwise; a copy only
    differs when the result is written in place to reach the original, so such views are reported.
    Within one function, a value derives from ``.t()``/``.transpose()``/``.permute()``/``.T`` (kept
    through elementwise ops, conversions, slices and assignments) or ``.expand()``/``.narrow()``
    (views of them only: elementwise results of those are contiguous); ``.contiguous()`` ends it.
    """

    code = "TM511"
    name = "view-non-contiguous"
    summary = "`.view()` of a transposed/permuted/expanded result becomes `.reshape()` (elementwise ops keep strides)"
    triggers = (".view(", ".view_as(")
    changes = (
        Example(
            "def accuracy(output, target, topk=(1,)):\n    maxk = max(topk)\n"
            "    _, pred = output.topk(maxk, 1, True, True)\n    pred = pred.t()\n"
            "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n    res = []\n    for k in topk:\n"
            "        correct_k = correct[:k].view(-1).float().sum(0)\n        res.append(correct_k.mul_(100.0 / 8))\n"
            "    return res\n",
            "def accuracy(output, target, topk=(1,)):\n    maxk = max(topk)\n"
            "    _, pred = output.topk(maxk, 1, True, True)\n    pred = pred.t()\n"
            "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n    res = []\n    for k in topk:\n"
            "        correct_k = correct[:k].reshape(-1).float().sum(0)\n        res.append(correct_k.mul_(100.0 / 8))\n"
            "    return res\n",
        ),
        Example(
            "def scores(h):\n    h = h.transpose(1, 2)\n    s = (h * 2).sigmoid()\n    return s.view(h.size(0), -1)\n",
            "def scores(h):\n    h = h.transpose(1, 2)\n    s = (h * 2).sigmoid()\n    return s.reshape(h.size(0), -1)\n",
        ),
        Example("def f(x):\n    y = x.permute(0, 2, 1) > 0\n    flat = y.view(-1)\n    flat[0] = True\n    return y\n"),
    )
    keeps = (
        "def forward(self, x):\n    x = self.conv(x)\n    x = x.view(x.size(0), -1)\n    return self.fc(x)\n",
        "def accuracy(pred, target):\n    return pred.eq(target.view(1, -1).expand_as(pred))\n",
        "def f(x):\n    x = x.transpose(1, 2).contiguous()\n    return x.view(x.size(0), -1)\n",
        "def f(x):\n    x = x.transpose(1, 2)\n    x = x.contiguous()\n    return x.view(-1)\n",
        "def f(x, y):\n    e = x.expand_as(y) * y\n    return e.view(-1)\n",
        "import numpy as np\ndef f(a):\n    return a.transpose(1, 0).view(np.float32)\n",
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.scopes: List[_ViewScope] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(_ViewScope(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(_ViewScope(node))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = node.attr.value
        if name in PERMUTING_METHODS or name in STRIDING_METHODS or name in PERMUTING_ATTRIBUTES:
            self.scopes[-1].has_source = True

    def visit_Call(self, node: cst.Call) -> None:
        if _method(node) in RESHAPES and _size_arguments(node):
            self.scopes[-1].views.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._check(self.scopes.pop())

    def leave_Module(self, node: cst.Module) -> None:
        self._check(self.scopes.pop())

    def _check(self, scope: _ViewScope) -> None:
        # The cheap gate: nothing in this scope can make a value non-contiguous.
        if not scope.views or not scope.has_source:
            return
        index = _ScopeIndex(scope.node, self.ctx.qualname)
        for view in scope.views:
            if id(view) not in index.parent or not index.layout(view.func.value):
                continue
            method = view.func.attr.value
            message = (f"`.{method}()` of a tensor that may not be contiguous (it derives from a transpose/permute/"
                       f"expand): elementwise results keep that layout since PyTorch 1.7, and `.{method}()` raises")
            if index.fate(view) == "read":
                self.report(view, message + f"; `.{RESHAPES[method]}()` is the same view where one is possible",
                            self._reshape)
            else:
                self.report(view, message + "; the result is written in place (or escapes), so `.reshape()`, "
                                            "which may copy, is not applied",
                            hint="make the source `.contiguous()` where it is computed, then `.view()` works")

    @staticmethod
    def _reshape(updated: cst.Call) -> cst.Call:
        method = _method(updated)
        if method not in RESHAPES:
            return updated
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(RESHAPES[method])))


RULES = [LoadWeightsOnly, FullIntFill, NumpyRequiresGrad, IntegerDivision, Uint8Mask, SchedulerOrder,
         TorchvisionRenames, GridAlignCorners, NumpyBuiltinAliases, LegacyAutogradFunction,
         ViewNonContiguous]
