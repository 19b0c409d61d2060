"""TM408: keywords that were removed rather than renamed: the values become positional, or the keyword goes."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.deprecated.common import flag, with_args
from codemods.syntax import code
from codemods.syntax import keyword
from codemods.torchapi.deprecations import DROPPED_KEYWORDS, LEGACY_POSITIONAL, POSITIONAL_KEYWORDS


class RemovedKeyword(Rule):
    """0.3's ``TensorDataset(data_tensor=x, target_tensor=y)`` is a TypeError since 0.4 (the dataset takes
    ``*tensors``): the two values become positional, in that order, which is what 0.3 stored as
    ``(data, target)`` pairs (``POSITIONAL_KEYWORDS``). Learning-rate schedulers' ``verbose=`` was
    deprecated in 2.2 and is a TypeError now (``DROPPED_KEYWORDS``): ``verbose=False`` goes (a safe fix);
    ``verbose=True`` or a computed flag only printed each change of the learning rate, so dropping it
    changes printed output, not numbers (an unsafe fix). ``ReduceLROnPlateau``'s fifth positional parameter
    was ``verbose`` in 0.4-1.x and is ``threshold`` now: a literal ``True``/``False`` there is the legacy
    ``verbose`` (no threshold is a bool), so it goes and the arguments after it are named by their legacy
    order (``LEGACY_POSITIONAL``); a float there is a current threshold; anything else is reported. A call
    that also passes other arguments in those positions, or ``*args``/``**kwargs``, is reported."""

    code = "TM408"
    name = "removed-keyword"
    summary = ("removed keywords: `TensorDataset(data_tensor=, target_tensor=)` become positional; schedulers' "
               "`verbose` goes")
    triggers = ("data_tensor", "target_tensor", "verbose", "ReduceLROnPlateau")
    imports = ("torch",)
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
        Example("from torch.optim.lr_scheduler import ReduceLROnPlateau\n\n"
                "sched = ReduceLROnPlateau(optimizer, 'max', 0.5, 3, False, 1e-3)\n",
                "from torch.optim.lr_scheduler import ReduceLROnPlateau\n\n"
                "sched = ReduceLROnPlateau(optimizer, 'max', 0.5, 3, threshold=1e-3)\n"),
        Example("import torch.utils.data as data\n\nds = data.TensorDataset(extra, data_tensor=x, target_tensor=y)\n"),
    )
    keeps = (
        "import torch.utils.data as data\n\nds = data.TensorDataset(x, y)\n",
        "from mylib import TensorDataset\n\nds = TensorDataset(data_tensor=x, target_tensor=y)\n",
        "import torch\nfrom torch.optim import lr_scheduler\n\nsched = lr_scheduler.StepLR(opt, 30)\n"
        "plateau = lr_scheduler.ReduceLROnPlateau(opt, 'min', 0.1, 10, 1e-4)\n"
        "parser.add_argument('--verbose', action='store_true')\ntrainer = Trainer(verbose=True)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) not in (cst.Name, cst.Attribute):
            return
        qualified = self.ctx.model.qualname(node.func) or ""
        if qualified in POSITIONAL_KEYWORDS:
            self._positional(node, qualified.rpartition(".")[2], POSITIONAL_KEYWORDS[qualified])
        if qualified in LEGACY_POSITIONAL:
            self._legacy_positional(node, qualified.rpartition(".")[2], LEGACY_POSITIONAL[qualified])
        if qualified in DROPPED_KEYWORDS:
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

    def _legacy_positional(self, node: cst.Call, short: str, params) -> None:
        positional = [a for a in node.args if a.keyword is None]
        at = params.index("verbose")
        if len(positional) <= at or any(a.star for a in node.args):
            return
        given = positional[at].value
        if type(given) is cst.Float:
            return  # a threshold: current code
        value = flag(given) if type(given) is cst.Name else ...
        message = (f"`{short}`'s positional parameter {at + 1} was `verbose` in torch 0.4-1.x and is "
                   f"`{params[at + 1]}` now")
        if value not in (True, False):
            self.report(node, message + ": pass the arguments from there on by name")
            return
        self.report(node, message + ": the legacy `verbose` goes, the arguments after it are named",
                    lambda call: _legacy_named(call, params, at), unsafe=value is True)

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


def _legacy_named(call: cst.Call, params, at: int) -> cst.Call:
    positional = [a for a in call.args if a.keyword is None]
    named = [keyword(params[i], a.value, a) for i, a in enumerate(positional) if i > at]
    return with_args(call, positional[:at] + named + [a for a in call.args if a.keyword is not None])


def _without(call: cst.Call, name: str) -> cst.Call:
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    return with_args(call, args) if args else call.with_changes(args=())


RULE = RemovedKeyword
