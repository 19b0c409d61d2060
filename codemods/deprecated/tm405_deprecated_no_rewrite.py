"""TM405: deprecated or removed functions without an exact replacement are reported."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.deprecated.common import TableRule
from codemods.torchapi.deprecations import REPORTED


class DeprecatedNoRewrite(TableRule):
    """Deprecated or removed functions with no exact drop-in replacement (``REPORTED``, from
    TorchFix's deprecated symbol table and the 0.3 linear-algebra names): the replacement
    returns something else (``V`` vs ``Vh``, complex eigenvalues) or changes saved state
    (``weight_norm``), so each is reported with what to use instead."""

    code = "TM405"
    name = "deprecated-no-rewrite"
    summary = ("deprecated or removed functions without an exact replacement (`torch.symeig`, `torch.svd`, "
               "`weight_norm`, ...) are reported")
    triggers = tuple(sorted({q.rpartition(".")[2] for q in REPORTED}))
    table = frozenset(REPORTED)
    imports = ("torch",)
    changes = (
        Example("import torch\n\ne, v = torch.symeig(A, eigenvectors=True)\n"),
        Example("import torch.nn as nn\n\nlayer = nn.utils.weight_norm(nn.Linear(3, 4))\n"),
    )
    keeps = (
        "import torch\n\ne, v = torch.linalg.eigh(A)\n",
        "import numpy as np\n\nn = np.linalg.norm(x)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.resolve(node.func)
        if qualified in REPORTED:
            self.report(node, f"`{qualified}` {REPORTED[qualified]}")


RULE = DeprecatedNoRewrite
