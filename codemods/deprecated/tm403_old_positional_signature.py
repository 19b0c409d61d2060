"""TM403: the scalar-first signatures of 0.3 become keyword forms."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.deprecated.signatures import modern_signature, visibly_tensor
from codemods.torchapi.deprecations import FUNCTION_SIGNATURES, METHOD_SIGNATURES


class OldPositionalSignature(Rule):
    """0.3 put the scalar first: ``add_(value, other)``, ``addcmul_(value, t1, t2)``,
    ``addmm(beta, M, alpha, m1, m2)``. These overloads are deprecated (``add_`` warns) and may go;
    the current forms take the scalar as a keyword (``add_(other, alpha=value)``). The criterion is
    arity, which is sound: no current overload takes that many positional arguments, so a call of
    that arity that runs at all runs the legacy overload (``METHOD_SIGNATURES``,
    ``FUNCTION_SIGNATURES``). ``x.add(a, b)``/``x.sub(a, b)`` without an underscore are also
    methods of other objects (torchnet meters, sets): rewritten only when ``x`` is visibly a tensor
    (``p.data``, ``exp_avg.mul(b)``, a ``torch.*`` call)."""

    code = "TM403"
    name = "old-positional-signature"
    summary = ("scalar-first signatures `add_(value, t)`, `addcmul_(value, t1, t2)`, `addmm(beta, M, alpha, a, b)` "
               "become keyword forms")
    triggers = ("add", "sub(", "sub_(")
    changes = (
        Example("exp_avg.mul_(beta1).add_(1 - beta1, grad)\nexp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)\n"
                "p.data.addcdiv_(-step_size, exp_avg, denom)\n",
                "exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)\n"
                "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n"
                "p.data.addcdiv_(exp_avg, denom, value=-step_size)\n"),
        Example("import torch\n\ny = torch.add(x, 0.5, z)\nm = torch.addmm(0.5, M, 2, a, b)\n",
                "import torch\n\ny = torch.add(x, z, alpha=0.5)\nm = torch.addmm(M, a, b, beta=0.5, alpha=2)\n"),
        Example("avg = p.data.mul(0.9).add(0.1, q.data)\n", "avg = p.data.mul(0.9).add(q.data, alpha=0.1)\n"),
    )
    keeps = (
        "x.add_(y, alpha=2)\ny = x.add(z)\nmeter.add(loss, n)\ns.add(item)\n",
        "import numpy as np\n\nz = np.add(a, b)\n",
        "import torch\n\nm = torch.addmm(M, a, b)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
            else None
        if name is None or (name not in METHOD_SIGNATURES and name not in FUNCTION_SIGNATURES):
            return
        qualified = self.ctx.model.qualname(func)
        tensor = isinstance(func, cst.Attribute) and visibly_tensor(func.value, self.ctx.model.qualname)
        if qualified is None and not isinstance(func, cst.Attribute):
            return
        if modern_signature(node, tensor_receiver=tensor, qualified=qualified) is None:
            return
        self.report(node, f"`{name}` with the scalar first (removed overload): the scalar becomes a keyword",
                    lambda updated: modern_signature(updated, tensor_receiver=tensor, qualified=qualified) or updated)


RULE = OldPositionalSignature
