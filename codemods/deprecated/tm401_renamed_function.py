"""TM401: renamed or removed functions become their current equivalents (``RENAMES``, ``SPECIAL_RENAMES``)."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.deprecated.arguments import SPECIAL_BUILDERS, first_of, rewrite_arguments
from codemods.deprecated.common import Spelling, TableRule, keywords_of, whole_reference
from codemods.torchapi.deprecations import RENAMES, SPECIAL_RENAMES
from codemods.torchapi.since import needed


class RenamedFunction(TableRule):
    """Functions renamed or removed since 0.3, replaced by their current equivalent with the argument
    changes that keep the values (``codemods.torchapi.deprecations``): ``F.sigmoid`` -> ``torch.sigmoid``,
    ``nn.init.xavier_uniform`` -> ``xavier_uniform_``, ``clip_grad_norm`` -> ``clip_grad_norm_``,
    ``F.upsample*`` -> ``F.interpolate`` (``upsample_bilinear`` aligned corners), ``torch.potrf`` ->
    ``torch.linalg.cholesky(upper=True)``, ``torch.gesv(B, A)[0]`` -> ``torch.linalg.solve(A, B)``,
    TorchFix's deprecated symbols with an exact replacement. Where the arguments do not allow an exact
    rewrite (``torch.gesv`` used for its LU too, ``torch.qr`` with a computed ``some``), the call is
    reported and left alone. Each replacement has the torch version it appeared in
    (``codemods.torchapi.since``): under an older ``--min-torch`` the call is reported and left."""

    code = "TM401"
    name = "renamed-function"
    summary = ("renamed or removed functions (`F.sigmoid`, `nn.init.xavier_uniform`, `clip_grad_norm`, "
               "`F.upsample`, `torch.gesv`, ...) become their current equivalents")
    triggers = tuple(sorted({q.rpartition(".")[2] for q in (*RENAMES, *SPECIAL_RENAMES)}))
    imports = ("torch",)
    min_torch = "0.4"  # the in-place init functions and clip_grad_norm_; newer replacements check their own
    table = frozenset((*RENAMES, *SPECIAL_RENAMES))
    changes = (
        Example("import torch\nimport torch.nn.functional as F\n\ny = F.sigmoid(x) + F.tanh(x)\n",
                "import torch\n\ny = torch.sigmoid(x) + torch.tanh(x)\n"),
        Example("import torch.nn as nn\n\nnn.init.xavier_uniform(w, gain=nn.init.calculate_gain('relu'))\n"
                "nn.init.constant(b, 0)\n",
                "import torch.nn as nn\n\nnn.init.xavier_uniform_(w, gain=nn.init.calculate_gain('relu'))\n"
                "nn.init.constant_(b, 0)\n"),
        Example("import torch\n\ntorch.nn.utils.clip_grad_norm(model.parameters(), 0.25)\n",
                "import torch\n\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)\n"),
        Example("import torch.nn.functional as F\n\ny = F.upsample_bilinear(x, scale_factor=2)\n",
                "import torch.nn.functional as F\n\n"
                "y = F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)\n"),
        Example("import torch\n\nx = torch.gesv(b, A)[0]\nU = torch.potrf(A)\n",
                "import torch\n\nx = torch.linalg.solve(A, b)\nU = torch.linalg.cholesky(A, upper=True)\n"),
        Example("from torch.nn.init import kaiming_normal\n\nkaiming_normal(w)\n",
                "from torch.nn.init import kaiming_normal_\n\nkaiming_normal_(w)\n"),
        Example("from torch.nn.functional import tanh\n\nact = tanh\n",
                "import torch\n\nact = torch.tanh\n"),
        Example("import torch\n\nx, lu = torch.gesv(b, A)\n"),
    )
    keeps = (
        "import torch\n\ny = torch.sigmoid(x)\nz = torch.nn.functional.interpolate(x, scale_factor=2)\n",
        "def sigmoid(x):\n    return x\n\n\ny = sigmoid(3)\n",
        "import torch.nn as nn\n\nnn.init.xavier_uniform_(w)\n",
        "import numpy as np\n\nr = np.tanh(x)\n",
    )

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.imported:  # ``resolve``'s test, inline: the walk meets every name
            self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in self.last_names:
            self._reference(node)

    def _reference(self, node: cst.CSTNode) -> None:
        model = self.ctx.model
        qualified = model.qualname(node)
        if qualified is None or qualified not in RENAMES:
            return
        if not whole_reference(model, node):
            return
        parent = model.parent(node)
        replacement = RENAMES[qualified]
        if not replacement.plain:
            if not (type(parent) is cst.Call and parent.func is node):
                self.report(node, f"`{qualified}` is {replacement.note}: `{replacement.new}` (call it with the "
                                  "adjusted arguments; not rewritten as a reference)")
            return
        message = f"`{qualified}` ({replacement.note}) -> `{replacement.new}`"
        late = self.ctx.too_new(needed(replacement.new))
        if late:
            self.report(node, message + late)
            return
        spelling = Spelling(self.ctx)

        def fix(updated):
            new = spelling.new(replacement.new, node)
            spelling.forget(node)
            return new
        self.report(node, message, fix)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qualified = self.resolve(func)
        if qualified in SPECIAL_RENAMES:
            self._special(node, qualified)
            return
        replacement = RENAMES.get(qualified or "")
        if replacement is None or replacement.plain:
            return
        rewritten = rewrite_arguments(node, replacement)
        target, parent = node, self.ctx.model.parent(node)
        if replacement.first_only:
            if first_of(parent, node):
                target = parent
            else:
                rewritten = None
        if rewritten is None:
            self.report(node, f"`{qualified}` ({replacement.note}): `{replacement.new}`, but these arguments or "
                              "this use of the result have no exact rewrite")
            return
        message = f"`{qualified}` ({replacement.note}) -> `{replacement.new}`"
        late = self.ctx.too_new(needed(replacement.new, keywords_of(rewritten)))
        if late:
            self.report(target, message + late)
            return
        spelling = Spelling(self.ctx)

        def fix(updated):
            call = updated.value if target is not node else updated
            if type(call) is not cst.Call:
                return updated
            new_call = rewrite_arguments(call, replacement)
            if new_call is None:
                return updated
            spelling.forget(func)
            new_call = new_call.with_changes(func=spelling.new(replacement.new, func))
            return new_call if target is node else new_call.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        self.report(target, message, fix)

    def _special(self, node: cst.Call, qualified: str) -> None:
        new, what = SPECIAL_RENAMES[qualified]
        build = SPECIAL_BUILDERS[qualified]
        built = build(node)
        if built is None:
            self.report(node, f"`{qualified}` is deprecated: `{new}` ({what}); not rewritten for these arguments")
            return
        message = f"`{qualified}` is deprecated: `{new}` ({what})"
        call, new_name = built
        late = self.ctx.too_new(needed(new_name, keywords_of(call)))
        if late:
            self.report(node, message + late)
            return
        spelling = Spelling(self.ctx)

        def fix(updated):
            result = build(updated)
            if result is None:
                return updated
            call, new_name = result
            spelling.forget(node.func)
            return call.with_changes(func=spelling.new(new_name, node.func))
        self.report(node, message, fix)


RULE = RenamedFunction
