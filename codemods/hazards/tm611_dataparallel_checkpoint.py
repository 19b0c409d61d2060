"""TM611: a ``DataParallel`` model's state dict loaded into a bare model, or the reverse."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.checkpoints import Wrapping, checkpoints
from codemods.positions import positions


class DataParallelCheckpoint(Rule):
    """A state dict saved from a model wrapped in ``nn.DataParallel``/``DistributedDataParallel`` and loaded
    into an unwrapped model in the same file (or saved bare and loaded into a wrapped one).

    The wrapper keeps the model as its ``module`` attribute, so its ``state_dict()`` keys are
    ``module.conv1.weight`` where the bare model's are ``conv1.weight``: ``load_state_dict`` raises "Missing
    key(s) in state_dict ... Unexpected key(s)" (with ``strict=False`` it silently loads nothing). Legacy
    scripts trained on several GPUs and evaluated on one (or on the CPU) hit it as soon as the wrapping
    changes. Fix (described, not applied: which side to change is the author's choice): save
    ``model.module.state_dict()``, or strip the prefix before loading with
    ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state_dict, "module.")`` (torch >= 1.9;
    older: ``{k[len("module."):]: v for k, v in state_dict.items()}``). Reported only where the file shows both
    the save and the load of the same path (and key) and how each model was built.
    """

    code = "TM611"
    name = "dataparallel-checkpoint"
    summary = "state dict of a `DataParallel` model (`module.` keys) loaded into a bare model, or the reverse"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("load_state_dict",)
    requires = ("torch.save", "Parallel")
    changes = (
        Example("import torch\nimport torch.nn as nn\n\nmodel = nn.DataParallel(Net())\n"
                "torch.save(model.state_dict(), 'model.pth')\nnet = Net()\n"
                "net.load_state_dict(torch.load('model.pth'))\n"),
        Example("import torch\nimport torch.nn as nn\n\nmodel = Net()\n"
                "torch.save({'epoch': 3, 'state_dict': model.state_dict()}, args.out)\n"
                "model = nn.DataParallel(model)\ncheckpoint = torch.load(args.out)\n"
                "model.load_state_dict(checkpoint['state_dict'])\n"),
    )
    keeps = (
        "import torch\nimport torch.nn as nn\n\nmodel = nn.DataParallel(Net())\n"
        "torch.save(model.module.state_dict(), 'model.pth')\nnet = Net()\n"
        "net.load_state_dict(torch.load('model.pth'))\n",
        "import torch\nimport torch.nn as nn\n\nmodel = nn.DataParallel(Net())\n"
        "torch.save(model.state_dict(), 'model.pth')\nmodel.load_state_dict(torch.load('model.pth'))\n",
        "import torch\nimport torch.nn as nn\n\nmodel = nn.DataParallel(Net())\n"
        "torch.save(model.state_dict(), 'a.pth')\nnet = Net()\nnet.load_state_dict(torch.load('b.pth'))\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        found = self.ctx.analysis(checkpoints).mismatches()
        if not found:
            return
        lines = positions(node, [m.save for m in found])
        for mismatch in found:
            line = lines[id(mismatch.save)][0]
            if mismatch.saved is Wrapping.WRAPPED:
                what = (f"the state dict saved at line {line} comes from `{mismatch.saver}`, an `nn.DataParallel` "
                        f"(keys `module.*`), and `{mismatch.loader}` is not wrapped")
                hint = (f"save `{mismatch.saver}.module.state_dict()` at line {line}, or strip the prefix before "
                        "loading: `torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state_dict, "
                        "'module.')` (torch >= 1.9)")
            else:
                what = (f"the state dict saved at line {line} comes from the bare `{mismatch.saver}`, and "
                        f"`{mismatch.loader}` is an `nn.DataParallel` (it expects keys `module.*`)")
                hint = f"load into `{mismatch.loader}.module` (or wrap `{mismatch.saver}` before saving)"
            self.report(mismatch.load, f"{what}: 'Missing key(s) in state_dict' (with strict=False nothing is "
                                       f"loaded)", hint=hint)


RULE = DataParallelCheckpoint
