"""TM406: linear-mode upsampling without ``align_corners`` (0.3 aligned corners) is reported."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.deprecated.common import argument, set_keyword
from codemods.torchapi.deprecations import LINEAR_MODES, UPSAMPLE


class LegacyUpsampleCorners(Rule):
    """In 0.3, ``nn.Upsample``/``F.upsample`` with a linear mode aligned corners; 0.4.0 added
    ``align_corners`` with default ``False`` (different values for the same call). A legacy call
    without ``align_corners`` therefore computes something else today. Whether the script was
    written for 0.3 (then ``align_corners=True`` restores it) or for a later version is not
    visible: reported, with ``align_corners=True`` as an unsafe fix."""

    code = "TM406"
    name = "legacy-upsample-corners"
    summary = ("linear-mode `F.upsample`/`nn.Upsample` without `align_corners` (0.3 aligned corners) are reported; "
               "`align_corners=True` is an unsafe fix")
    triggers = ("upsample", "Upsample")
    imports = ("torch",)
    changes = (
        Example("import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2, mode='bilinear')\n",
                "import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)\n",
                unsafe=True),
        Example("import torch.nn.functional as F\n\ny = F.upsample(x, size=(8, 8), mode='bilinear')\n",
                "import torch.nn.functional as F\n\ny = F.upsample(x, size=(8, 8), mode='bilinear', "
                "align_corners=True)\n", unsafe=True),
    )
    keeps = (
        "import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2)\n"
        "up2 = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)\n",
        "import torch.nn.functional as F\n\ny = F.interpolate(x, scale_factor=2, mode='bilinear')\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not type(node.func) in (cst.Name, cst.Attribute) or self.ctx.model.qualname(node.func) not in UPSAMPLE:
            return
        params = ("input", "size", "scale_factor", "mode", "align_corners")
        if self.ctx.model.qualname(node.func) == "torch.nn.Upsample":
            params = params[1:]
        mode, corners = argument(node, params, "mode"), argument(node, params, "align_corners")
        if corners is not None or mode is None or not isinstance(mode.value, cst.SimpleString) \
                or mode.value.evaluated_value not in LINEAR_MODES or any(a.star for a in node.args):
            return
        self.report(node, f"mode={mode.value.value} without `align_corners`: 0.3 aligned corners, the default "
                          "since 0.4.0 does not (different values); `align_corners=True` if this is 0.3 code",
                    lambda updated: set_keyword(updated, "align_corners", "True"), unsafe=True)


RULE = LegacyUpsampleCorners
