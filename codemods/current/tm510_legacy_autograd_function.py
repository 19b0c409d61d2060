"""TM510: a legacy ``autograd.Function`` (non-static ``forward``) becomes a static one called with ``.apply``."""
from __future__ import annotations

from typing import List

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.legacy_function import (Concern, Obstacle, Plan, backward_returns, carried, constructor_values,
                                              is_static, plan, self_name)

# How TM510 words the analysis' reasons.
OBSTACLES = {
    Obstacle.OTHER_METHODS: "it has methods besides `__init__`, `forward` and `backward`",
    Obstacle.STAR_PARAMETERS: "`__init__` or `forward` takes `*args`/`**kwargs` or defaulted inputs beside "
                              "constructor arguments",
    Obstacle.NAME_CLASH: "a constructor parameter clashes with a name `forward` uses",
    Obstacle.CLASS_ATTRIBUTE: "`forward`/`backward` read attributes the class defines or inherits, which the ctx "
                              "does not have",
    Obstacle.BACKWARD_RETURN: "a `backward` return cannot get the extra `None` gradients",
    Obstacle.USE: "the class is used other than `MyFn(...)(inputs)` or as a stored instance that is only called",
    Obstacle.CALL: "a call site passes inputs by keyword or with `*`, or constructor arguments it cannot place",
    Obstacle.STORED_STATE: "an instance with constructor arguments is stored and called later",
    Obstacle.NO_BACKWARD: "it has no `backward`",
}
CONCERNS = {
    Concern.INIT_CODE: "`__init__` runs code besides `self.x = ...`, now run at every call",
    Concern.MUTATED: "`forward`/`backward` change state `__init__` set, which now starts fresh at every call",
    Concern.SELF_VALUE: "`self` is used as a value (not only `self.x`), and is now the ctx",
}

LEGACY = ("import torch\n\n\nclass GradReverse(torch.autograd.Function):\n    def __init__(self, lambd):\n"
          "        self.lambd = lambd\n\n    def forward(self, x):\n        return x.view_as(x)\n\n"
          "    def backward(self, grad_output):\n        return (grad_output * -self.lambd)\n\n\n"
          "def grad_reverse(x, lambd=1.0):\n    return GradReverse(lambd)(x)\n")
CONVERTED = ("import torch\n\n\nclass GradReverse(torch.autograd.Function):\n    @staticmethod\n"
             "    def forward(ctx, x, lambd):\n        ctx.lambd = lambd\n        return x.view_as(x)\n\n"
             "    @staticmethod\n    def backward(ctx, grad_output):\n"
             "        return (grad_output * -ctx.lambd), None\n\n\n"
             "def grad_reverse(x, lambd=1.0):\n    return GradReverse.apply(x, lambd)\n")


