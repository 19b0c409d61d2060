"""What the TM5xx rules ask about a file, on top of the semantic model (``ctx.model``).

The model gives scopes and bindings; this module adds the legacy-era answers the family needs, as typed
facts (never rule codes or messages):

- ``FileFacts``: the file's ``torch.save`` calls, argparse defaults, names used as modules or passed to
  ``load_state_dict``, and whether it builds uint8 tensors (from the model's calls, on first use);
- ``Evaluator``: per expression, is it a module, may it require grad, its ``Dtype`` in every legacy version
  (``torch.arange``/``.sum()`` results are *not* known integers: 0.3 gave floats and Python numbers), the
  ``Saved`` kind of a ``torch.save``d object, and the keys that name a file path.

TM510's and TM511's own analyses are ``legacy_function.py`` and ``layouts.py``.
"""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from codemods import torchapi
from codemods.model import BindingKind, Scope, SemanticModel
from codemods.names import dotted
from codemods.syntax import argument, code, literal, method_name, string



class Dtype(enum.Enum):
    INT = "integer tensor"  # an integer tensor in every legacy version
    UINT8 = "uint8 tensor"
    SCALAR = "python int"
    FLOAT = "float"
    UNKNOWN = "unknown"
    SAME = "same"  # internal: the variable being resolved (``x = x + 1``)
    DIVIDED = "divided"  # internal: ``x /= n``


INTEGER = frozenset({Dtype.INT, Dtype.UINT8})


class Saved(enum.Enum):
    """What ``torch.load(weights_only=True)`` makes of an object ``torch.save`` wrote (ordered by risk)."""

    NONE = 0
    SAFE = 1  # state dicts, tensors, numbers, strings, plain containers of those
    UNKNOWN = 2
    OTHER = 3  # optimizers, argparse namespaces, numpy values: refused
    MODULE = 4  # a whole pickled module: refused


@dataclass
class FileFacts:
    """The file-wide facts the family reads (on first use, from the model's list of calls: walking the tree
    for them cost more than reading them)."""

    saves: List[cst.Call] = field(default_factory=list)
    argparse_defaults: Dict[str, cst.CSTNode] = field(default_factory=dict)
    module_names: Set[str] = field(default_factory=set)  # dotted names used as nn.Modules
    called_names: Set[str] = field(default_factory=set)
    state_dict_args: Set[str] = field(default_factory=set)  # names passed to ``.load_state_dict(...)``
    makes_uint8: bool = False

    @classmethod
    def build(cls, ctx) -> "FileFacts":
        facts, model = cls(), ctx.model
        for node in model.calls():
            func = node.func
            method = method_name(node)
            if method is not None:
                if method in torchapi.MODULE_METHODS and (name := dotted(func.value)):
                    facts.module_names.add(name)
                if method == "load_state_dict" and node.args and dotted(node.args[0].value):
                    facts.state_dict_args.add(dotted(node.args[0].value))
                if method == "add_argument":
                    facts._argparse(node)
            elif type(func) is cst.Name:
                facts.called_names.add(func.value)
            # ``qualname`` keeps a method's name: only these two may resolve to ``*.ByteTensor`` or ``torch.save``
            qualified = (model.qualname(func) or "") if method is None or method in ("ByteTensor", "save") else ""
            if not facts.makes_uint8 and (qualified.rpartition(".")[2] == "ByteTensor" or method == "byte" or any(
                    a.keyword is not None and a.keyword.value == "dtype" and (dotted(a.value) or "").endswith("uint8")
                    for a in node.args)):
                facts.makes_uint8 = True
            if qualified == "torch.save" and node.args:
                facts.saves.append(node)
        return facts

    def _argparse(self, node: cst.Call) -> None:
        flags = [f for f in (string(a.value) for a in node.args if a.keyword is None) if f]
        dest, default = argument(node, "dest"), argument(node, "default")
        if default is None:
            return
        name = string(dest.value) if dest is not None else None
        if name is None:
            longs = [f for f in flags if f.startswith("--")] or flags
            if not longs:
                return
            name = longs[0].lstrip("-").replace("-", "_")
        self.argparse_defaults[name] = default.value


