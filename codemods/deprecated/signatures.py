"""The scalar-first signatures of 0.3 (``add_(value, other)``) and their keyword forms, shared by TM403 and
the data family's manual updates (TM304)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.deprecated.common import with_args
from codemods.syntax import keyword
from codemods.torchapi.deprecations import FUNCTION_SIGNATURES, METHOD_SIGNATURES, TENSOR_METHODS


def modern_signature(call: cst.Call, *, tensor_receiver: bool = False,
                     qualified: Optional[str] = None) -> Optional[cst.Call]:
    """The current spelling of a removed positional form (``x.add_(v, t)`` -> ``x.add_(t, alpha=v)``).

    Sound by arity: no current overload of these takes that many positional arguments (``alpha``,
    ``value``, ``beta`` are keyword-only now), so a call of that arity that still runs binds the
    deprecated overload, whose meaning this spells out. ``x.add(a, b)``/``x.sub(a, b)`` without
    an underscore are also methods of non-tensors (meters, sets): only with ``tensor_receiver``.
    """
    if any(a.star for a in call.args) or any(a.keyword is not None and a.keyword.value != "out" for a in call.args):
        return None
    if qualified is not None:
        module, _, name = qualified.rpartition(".")
        table = FUNCTION_SIGNATURES.get(name) if module == "torch" else None
    elif isinstance(call.func, cst.Attribute):
        name = call.func.attr.value
        table = METHOD_SIGNATURES.get(name)
        if name in ("add", "sub") and not tensor_receiver:
            return None
    else:
        return None
    positional = [a for a in call.args if a.keyword is None]
    spec = table.get(len(positional)) if table else None
    if spec is None:
        return None
    order, keywords = spec
    outs = [a for a in call.args if a.keyword is not None]
    args = [positional[i] for i in order] + [keyword(k, positional[i].value) for k, i in keywords] + outs
    return with_args(call, args)


def visibly_tensor(node: cst.CSTNode, qualname) -> bool:
    """``p.data``, ``exp_avg.mul(b)``, ``torch.zeros(3)``: an expression that is a tensor by its form."""
    if isinstance(node, cst.Attribute):
        return node.attr.value in ("data", "grad", "weight", "bias")
    if isinstance(node, cst.Call):
        if isinstance(node.func, (cst.Name, cst.Attribute)) and (qualname(node.func) or "").startswith("torch."):
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in TENSOR_METHODS
    return False