class LegacyAutogradFunction(Rule):
    """An ``autograd.Function`` with a non-static ``forward`` (called as ``MyFn()(x)``) raises since PyTorch 1.3
    ("Legacy autograd function with non-static forward method is deprecated"). The class becomes a static one:
    ``forward(ctx, ...)`` and ``backward(ctx, ...)`` with ``self.`` read as ``ctx.`` (``save_for_backward``,
    ``saved_tensors`` for the deprecated ``saved_variables``, ``needs_input_grad``, ``mark_dirty`` and attributes
    set in ``forward`` for ``backward`` are all the ctx's). Constructor arguments travel through ``apply``:
    ``__init__(self, alpha)`` storing ``self.alpha = alpha`` becomes an extra ``forward`` parameter (its
    statements move to the top of ``forward``), every ``backward`` return gets a ``None`` gradient for it, and
    ``MyFn(alpha)(x)`` becomes ``MyFn.apply(x, alpha)``; a stored instance (``fn = MyFn()``,
    ``self.fn = MyFn()``) becomes ``MyFn.apply``. It is an unsafe fix when ``__init__`` runs other code or
    ``forward``/``backward`` change the state it set (now fresh at every call), or ``self`` is used as a value;
    a report when the class or its uses cannot be converted (other methods, class attributes read through
    ``self``, calls by keyword, a stored instance with constructor arguments, ``MyFn().forward(x)``)."""

    code = "TM510"
    min_torch = "0.4"
    name = "legacy-autograd-function"
    summary = "legacy `autograd.Function` (non-static `forward`) becomes static: `ctx`, `MyFn.apply(x, *init args)`"
    triggers = ("Function",)
    imports = ("torch",)
    changes = (
        Example(
            "from torch.autograd import Function\nclass Double(Function):\n    def forward(self, x):\n"
            "        self.save_for_backward(x)\n        return x * 2\n\n    def backward(self, g):\n"
            "        x, = self.saved_variables\n        return g * 2\ny = Double()(x)\n",
            "from torch.autograd import Function\nclass Double(Function):\n    @staticmethod\n"
            "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * 2\n\n    @staticmethod\n"
            "    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return g * 2\ny = Double.apply(x)\n",
        ),
        Example(LEGACY, CONVERTED),
        Example(
            "import torch\nclass Scale(torch.autograd.Function):\n    def __init__(self, k):\n        self.k = k\n"
            "        self.calls = 0\n    def forward(self, x):\n        self.calls += 1\n        return x * self.k\n"
            "    def backward(self, g):\n        return g * self.k\ny = Scale(2)(x)\n",
            "import torch\nclass Scale(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, k):\n"
            "        ctx.k = k\n        ctx.calls = 0\n        ctx.calls += 1\n        return x * ctx.k\n"
            "    @staticmethod\n    def backward(ctx, g):\n        return g * ctx.k, None\ny = Scale.apply(x, 2)\n",
            unsafe=True,
        ),
        Example(
            "import torch\nclass Clip(torch.autograd.Function):\n    def __init__(self, t):\n        self.t = t\n"
            "    def forward(self, x):\n        return x.clamp(-self.t, self.t)\n    def backward(self, g):\n"
            "        return g\nclip = Clip(1.0)\ny = clip(x)\n",
        ),
    )
    keeps = (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        return x\ny = F.apply(x)\n",
        "class Function:\n    def forward(self, x):\n        return x\n",
        "import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n",
    )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        model = self.ctx.model
        if not any(model.qualname(b.value) in torchapi.AUTOGRAD_FUNCTION for b in node.bases):
            return
        forward = next((s for s in node.body.body if type(s) is cst.FunctionDef and s.name.value == "forward"), None)
        if forward is None or is_static(forward) or not forward.params.params:
            return
        message = "legacy autograd Function (non-static `forward`) raises since PyTorch 1.3"
        found = plan(self.ctx, node)
        if found.obstacles:
            reasons = "; ".join(sorted(OBSTACLES[o] for o in found.obstacles))
            self.report(node, f"{message}; not converted: {reasons}",
                        hint="make forward/backward @staticmethod (ctx first), pass __init__ state as `apply` "
                             "arguments and call `MyFn.apply(...)`")
            return
        unsafe = bool(found.concerns)
        why = f" (unsafe: {'; '.join(sorted(CONCERNS[c] for c in found.concerns))})" if unsafe else ""
        self.report(node, f"{message}: made static, `self` is the ctx, called with `.apply`{why}",
                    lambda updated: convert(updated, found), unsafe=unsafe)
        name = node.name.value
        for site in found.sites:
            values = constructor_values(site.func, found) if found.init_params else []
            extra = ", *constructor arguments" if values else ""
            self.report(site, f"`{name}(...)(inputs)` is `{name}.apply(inputs{extra})`",
                        lambda updated, values=values: self._apply(updated, values), unsafe=unsafe)
        for construction in found.stored:
            self.report(construction, f"a stored `{name}()` instance is `{name}.apply`",
                        lambda updated: cst.Attribute(value=updated.func, attr=cst.Name("apply")), unsafe=unsafe)

    @staticmethod
    def _apply(updated: cst.Call, values: List[cst.BaseExpression]) -> cst.Call:
        construction = updated.func
        args = list(updated.args)
        extra = [cst.Arg(v) for v in values]
        if extra:
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            joined = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in extra[:-1]]
            args = [*args, *joined, extra[-1]]
        return updated.with_changes(func=cst.Attribute(value=construction.func, attr=cst.Name("apply")), args=args)


