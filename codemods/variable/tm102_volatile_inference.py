"""TM102: `volatile=True` becomes a `with torch.no_grad():` inference region."""
from __future__ import annotations

from codemods.base import Example
from codemods.variable.analysis import FactKind
from codemods.variable.common import HINT, VariableFamilyRule
from codemods.variable.tm101_variable_wrapper import UNWRAP_HINT, UNWRAP_MESSAGES

NO_EFFECT = "`volatile` has no effect on current PyTorch: the graph is built and memory grows"
MEANT = ("`volatile=True` meant: no graph for anything computed from it; on current PyTorch it has no effect and the "
         "graph is built (memory grows, `.numpy()` fails)")


class VolatileInference(VariableFamilyRule):
    """``volatile=True`` meant inference: no graph for anything computed from the Variable.

    On current PyTorch it only warns, so a legacy evaluation loop builds graphs
    (memory grows, ``.numpy()`` on outputs fails). The wrapper goes as in TM101
    and the inference region (the innermost loop around it in its function, the
    function body, or the module-level statements that use the value) runs under
    ``with torch.no_grad():`` - once per region, not inside an existing
    ``no_grad``. A helper that returns the volatile value (``to_var(x,
    volatile=True)``, ``get_batch(..., evaluation=True)``) moves the region to
    its callers in the file. A region that also calls ``backward()`` (directly
    or through a function of the file) or yields is reported, not wrapped.
    """

    code = "TM102"
    name = "volatile-inference"
    summary = "`Variable(x, volatile=True)` becomes `x` inside a `with torch.no_grad():` inference region"
    triggers = ("volatile",)
    min_torch = "0.4"  # ``torch.no_grad()``
    kinds = {
        FactKind.VOLATILE_WITH_GRAD: (lambda d: "`Variable(...)` with both `requires_grad` and `volatile`: migrate "
                                      "by hand", "volatile=True made requires_grad ineffective in 0.3"),
        FactKind.UNWRAP_VOLATILE: (lambda d: UNWRAP_MESSAGES[d["strategy"]].format(**d), UNWRAP_HINT),
        FactKind.NOOP_VOLATILE: (lambda d: f"`{d['names']} = Variable(...)`: the values have no autograd history, "
                                 "the assignment is a no-op once the wrappers go and is removed", HINT),
        FactKind.VOLATILE_LEFT: (lambda d: f"`volatile={d['flag']}`: " + (
            f"{d['reason']}; wrap the inference computations in `torch.no_grad()` by hand" if d["reason"] else
            "inference (no graph) only when it is true; run that code under `torch.no_grad()` by hand"),
            "the unsafe fix only drops `volatile=` (no effect on current PyTorch anyway)"),
        FactKind.VOLATILE_NO_CALLERS: (lambda d: f"`volatile={d['flag']}`: callers that pass a true value (none in "
                                       "this file) must run their inference under `torch.no_grad()`", NO_EFFECT),
        FactKind.VOLATILE_UNWRAPPABLE: (lambda d: d["reason"], NO_EFFECT),
        FactKind.FLAG_PARAMETER: (lambda d: f"parameter `{d['name']}` of `{d['function']}` only fed `volatile=`, "
                                  "which has no effect on current PyTorch: removed with what its callers pass",
                                  "its callers that passed a true value run under `torch.no_grad()`"),
        FactKind.FLAG_ARGUMENT: (lambda d: f"`{d['name']}={d['argument']}`: `{d['function']}` has no "
                                 f"`{d['name']}` parameter any more", NO_EFFECT),
        FactKind.WRAP_LOOP: (lambda d: "inference loop (`volatile=True` inside) wrapped in `with torch.no_grad():`",
                             MEANT),
        FactKind.WRAP_BODY: (lambda d: f"body of `{d['function']}` (`volatile=True` inside) wrapped in "
                             "`with torch.no_grad():`" + ("; it returns the value: its callers (none in this file) "
                                                          "must run under `torch.no_grad()` too" if d["returns"]
                                                          else ""), MEANT),
        FactKind.WRAP_STATEMENT: (lambda d: "inference code (`volatile=True`) wrapped in `with torch.no_grad():`",
                                  MEANT),
        FactKind.WRAP_RANGE: (lambda d: f"module-level inference code from `{d['first']}` on ({d['count']} "
                              "statements using the `volatile=True` value) wrapped in `with torch.no_grad():`", MEANT),
    }
    changes = (
        Example(
            "import torch\nfrom torch.autograd import Variable\n\ndef test():\n    model.eval()\n"
            "    for data, target in test_loader:\n        data, target = Variable(data, volatile=True), Variable(target)\n"
            "        output = model(data)\n        pred = output.max(1)[1]\n",
            "import torch\n\ndef test():\n    model.eval()\n    with torch.no_grad():\n"
            "        for data, target in test_loader:\n            output = model(data)\n"
            "            pred = output.max(1)[1]\n",
        ),
        Example(
            "import torch\nfrom torch.autograd import Variable\n\ndef stylize(img):\n    \"\"\"Run the net.\"\"\"\n"
            "    x = Variable(img, volatile=True)\n    return net(x).data\n",
            "import torch\n\ndef stylize(img):\n    \"\"\"Run the net.\"\"\"\n    with torch.no_grad():\n"
            "        x = img.detach()\n        return net(x).data\n",
        ),
        Example(
            "from torch.autograd import Variable\n\ndef get_batch(source, i, evaluation=False):\n"
            "    return Variable(source[i:i + 2], volatile=evaluation)\n\ndef evaluate(source):\n"
            "    for i in range(0, 10, 2):\n        out = model(get_batch(source, i, evaluation=True))\n\n"
            "def train(source):\n    for i in range(0, 10, 2):\n        model(get_batch(source, i)).sum().backward()\n",
            "import torch\n\ndef get_batch(source, i):\n    return source[i:i + 2].detach()\n\n"
            "def evaluate(source):\n    with torch.no_grad():\n        for i in range(0, 10, 2):\n"
            "            out = model(get_batch(source, i))\n\n"
            "def train(source):\n    for i in range(0, 10, 2):\n        model(get_batch(source, i)).sum().backward()\n",
        ),
        Example(
            "import torch\nfrom torch.autograd import Variable\nfor x in loader:\n"
            "    feats = vgg(Variable(x, volatile=True))\n    loss = crit(net(Variable(feats.data)))\n"
            "    loss.backward()\n",
        ),
    )
    keeps = (
        "import torch\nfrom torch.autograd import Variable\nx = Variable(t, volatile=False)\n",
        "import torch\nwith torch.no_grad():\n    y = model(x)\n",
        "volatile = True\nconfig = dict(volatile=volatile)\n",
    )


RULE = VolatileInference
