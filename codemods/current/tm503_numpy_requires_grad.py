"""TM503: ``.numpy()`` on a value that may require grad becomes ``.detach().numpy()``."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.current.analysis import Evaluator
from codemods.syntax import method_call, method_name


class NumpyRequiresGrad(Rule):
    """``.numpy()`` raises on a tensor that requires grad ("Can't call numpy() on Tensor that requires grad").
    Legacy code called it on ``.data``; once ``Variable`` and ``.data`` are gone, outputs of models,
    parameters and tensors created with ``requires_grad=True`` reach ``.numpy()`` directly. ``.detach()``
    first gives the same array (it shares storage) and never changes gradients. A value may require grad
    when it comes (in this scope) from calling a module, from a parameter, from ``requires_grad=True``, or
    from arithmetic on such values; data (loader batches, factories, ``.data``, indices) is left alone."""

    code = "TM503"
    min_torch = "0.4"
    name = "numpy-requires-grad"
    summary = "`.numpy()` on a value that may require grad becomes `.detach().numpy()` (`.cpu()` kept)"
    triggers = (".numpy()",)
    changes = (
        Example("import torch\nmodel = torch.load(opt.model)\nout = model(x)\nimg = out.cpu().numpy()\n",
                "import torch\nmodel = torch.load(opt.model)\nout = model(x)\nimg = out.detach().cpu().numpy()\n"),
        Example("import torch.nn as nn\nfc = nn.Linear(2, 2)\nw = fc.weight.numpy()\n",
                "import torch.nn as nn\nfc = nn.Linear(2, 2)\nw = fc.weight.detach().numpy()\n"),
        Example("import torch\nw = torch.zeros(3, requires_grad=True)\nprint((w * 2).numpy())\n",
                "import torch\nw = torch.zeros(3, requires_grad=True)\nprint((w * 2).detach().numpy())\n"),
        Example("def test(net):\n    net.eval()\n    y = net(x)[0]\n    return y.numpy()\n",
                "def test(net):\n    net.eval()\n    y = net(x)[0]\n    return y.detach().numpy()\n"),
    )
    keeps = (
        "import torch\nfor data, target in loader:\n    a = data.numpy()\n",
        "import torch\nout = model(x)\nimg = out.data.cpu().numpy()\n",
        "import torch\nmodel.eval()\npred = model(x).max(1)[1]\np = pred.numpy()\n",
        "import torch\nz = torch.randn(3)\nz.numpy()\n",
        "import torch\nmodel.eval()\nout = model(x).detach()\nout.numpy()\n",
        "import torch\nmodel.eval()\nlabels = model(x).argmax(1).numpy()\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if node.args or method_name(node) != "numpy":
            return
        receiver = node.func.value
        via_cpu = method_name(receiver) == "cpu" and not receiver.args
        inner = receiver.func.value if via_cpu else receiver
        if not Evaluator(self.ctx).may_require_grad(inner, self.ctx.model.scope_of(node)):
            return

        def fix(updated: cst.Call) -> cst.Call:
            outer = updated.func.value
            if via_cpu:
                cpu = outer.func
                outer = outer.with_changes(func=cpu.with_changes(value=method_call(cpu.value, "detach")))
            else:
                outer = method_call(outer, "detach")
            return updated.with_changes(func=updated.func.with_changes(value=outer))

        self.report(node, "`.numpy()` raises on a tensor that requires grad; `.detach()` gives the same array", fix)


RULE = NumpyRequiresGrad
