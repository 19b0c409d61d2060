"""TM404: softmax without ``dim`` (the legacy implicit dim) is reported; ``dim=1`` is an unsafe fix."""
from __future__ import annotations

from typing import Tuple

import libcst as cst

from codemods.base import Example
from codemods.deprecated.common import TableRule, argument, flag, set_keyword
from codemods.torchapi.deprecations import SOFTMAX_FUNCTIONS, SOFTMAX_MODULES


class ImplicitSoftmaxDim(TableRule):
    """``F.softmax(x)``, ``F.log_softmax(x)``, ``F.softmin(x)`` and ``nn.Softmax()`` without ``dim``
    use the legacy implicit choice (dim 0 for 0-, 1- and 3-dim inputs, else 1) and warn. The right
    ``dim`` depends on the input's rank, unknown statically: reported, with ``dim=1`` as an unsafe
    fix (the legacy choice for 2- and 4-dim inputs, e.g. batch x classes; it differs silently for a
    3-dim input and raises for a 1-dim one)."""

    code = "TM404"
    name = "implicit-softmax-dim"
    summary = "softmax/log_softmax/softmin without `dim` (legacy implicit dim) are reported; `dim=1` is an unsafe fix"
    triggers = ("softmax", "Softmax", "softmin", "Softmin")
    table = frozenset((*SOFTMAX_FUNCTIONS, *SOFTMAX_MODULES))
    imports = ("torch",)
    changes = (
        Example("import torch.nn.functional as F\n\np = F.log_softmax(self.fc(x))\n",
                "import torch.nn.functional as F\n\np = F.log_softmax(self.fc(x), dim=1)\n", unsafe=True),
        Example("import torch.nn as nn\n\nact = nn.Softmax()\n", "import torch.nn as nn\n\nact = nn.Softmax(dim=1)\n",
                unsafe=True),
    )
    keeps = (
        "import torch.nn.functional as F\n\np = F.softmax(x, dim=-1)\nq = F.log_softmax(x, 1)\n",
        "import torch\n\np = torch.softmax(x, 1)\n",
        "import torch.nn as nn\n\nact = nn.Softmax(1)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.resolve(node.func)
        if qualified in SOFTMAX_FUNCTIONS:
            params: Tuple[str, ...] = ("input", "dim")
        elif qualified in SOFTMAX_MODULES:
            params = ("dim",)
        else:
            return
        if any(a.star for a in node.args):
            return
        dim = argument(node, params, "dim")
        if dim is not None and flag(dim.value) is not None:
            return
        short = qualified.rpartition(".")[2]
        self.report(node, f"`{short}` without `dim`: the legacy implicit dim (0 for 0-, 1-, 3-dim inputs, else 1) "
                          "is deprecated; pass `dim=` (`dim=1` for batch x classes)",
                    lambda updated: set_keyword(updated, "dim", "1"), unsafe=True)


RULE = ImplicitSoftmaxDim
