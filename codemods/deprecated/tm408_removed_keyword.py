"""TM408: keywords that were removed rather than renamed: the values become positional, or the keyword goes."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.deprecated.common import flag, with_args
from codemods.syntax import code
from codemods.torchapi.deprecations import DROPPED_KEYWORDS, POSITIONAL_KEYWORDS


class RemovedKeyword(Rule):
    """0.3's ``TensorDataset(data_tensor=x, target_tensor=y)`` is a TypeError since 0.4 (the dataset takes
    ``*tensors``): the two values become positional, in that order, which is what 0.3 stored as
    ``(data, target)`` pairs (``POSITIONAL_KEYWORDS``). Learning-rate schedulers' ``verbose=`` was
    deprecated in 2.2 and is a TypeError now (``DROPPED_KEYWORDS``): ``verbose=False`` goes (a safe fix);
    ``verbose=True`` or a computed flag only printed each change of the learning rate, so dropping it
    changes printed output, not numbers (an unsafe fix). A call that also passes other arguments in those
    positions, or ``*args``/``**kwargs``, is reported."""

    code = "TM408"
    name = "removed-keyword"
    summary = ("removed keywords: `TensorDataset(data_tensor=, target_tensor=)` become positional; schedulers' "
               "`verbose=` goes")
    triggers = ("data_tensor", "target_tensor", "verbose")
    requires = ("torch",)
    changes = (
        Example("import torch.utils.data as data\n\nds = data.TensorDataset(data_tensor=x, target_tensor=y)\n",
                "import torch.utils.data as data\n\nds = data.TensorDataset(x, y)\n"),
        Example("from torch.utils.data import TensorDataset\n\n"
                "train = TensorDataset(target_tensor=labels, data_tensor=images)\n",
                "from torch.utils.data import TensorDataset\n\ntrain = TensorDataset(images, labels)\n"),
        Example("from torch.optim import lr_scheduler\n\n"
                "sched = lr_scheduler.ReduceLROnPlateau(optimizer, 'min', patience=3, verbose=False)\n",
                "from torch.optim import lr_scheduler\n\n"
                "sched = lr_scheduler.ReduceLROnPlateau(optimizer, 'min', patience=3)\n"),
        Example("import torch\n\nsched = torch.optim.lr_scheduler.StepLR(opt, 30, verbose=True)\n",
                "import torch\n\nsched = torch.optim.lr_scheduler.StepLR(opt, 30)\n", unsafe=True),
        Example("import torch.utils.data as data\n\nds = data.TensorDataset(extra, data_tensor=x, target_tensor=y)\n"),
    )
    keeps = (
        "import torch.utils.data as data\n\nds = data.TensorDataset(x, y)\n",
        "from mylib import TensorDataset\n\nds = TensorDataset(data_tensor=x, target_tensor=y)\n",
        "import torch\nfrom torch.optim import lr_scheduler\n\nsched = lr_scheduler.StepLR(opt, 30)\n"
        "parser.add_argument('--verbose', action='store_true')\ntrainer = Trainer(verbose=True)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) not in (cst.Name, cst.Attribute):
            return
        qualified = self.ctx.model.qualname(node.func) or ""
        if qualified in POSITIONAL_KEYWORDS:
            self._positional(node, qualified.rpartition(".")[2], POSITIONAL_KEYWORDS[qualified])
        elif qualified in DROPPED_KEYWORDS:
            name, why = DROPPED_KEYWORDS[qualified]
            given = [a for a in node.args if a.keyword is not None and a.keyword.value == name]
            if not given:
                return
            value = flag(given[0].value)
            short = qualified.rpartition(".")[2]
            message = f"`{short}({name}=)` was {why}: the keyword goes"
            if value is not False:
                message += f" (`{name}={code(given[0].value)}` printed each change of the learning rate: no longer)"
            self.report(node, message, lambda call: _without(call, name), unsafe=value is not False)

    def _positional(self, node: cst.Call, short: str, names) -> None:
        given = {a.keyword.value: a for a in node.args if a.keyword is not None and a.keyword.value in names}
        if not given:
            return
        message = f"`{short}({', '.join(n + '=' for n in names)})` were removed in 0.4 (a TypeError)"
        others = [a for a in node.args if a.keyword is None or a.keyword.value not in names]
        if others or any(n not in given for n in names[:len(given)]):
            self.report(node, message + ": pass the tensors positionally, in that order")
            return
        self.report(node, message + ": the tensors become positional", lambda call: _positional(call, names))


def _positional(call: cst.Call, names) -> cst.Call:
    by_name = {a.keyword.value: a for a in call.args if a.keyword is not None}
    args = [cst.Arg(value=by_name[n].value) for n in names if n in by_name]
    return with_args(call, args)


def _without(call: cst.Call, name: str) -> cst.Call:
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    return with_args(call, args) if args else call.with_changes(args=())


RULE = RemovedKeyword
