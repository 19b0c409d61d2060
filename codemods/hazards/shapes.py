"""TM609's analysis: which values are provably a column (shape ``(N, 1)``) and which provably a vector
(shape ``(N,)``), from the semantic model's ranks and what the file shows about the modules it calls.

A column: ``x.view(-1, 1)``/``reshape(n, 1)``, ``v.unsqueeze(1)`` of a vector, the output of ``nn.Linear(k, 1)``,
of an ``nn.Sequential`` whose last layer is one (element-wise activations after it), or of a module class of
the file whose ``forward`` returns only columns; element-wise functions and moves keep it. A vector: rank 1 in
the model, or a sized factory given one number (``torch.ones(n)``, ``torch.full((n,), v)``). Anything else
is unknown, and unknown is never reported.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods import torchapi
from codemods.model import BindingKind, Kind, Scope, SemanticModel, positional
from codemods.syntax import argument, literal

_DEPTH = 6
_VECTOR_FACTORIES = torchapi.SIZED_FACTORIES | torchapi.TENSOR_TYPES


class Shapes:
    def __init__(self, model: SemanticModel):
        self.model = model
        self._visiting: set = set()  # (name, scope) being followed: a binding that reads itself adds no shape

    # -- columns ------------------------------------------------------------------------------------
    def column(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """``expr`` holds an (N, 1) tensor."""
        if depth > _DEPTH:
            return False
        if type(expr) is cst.Name:
            return self._all_bindings(expr.value, scope, lambda value, where: self.column(value, where, depth + 1))
        if type(expr) is not cst.Call:
            return False
        func = expr.func
        if expr.args and self._applies_elementwise(func, scope):  # self.sigmoid(logits)
            return self.column(expr.args[0].value, scope, depth + 1)
        qualified = self.model.qualname(func) if type(func) in (cst.Name, cst.Attribute) else None
        if qualified is not None:
            module, _, name = qualified.rpartition(".")
            if module in ("torch", "torch.nn.functional") and name in torchapi.SAME_SHAPE_FUNCTIONS and expr.args:
                return self.column(expr.args[0].value, scope, depth + 1)
            return False
        if type(func) is cst.Attribute:
            method, receiver = func.attr.value, func.value
            args = positional(expr)
            if method in ("view", "reshape") and len(args) == 2 and len(expr.args) == 2:
                return literal(args[1].value) == 1
            if method == "unsqueeze" and len(args) == 1 and literal(args[0].value) in (1, -1):
                return self.vector(receiver, scope, depth + 1)
            if method in torchapi.SAME_SHAPE_METHODS and method not in ("view_as", "expand_as", "reshape_as"):
                return self.column(receiver, scope, depth + 1)
        return self._module_output(func, scope, depth + 1)

    def _module_output(self, callee: cst.CSTNode, scope: Scope, depth: int) -> bool:
        """Calling ``callee`` gives a column: it is bound only to constructors of column modules."""
        if type(callee) is cst.Name:
            return self._all_bindings(callee.value, scope,
                                      lambda value, where: self._column_module(value, where, depth))
        if type(callee) is cst.Attribute and type(callee.value) is cst.Name and callee.value.value == "self":
            values = self.model.self_attribute_values(callee.attr.value, scope)
            return bool(values) and all(self._column_module(value, where, depth) for where, value in values)
        return False

    def _column_module(self, ctor: cst.CSTNode, scope: Scope, depth: int) -> bool:
        """``ctor`` constructs a module whose output is a column."""
        while type(ctor) is cst.Call and type(ctor.func) is cst.Attribute and \
                ctor.func.attr.value in torchapi.MODULE_SELF_METHODS:
            ctor = ctor.func.value  # nn.Linear(k, 1).cuda()
        if type(ctor) is not cst.Call or depth > _DEPTH:
            return False
        qualified = self.model.qualname(ctor.func) or ""
        if qualified == "torch.nn.Linear":
            out = argument(ctor, "out_features", 1)
            return out is not None and literal(out.value) == 1
        if qualified == "torch.nn.Sequential":
            if any(a.keyword is not None or a.star for a in ctor.args):
                return False
            layers = [a.value for a in ctor.args]
            while layers and self._elementwise(layers[-1]):
                layers.pop()
            return bool(layers) and self._column_module(layers[-1], scope, depth + 1)
        if type(ctor.func) is cst.Name:
            _, bindings = self.model.lookup(ctor.func.value, scope)
            if bindings and len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS and \
                    self.model.is_module_class(bindings[0].node):
                return self._forward_returns_column(bindings[0].node, depth + 1)
        return False

    def _applies_elementwise(self, callee: cst.CSTNode, scope: Scope) -> bool:
        """``callee`` is bound only to element-wise modules (``nn.Sigmoid()``)."""
        if type(callee) is cst.Name:
            return self._all_bindings(callee.value, scope, lambda value, where: self._elementwise(value))
        if type(callee) is cst.Attribute and type(callee.value) is cst.Name and callee.value.value == "self":
            values = self.model.self_attribute_values(callee.attr.value, scope)
            return bool(values) and all(self._elementwise(value) for _, value in values)
        return False

    def _elementwise(self, layer: cst.CSTNode) -> bool:
        qualified = self.model.qualname(layer.func) if type(layer) is cst.Call else None
        return (qualified or "").rpartition(".")[2] in torchapi.ELEMENTWISE_MODULES and (
            qualified or "").startswith("torch.nn.")

    def _forward_returns_column(self, cls: cst.ClassDef, depth: int) -> bool:
        forward = next((s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "forward"), None)
        if forward is None:
            return False
        body = self.model.scope_of_definition(forward)
        return bool(body.returns) and all(self.column(value, body, depth) for value in body.returns)

    # -- vectors ------------------------------------------------------------------------------------
    def vector(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """``expr`` holds an (N,) tensor."""
        found = self.model.value(expr, scope)  # a loss's target is a tensor: a rank "if it is one" is its rank
        if found.kind in (Kind.TENSOR, Kind.UNKNOWN) and found.rank is not None:
            return found.rank == 1
        if depth > _DEPTH:
            return False
        if type(expr) is cst.Name:
            return self._all_bindings(expr.value, scope, lambda value, where: self.vector(value, where, depth + 1))
        if type(expr) is not cst.Call:
            return False
        func = expr.func
        qualified = self.model.qualname(func) if type(func) in (cst.Name, cst.Attribute) else None
        args = positional(expr)
        if qualified in torchapi.VARIABLE and args:
            return self.vector(args[0].value, scope, depth + 1)
        if qualified in _VECTOR_FACTORIES and len(args) == 1 and not any(a.star for a in expr.args):
            return self._number(args[0].value, scope)
        if qualified == "torch.full" and args and type(args[0].value) in (cst.Tuple, cst.List):
            sizes = args[0].value.elements
            return len(sizes) == 1 and self._number(sizes[0].value, scope)
        if type(func) is cst.Attribute and (func.attr.value in torchapi.SAME_SHAPE_METHODS or
                                            func.attr.value in torchapi.INPLACE_METHODS - torchapi.NOT_VALUE_UPDATES):
            return self.vector(func.value, scope, depth + 1)  # .float(), .random_(2), .fill_(1)
        return False

    def _number(self, expr: cst.CSTNode, scope: Scope) -> bool:
        return self.model.value(expr, scope).kind is Kind.NUMBER

    # -- names ----------------------------------------------------------------------------------------
    def _all_bindings(self, name: str, scope: Scope, test) -> bool:
        found, bindings = self.model.lookup(name, scope)
        key = (name, id(found))
        if key in self._visiting:
            return True  # ``x = f(x)`` while following ``x``: the other bindings decide
        if not bindings or not all(b.kind is BindingKind.ASSIGN for b in bindings):
            return False
        self._visiting.add(key)
        try:
            return all(test(b.value, found) for b in bindings)
        finally:
            self._visiting.discard(key)


def shapes(ctx) -> Shapes:
    """The file's ``Shapes``, built once per file."""
    return Shapes(ctx.model)


def loss_name(model: SemanticModel, call: cst.Call) -> Optional[str]:
    """``BCELoss``/``mse_loss`` when ``call`` computes an element-wise loss (``torchapi.ELEMENTWISE_LOSSES``)."""
    func = call.func
    qualified = model.qualname(func) if type(func) in (cst.Name, cst.Attribute) else None
    if qualified is not None:
        module, _, name = qualified.rpartition(".")
        return name if module == "torch.nn.functional" and name in torchapi.ELEMENTWISE_LOSSES else None
    callee = model.value(func)
    if callee.kind in (Kind.LOSS, Kind.MODULE) and (callee.of or "").startswith("torch.nn."):
        name = callee.of.rpartition(".")[2]
        return name if name in torchapi.ELEMENTWISE_LOSSES else None
    return None
