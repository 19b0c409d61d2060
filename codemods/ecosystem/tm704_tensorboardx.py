"""TM704: ``tensorboardX.SummaryWriter`` becomes ``torch.utils.tensorboard.SummaryWriter``."""
from __future__ import annotations

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.syntax import TIGHT_EQUAL, code
from codemods.walk import walk

IMPORT = "from tensorboardX import SummaryWriter\n"
TRAIN = "\nwriter = SummaryWriter(logdir='runs/exp')\nfor step in range(3):\n    writer.add_scalar('loss', 0.5, step)\nwriter.close()\n"


class TensorboardX(Rule):
    """torch has shipped ``torch.utils.tensorboard.SummaryWriter`` since 1.1 with the same methods
    (``add_scalar``, ``add_image``, ``add_histogram``, ``add_graph``, ...) and the same event files;
    tensorboardX is a second dependency for it. The rule moves the import and renames the constructor's
    ``logdir=`` to ``log_dir=`` when the file uses nothing that only tensorboardX has
    (``export_scalars_to_json``, ``write_to_disk=``, ``comet_config=``, ...); otherwise it reports
    those uses. The fix is unsafe because torch's writer needs the ``tensorboard`` package where
    tensorboardX did not: the script fails at import where it is missing (``pip install tensorboard``)."""

    code = "TM704"
    name = "tensorboardx"
    summary = "`tensorboardX.SummaryWriter` becomes `torch.utils.tensorboard.SummaryWriter` where only the shared API is used"
    triggers = ("tensorboardX",)
    changes = (
        Example(IMPORT + TRAIN,
                "from torch.utils.tensorboard import SummaryWriter\n" + TRAIN.replace("logdir=", "log_dir="),
                unsafe=True),
        Example("import tensorboardX\n\nwriter = tensorboardX.SummaryWriter('runs')\n",
                "import torch.utils.tensorboard\n\nwriter = torch.utils.tensorboard.SummaryWriter('runs')\n",
                unsafe=True),
        Example(IMPORT + TRAIN + "writer.export_scalars_to_json('./all_scalars.json')\n", None),
    )
    keeps = (
        "from torch.utils.tensorboard import SummaryWriter\nwriter = SummaryWriter()\n",
        "from tensorboardX import GlobalSummaryWriter\nwriter = GlobalSummaryWriter()\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        """What of the file only tensorboardX has (any receiver: the writer may travel through parameters)."""
        attributes, keywords = set(), set()
        for child in walk(node):
            if type(child) is cst.Attribute:
                attributes.add(child.attr.value)
            elif type(child) is cst.Arg and child.keyword is not None:
                keywords.add(child.keyword.value)
        self.blocked = sorted(attributes & torchapi.TENSORBOARDX_ONLY_METHODS |
                              keywords & torchapi.TENSORBOARDX_ONLY_KEYWORDS)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or code(node.module) != "tensorboardX" or \
                isinstance(node.names, cst.ImportStar):
            return
        if {alias.name.value for alias in node.names} != {"SummaryWriter"}:
            return
        if self._report_blocked(node):
            return
        self.report(node, "tensorboardX's `SummaryWriter` is `torch.utils.tensorboard.SummaryWriter` (same methods, "
                          "same event files; needs the `tensorboard` package)",
                    lambda old: old.with_changes(module=cst.parse_expression("torch.utils.tensorboard")), unsafe=True)

    def visit_Import(self, node: cst.Import) -> None:
        if [alias.name.value for alias in node.names if type(alias.name) is cst.Name] != ["tensorboardX"] or \
                len(node.names) != 1 or node.names[0].asname is not None or self._report_blocked(node):
            return
        self.report(node, "`import tensorboardX` for its `SummaryWriter`: `torch.utils.tensorboard` has it (needs the "
                          "`tensorboard` package)",
                    lambda old: old.with_changes(names=[cst.ImportAlias(cst.parse_expression("torch.utils.tensorboard"))]),
                    unsafe=True)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.blocked or self.ctx.model.qualname(node) != "tensorboardX.SummaryWriter":
            return
        self.report(node, "`tensorboardX.SummaryWriter`: `torch.utils.tensorboard.SummaryWriter`",
                    lambda old: cst.parse_expression("torch.utils.tensorboard.SummaryWriter"), unsafe=True)

    def visit_Arg(self, node: cst.Arg) -> None:
        """``SummaryWriter(logdir=...)``: torch's writer calls it ``log_dir``."""
        call = self.ctx.parent()
        new = torchapi.TENSORBOARDX_RENAMED_KEYWORDS.get(node.keyword.value) if node.keyword else None
        if new is None or self.blocked or type(call) is not cst.Call or \
                self.ctx.model.qualname(call.func) != "tensorboardX.SummaryWriter":
            return
        self.report(node, f"`{node.keyword.value}=` is `{new}=` in torch's `SummaryWriter`",
                    lambda old: old.with_changes(keyword=cst.Name(new), equal=old.equal or TIGHT_EQUAL), unsafe=True)

    def _report_blocked(self, node: cst.CSTNode) -> bool:
        if self.blocked:
            self.report(node, "tensorboardX's `SummaryWriter` has no torch counterpart for " + ", ".join(
                f"`{name}`" for name in self.blocked) + ": keep tensorboardX or drop those uses first")
        return bool(self.blocked)


RULE = TensorboardX
