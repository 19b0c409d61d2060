"""TM508: ``F.grid_sample``/``F.affine_grid`` without ``align_corners`` keep the legacy ``align_corners=True``."""
from __future__ import annotations

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.analysis import has_keyword
from codemods.syntax import append_argument, keyword


class GridAlignCorners(Rule):
    """``F.grid_sample``/``F.affine_grid`` computed with ``align_corners=True`` before PyTorch 1.3; the default
    is False since then (different values, and a warning on every call). Legacy code never passed it, so
    ``align_corners=True`` keeps its values exactly. The keyword exists since 1.3: under an older
    ``--min-torch`` the call is reported and left."""

    code = "TM508"
    min_torch = "1.3"
    name = "grid-align-corners"
    summary = "`F.grid_sample`/`F.affine_grid` without `align_corners` keep the legacy `align_corners=True`"
    triggers = ("grid_sample", "affine_grid")
    imports = ("torch",)
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
        position = torchapi.ALIGN_CORNERS_POSITION.get(self.ctx.model.qualname(node.func) or "")
        if position is None or has_keyword(node, "align_corners"):
            return
        if len([a for a in node.args if a.keyword is None]) > position:
            return
        self.report(node, "the default `align_corners` changed from True to False in PyTorch 1.3",
                    lambda updated: append_argument(updated, keyword("align_corners", cst.Name("True"))))


RULE = GridAlignCorners