class _ToCtx(cst.CSTTransformer):
    """``self`` -> ``ctx`` in a method body (``self.saved_variables`` -> ``ctx.saved_tensors``)."""

    def __init__(self, old: str, new: str):
        super().__init__()
        self.old, self.new = old, new

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.new) if updated.value == self.old else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        renamed = torchapi.FUNCTION_CONTEXT_RENAMES.get(updated.attr.value)
        if renamed and type(updated.value) is cst.Name and updated.value.value == self.new:
            return updated.with_changes(attr=cst.Name(renamed))
        return updated


def _static(function: cst.FunctionDef, old: str, new: str) -> cst.FunctionDef:
    params = function.params
    first = params.params[0].with_changes(name=cst.Name(new))
    function = function.with_changes(params=params.with_changes(params=[first, *params.params[1:]]),
                                     body=function.body.visit(_ToCtx(old, new)))
    if is_static(function):
        return function
    return function.with_changes(decorators=[cst.Decorator(cst.Name("staticmethod")), *function.decorators])


def _with_nones(backward: cst.FunctionDef, count: int) -> cst.FunctionDef:
    """Every return of ``backward`` with ``count`` more ``None`` gradients."""
    nones = [cst.Element(cst.Name("None")) for _ in range(count)]
    replacements = {}
    for ret in backward_returns(backward):
        value = ret.value
        if type(value) is cst.Tuple:
            elements = list(value.elements)
            elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            new = value.with_changes(elements=[*elements, *_commas(nones)])
        else:
            new = cst.Tuple([cst.Element(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                             *_commas(nones)], lpar=[], rpar=[])
        replacements[ret] = ret.with_changes(value=new)
    for old, new in replacements.items():
        backward = backward.deep_replace(old, new)
    return backward


def _commas(elements: List[cst.Element]) -> List[cst.Element]:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [e.with_changes(comma=comma) for e in elements[:-1]] + elements[-1:]


def convert(updated: cst.ClassDef, found: Plan) -> cst.ClassDef:
    methods = {s.name.value: s for s in updated.body.body if type(s) is cst.FunctionDef}
    init = methods.get("__init__")
    new = found.ctx_name
    body, lines = [], None
    for statement in updated.body.body:
        if statement is init:
            lines = init.leading_lines  # the next statement takes the removed one's place
            continue
        if lines is not None:
            statement, lines = statement.with_changes(leading_lines=lines), None
        if type(statement) is cst.FunctionDef and statement.name.value == "forward":
            statement = _forward(statement, init, found, new)
        elif type(statement) is cst.FunctionDef and statement.name.value == "backward":
            if found.init_params:
                statement = _with_nones(statement, len(found.init_params))
            statement = _static(statement, self_name(statement), new)
        body.append(statement)
    return updated.with_changes(body=updated.body.with_changes(body=body))


def _forward(forward: cst.FunctionDef, init, found: Plan, new: str) -> cst.FunctionDef:
    converted = _static(forward, self_name(forward), new)
    if init is None:
        return converted
    params = converted.params.params
    added = [p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in init.params.params[1:]]
    if added:
        params = [*params[:-1], params[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                  *[p.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for p in added[:-1]],
                  added[-1]]
    moved = [s.visit(_ToCtx(self_name(init), new)) for s in carried(init)]
    statements = list(converted.body.body)
    at = 1 if statements and type(statements[0]) is cst.SimpleStatementLine and type(
        statements[0].body[0]) is cst.Expr and type(statements[0].body[0].value) is cst.SimpleString else 0
    statements[at:at] = [s.with_changes(leading_lines=[]) if i == 0 else s for i, s in enumerate(moved)]
    return converted.with_changes(params=converted.params.with_changes(params=params),
                                  body=converted.body.with_changes(body=statements))


RULE = LegacyAutogradFunction