Bound = Tuple[str, Optional[cst.CSTNode], Scope]  # ("value"/"aug"/"for"/"with"/"param"/"other", value, scope)
_KINDS = {BindingKind.ASSIGN: "value", BindingKind.AUGMENTED: "aug", BindingKind.WITH: "with",
          BindingKind.PARAMETER: "param"}


def has_keyword(call: cst.Call, *names: str) -> bool:
    """``call`` passes one of ``names`` (or ``**kwargs``, which may)."""
    return any(a.star == "**" or (a.keyword is not None and a.keyword.value in names) for a in call.args)


def int_literal(node: cst.CSTNode) -> Optional[int]:
    value = literal(node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def torchvision_name(qualified: Optional[str]) -> Optional[str]:
    """``qualified`` if it is a torchvision name, with ``transforms.transforms.X`` spelled ``transforms.X``."""
    if not qualified or not qualified.startswith("torchvision."):
        return None
    return qualified.replace("torchvision.transforms.transforms.", "torchvision.transforms.")


class Evaluator:
    """Answers "what can this expression be" from the model's bindings; one per question (its memo breaks
    cycles such as ``x = x + 1``)."""

    def __init__(self, ctx) -> None:
        self.model: SemanticModel = ctx.model
        self.facts: FileFacts = ctx.analysis(FileFacts.build)
        self.memo: Dict[tuple, object] = {}

    # -- bindings ----------------------------------------------------------------------------------------
    def bindings(self, node: cst.CSTNode, scope: Scope) -> Optional[List[Bound]]:
        """What the variable ``node`` (a name, or ``self.x``) is bound to, as seen from ``scope``."""
        if type(node) is cst.Name:
            found, bindings = self.model.lookup(node.value, scope)
            if not bindings:
                return None
            return [(_KINDS.get(b.kind, "for" if b.kind is BindingKind.FOR and b.index is None and type(
                b.node) is not cst.CompFor else "other"), b.value, found) for b in bindings]
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
            values = self.model.self_attribute_values(node.attr.value, scope)
            return [("value", value, at) for at, value in values] or None
        return None

    def _over(self, purpose: str, node: cst.CSTNode, scope: Scope, default, combine):
        bound = self.bindings(node, scope)
        if not bound:
            return None
        key = (purpose, id(bound[0][1]), id(bound[0][2]), len(bound))
        if key not in self.memo:
            self.memo[key] = default
            self.memo[key] = combine(bound)
        return self.memo[key]

    def function(self, call: cst.Call, scope: Scope) -> Optional[cst.FunctionDef]:
        """The function of this file ``call`` calls by name."""
        if type(call.func) is not cst.Name:
            return None
        _, bindings = self.model.lookup(call.func.value, scope)
        if bindings and len(bindings) == 1 and bindings[0].kind is BindingKind.FUNCTION:
            return bindings[0].node
        return None

    # -- modules -------------------------------------------------------------------------------------------
    def module_constructor(self, call: cst.CSTNode, scope: Scope) -> Optional[bool]:
        """True/False for a call that builds an nn.Module with/without parameters, None for other calls."""
        if type(call) is not cst.Call:
            return None
        qualified = self.model.qualname(call.func) or ""
        last = qualified.rpartition(".")[2]
        if (qualified.startswith("torch.nn.") and last[:1].isupper() and last != "Parameter"
                and not qualified.startswith(torchapi.NOT_MODULES)):
            return last not in torchapi.PARAMETERLESS_MODULES and not last.endswith("Loss")
        if qualified.startswith("torchvision.models."):
            return True
        if type(call.func) is cst.Name:
            _, bindings = self.model.lookup(call.func.value, scope)
            if bindings and len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS and self._module_class(
                    bindings[0].node, scope):
                return True
        return None

    def _module_class(self, node: cst.ClassDef, scope: Scope) -> bool:
        if any(type(s) is cst.FunctionDef and s.name.value == "forward" for s in node.body.body):
            return True
        return self.model.is_module_class(node) or any(
            (self.model.qualname(b.value) or "").startswith(torchapi.MODULE_PREFIXES) for b in node.bases)

    def is_module(self, node: cst.CSTNode, scope: Scope) -> bool:
        name = dotted(node)
        if name is not None and name in self.facts.module_names:
            return True
        if self.module_constructor(node, scope):
            return True
        if type(node) in (cst.Name, cst.Attribute):
            called = type(node) is cst.Name and node.value in self.facts.called_names
            return bool(self._over("module", node, scope, False, lambda bound: any(
                (k == "value" and (self.is_module(v, s) or (called and self._loads(v))))
                or (k == "for" and method_name(v) in ("modules", "children")) for k, v, s in bound)))
        return False

    def _loads(self, node: cst.CSTNode) -> bool:
        """``torch.load(...)`` (possibly moved): a called, loaded object is a whole pickled module."""
        while method_name(node) in torchapi.MOVE_METHODS:
            node = node.func.value
        return type(node) is cst.Call and self.model.qualname(node.func) == "torch.load"

    # -- gradients -----------------------------------------------------------------------------------------
    def may_require_grad(self, node: cst.CSTNode, scope: Scope) -> bool:
        kind = type(node)
        if kind in (cst.Name, cst.Attribute):
            if kind is cst.Attribute:
                if node.attr.value in ("data", "grad", "shape", "dtype", "device"):
                    return False
                owner = node.value
                if node.attr.value in ("weight", "bias") and (self.is_module(owner, scope) or (
                        type(owner) is cst.Attribute and self.is_module(owner.value, scope))):
                    return True  # a parameter of a module or of one of its submodules
            found = self._over("grad", node, scope, False, lambda bound: any(
                (k == "value" and self.may_require_grad(v, s))
                or (k == "for" and method_name(v) in ("parameters", "named_parameters"))
                or (k == "aug" and self.may_require_grad(v.value, s)) for k, v, s in bound))
            if found is None:
                return kind is cst.Attribute and node.attr.value == "T" and self.may_require_grad(node.value, scope)
            return bool(found)
        if kind is cst.Call:
            return self._call_requires_grad(node, scope)
        if kind is cst.BinaryOperation:
            return self.may_require_grad(node.left, scope) or self.may_require_grad(node.right, scope)
        if kind is cst.UnaryOperation:
            return self.may_require_grad(node.expression, scope)
        if kind is cst.Subscript:
            index = node.slice[0].slice if len(node.slice) == 1 else None
            if type(index) is cst.Index and int_literal(index.value) == 1 and \
                    method_name(node.value) in torchapi.INDEX_RESULTS:
                return False
            return self.may_require_grad(node.value, scope)
        if kind is cst.IfExp:
            return self.may_require_grad(node.body, scope) or self.may_require_grad(node.orelse, scope)
        return False

    def _call_requires_grad(self, node: cst.Call, scope: Scope) -> bool:
        if any(a.keyword is not None and a.keyword.value == "requires_grad" and literal(a.value) is not False
               for a in node.args):
            return True
        method = method_name(node)
        if method in torchapi.NO_GRAPH_METHODS:
            return False
        if method == "requires_grad_":
            return True
        qualified = self.model.qualname(node.func) or ""
        if qualified in torchapi.PARAMETER:
            return True
        if self.module_constructor(node, scope) is not None:
            return False  # building a module, not calling it
        args = [a.value for a in node.args]
        if self.is_module(node.func, scope):
            for kind, value, at in self.bindings(node.func, scope) or ():
                if kind == "value" and self.module_constructor(value, at) is False:
                    return any(self.may_require_grad(a, scope) for a in args)
            return True
        if method is not None:
            return self.may_require_grad(node.func.value, scope) or any(self.may_require_grad(a, scope)
                                                                        for a in args)
        if qualified.startswith("torch."):
            return any(self.may_require_grad(a, scope) for a in args)
        return False

    # -- dtypes --------------------------------------------------------------------------------------------
    def dtype(self, node: cst.CSTNode, scope: Scope) -> Dtype:
        """The dtype ``node`` had in every legacy version."""
        kind = type(node)
        if int_literal(node) is not None:
            return Dtype.SCALAR
        if kind is cst.Float:
            return Dtype.FLOAT
        if kind in (cst.Name, cst.Attribute):
            return self._over("dtype", node, scope, Dtype.SAME, self._bindings_dtype) or Dtype.UNKNOWN
        if kind is cst.Call:
            return self._call_dtype(node, scope)
        if kind is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Subtract, cst.Multiply, cst.Modulo):
            kinds = {self.dtype(node.left, scope), self.dtype(node.right, scope)}
            if kinds <= {Dtype.INT, Dtype.SCALAR, Dtype.SAME}:
                return next(k for k in (Dtype.INT, Dtype.SAME, Dtype.SCALAR) if k in kinds)
        return Dtype.UNKNOWN

    def _bindings_dtype(self, bound: List[Bound]) -> Dtype:
        kinds = set()
        for kind, value, at in bound:
            if kind == "value":
                kinds.add(self.dtype(value, at))
            elif kind == "aug" and type(value.operator) in (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign,
                                                              cst.ModuloAssign):
                kinds.add(Dtype.SAME)  # keeps the target's dtype
            elif kind == "aug" and type(value.operator) is cst.DivideAssign:
                kinds.add(Dtype.DIVIDED)  # in place on a tensor; a Python int becomes a float
            else:
                kinds.add(Dtype.UNKNOWN)
        if Dtype.DIVIDED in kinds and kinds & {Dtype.SCALAR, Dtype.UNKNOWN}:
            return Dtype.UNKNOWN
        kinds -= {Dtype.SAME, Dtype.DIVIDED}
        return kinds.pop() if len(kinds) == 1 else Dtype.UNKNOWN

    def _call_dtype(self, node: cst.Call, scope: Scope) -> Dtype:
        qualified = self.model.qualname(node.func) or ""
        last = qualified.rpartition(".")[2]
        if qualified in ("len", "int") or (type(node.func) is cst.Name and node.func.value == "len"):
            return Dtype.SCALAR
        if qualified.startswith("torch.") and torchapi.TENSOR_TYPE_DTYPES.get(last) in torchapi.INTEGER_DTYPES:
            return Dtype.UINT8 if last == "ByteTensor" else Dtype.INT
        dtype = argument(node, "dtype")
        if dtype is not None and qualified.startswith("torch."):
            spelled = torchapi.DTYPES.get((self.model.qualname(dtype.value) or "").rpartition(".")[2])
            return Dtype.UINT8 if spelled == "uint8" else Dtype.INT if spelled in torchapi.INTEGER_DTYPES \
                else Dtype.UNKNOWN
        if qualified in torchapi.INT64_FUNCTIONS:
            return Dtype.INT
        method = method_name(node)
        cast = torchapi.CAST_METHODS.get(method or "")
        if cast in torchapi.INTEGER_DTYPES and not node.args:
            return Dtype.UINT8 if cast == "uint8" else Dtype.INT
        if method == "type" and node.args:
            spelled = string(node.args[0].value) or self.model.qualname(node.args[0].value) or ""
            made = torchapi.TENSOR_TYPE_DTYPES.get(spelled.rpartition(".")[2])
            return Dtype.UINT8 if made == "uint8" else Dtype.INT if made in torchapi.INTEGER_DTYPES else Dtype.UNKNOWN
        if method in torchapi.SAME_DTYPE_METHODS:
            return self.dtype(node.func.value, scope)
        if method == "size" and node.args:
            return Dtype.SCALAR
        function = self.function(node, scope)
        if function is not None:
            key = ("returns", id(function))
            if key not in self.memo:
                self.memo[key] = Dtype.UNKNOWN  # while its returns are read: a recursive call is unknown
                body = self.model.scope_of_definition(function)
                kinds = {self.dtype(value, body) for value in body.returns}
                self.memo[key] = kinds.pop() if len(kinds) == 1 else Dtype.UNKNOWN
            return self.memo[key]
        return Dtype.UNKNOWN

    def number(self, node: cst.CSTNode, scope: Scope, depth: int = 0) -> Dtype:
        """``SCALAR`` (a Python int or bool), ``FLOAT`` or ``UNKNOWN`` for a Python number."""
        kind = type(node)
        if int_literal(node) is not None or literal(node) in (True, False) and kind is cst.Name:
            return Dtype.SCALAR
        if kind is cst.Float or (kind is cst.UnaryOperation and type(node.expression) is cst.Float):
            return Dtype.FLOAT
        if kind is cst.Call and dotted(node.func) == "float":
            return Dtype.FLOAT
        if kind is cst.BinaryOperation:
            if type(node.operator) is cst.Divide:
                return Dtype.FLOAT
            kinds = {self.number(node.left, scope, depth), self.number(node.right, scope, depth)}
            return Dtype.FLOAT if Dtype.FLOAT in kinds else Dtype.SCALAR if kinds == {Dtype.SCALAR} else Dtype.UNKNOWN
        if kind is cst.Name and depth < 3:
            kinds = {self.number(v, s, depth + 1) if k == "value" else Dtype.UNKNOWN
                     for k, v, s in self.bindings(node, scope) or ()}
            return kinds.pop() if len(kinds) == 1 else Dtype.UNKNOWN
        return Dtype.UNKNOWN

    # -- checkpoints ---------------------------------------------------------------------------------------
    def path_keys(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> Set[str]:
        """Everything that identifies the file ``expr`` names: its text, a normalized literal path, an
        argparse default, what a variable or ``open(...)`` is bound to."""
        keys = {"code:" + "".join(code(expr).split())}
        text = string(expr)
        if text:
            keys.add("path:" + os.path.normpath(text))
        if depth > 3:
            return keys
        if type(expr) is cst.Call and dotted(expr.func) == "open" and expr.args:
            keys |= self.path_keys(expr.args[0].value, scope, depth + 1)
        elif type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            default = self.facts.argparse_defaults.get(expr.attr.value)
            if default is not None:
                keys |= self.path_keys(default, scope, depth + 1)
        elif type(expr) is cst.Name:
            for kind, value, at in self.bindings(expr, scope) or ():
                if value is not None and kind in ("value", "with", "param"):
                    keys |= self.path_keys(value, at, depth + 1)
        return keys

    def saved(self, obj: cst.CSTNode, scope: Scope, depth: int = 0) -> Saved:
        """What ``torch.load`` makes of ``obj`` once ``torch.save`` wrote it."""
        kind = type(obj)
        if kind in (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString) or (
                kind is cst.Name and obj.value in ("True", "False", "None")):
            return Saved.SAFE
        if self.is_module(obj, scope):
            return Saved.MODULE
        if method_name(obj) in ("state_dict", "item", "tolist"):
            return Saved.SAFE
        if kind in (cst.Dict, cst.List, cst.Tuple):
            values = [e.value for e in obj.elements if type(e) in (cst.DictElement, cst.Element)]
            if len(values) != len(obj.elements):
                return Saved.UNKNOWN
            return max((self.saved(v, scope, depth + 1) for v in values), key=lambda s: s.value,
                       default=Saved.SAFE)
        if kind is cst.Call:
            qualified = self.model.qualname(obj.func) or ""
            if qualified.startswith(("torch.optim.", "numpy.")) or method_name(obj) == "parse_args":
                return Saved.OTHER
            return Saved.UNKNOWN
        if kind is cst.Attribute and type(obj.value) is cst.Name:
            bound = self.bindings(obj.value, scope)
            if bound and all(k == "value" and method_name(v) == "parse_args" for k, v, _ in bound):
                return Saved.SAFE  # argparse values are str/int/float/bool/lists
        if kind in (cst.Name, cst.Attribute) and depth < 3:
            bound = self.bindings(obj, scope)
            if not bound:
                return Saved.UNKNOWN
            kinds = []
            for k, value, at in bound:
                if k == "value":
                    kinds.append(self.saved(value, at, depth + 1))
                elif k == "for" and type(value) is cst.Call and dotted(value.func) == "range":
                    kinds.append(Saved.SAFE)
                else:
                    kinds.append(Saved.UNKNOWN)
            return max(kinds, key=lambda s: s.value)
        return Saved.UNKNOWN

    def constructor(self, node: cst.CSTNode, scope: Scope) -> str:
        """The qualified constructor the variable ``node`` is bound to, if one."""
        for kind, value, _ in self.bindings(node, scope) or ():
            if kind == "value" and type(value) is cst.Call:
                return self.model.qualname(value.func) or ""
        return ""
