"""TM301: ``loss.data[0]`` of a one-value tensor becomes ``loss.item()``."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.data.analysis import DataAnalysis, SiteKind, is_data, tensor_context, written
from codemods.data.common import DataSiteRule, data_receiver, unwrap_data
from codemods.model import index_value
from codemods.syntax import code, method_call


def item(subscript: cst.Subscript) -> cst.CSTNode:
    """``loss.data[0]`` -> ``loss.item()``."""
    return method_call(data_receiver(subscript.value), "item", like=subscript)


def first_item(subscript: cst.Subscript) -> cst.CSTNode:
    """``v.data[0]`` -> ``v[0].item()``."""
    element = subscript.with_changes(value=unwrap_data(subscript.value), lpar=(), rpar=())
    return method_call(element, "item", like=subscript)


ACCURACY = ("import torch\n\n\ndef accuracy(output, target, topk=(1,)):\n"
            "    _, pred = output.topk(max(topk), 1, True, True)\n"
            "    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))\n    res = []\n    for k in topk:\n"
            "        correct_k = correct[:k].view(-1).float().sum(0)\n"
            "        res.append(correct_k.mul_(100.0 / target.size(0)))\n    return res\n\n\n"
            "prec1, prec5 = accuracy(output.data, target, topk=(1, 5))\ntop1.update(prec1[0], n)\n")


class DataIndexZero(DataSiteRule):
    """``loss.data[0]`` was how 0.3 read a loss: a 1-element 1-dim tensor's only element, a Python
    number. Since 0.4 a loss is 0-dim and ``[0]`` raises IndexError; ``loss.item()`` gives the same
    number. The rule proves the value has one element from the semantic model (a loss call, a criterion
    built from ``nn.*Loss()``, a full reduction, arithmetic of those with numbers, e.g. sizes unpacked
    from ``.size()``, a name ``.backward()`` is called on without a gradient, a function of the file that
    returns one, a ``Categorical`` sample of 1-dim probabilities). ``v.data[0]`` of a provably 1-dim
    ``v`` was a Python number too and is a 0-dim tensor now: ``v[0].item()``. Otherwise ``x.data[0]``
    may be a first element or a first row: it is reported, with ``x.item()`` as an unsafe fix
    (``.item()`` raises on more than one element rather than guessing); ``x.data[0].numpy()``-style row
    reads are left to TM303. The same holds without ``.data`` for a 0.3 *tensor* (not a Variable:
    there ``x[0]`` was a 1-element Variable) that is provably one value, e.g. the ImageNet
    ``accuracy`` helper's ``correct[:k].view(-1).float().sum(0)``, followed through ``mul_``,
    arithmetic, the list a function returns and tuple unpacking: ``prec1[0]`` becomes
    ``prec1.item()``."""

    code = "TM301"
    name = "data-index-zero"
    min_torch = "0.4"  # `.item()`
    summary = "`loss.data[0]` (IndexError on a 0-dim loss) becomes `loss.item()` where the value is provably one number"
    triggers = (".data", "sum(", "mean(", "prod(")
    sites = {
        SiteKind.ONE_VALUE_INDEX: (lambda name: f"`{name}.data[0]` on a 0-dim tensor raises IndexError: `.item()`",
                                   item, False),
        SiteKind.FIRST_ELEMENT: (lambda name: f"`{name}` is 1-dim: `{name}.data[0]` was a Python number in 0.3 "
                                              f"and is a 0-dim tensor now: `{name}[0].item()`", first_item, False),
        SiteKind.UNPROVEN_INDEX: (lambda name: f"`{name}.data[0]` was a Python number in 0.3; on a 0-dim tensor "
                                               f"(a loss) it now raises IndexError. `{name}.item()` if `{name}` "
                                               f"holds one value; `{name}[0].item()` if it is 1-dim; "
                                               f"`{name}.detach()[0]` if it is the first row", item, True),
        SiteKind.ONE_VALUE_CHAIN: (lambda name: f"`[0]` of the one value of `{name}`: `{name}.item()`", item, False),
    }
    changes = (
        Example("import torch.nn.functional as F\n\nloss = F.nll_loss(output, target)\n"
                "print('loss {:.6f}'.format(loss.data[0]))\n",
                "import torch.nn.functional as F\n\nloss = F.nll_loss(output, target)\n"
                "print('loss {:.6f}'.format(loss.item()))\n"),
        Example("import torch.nn as nn\ncriterion = nn.CrossEntropyLoss().cuda()\n\n\n"
                "def train(model, criterion, losses):\n    loss = criterion(model(x), y)\n"
                "    losses.update(loss.data[0], x.size(0))\n",
                "import torch.nn as nn\ncriterion = nn.CrossEntropyLoss().cuda()\n\n\n"
                "def train(model, criterion, losses):\n    loss = criterion(model(x), y)\n"
                "    losses.update(loss.item(), x.size(0))\n"),
        Example("def step(model, optimizer):\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
                "    return float(loss.data[0])\n",
                "def step(model, optimizer):\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
                "    return float(loss.item())\n"),
        Example("import torch\ncriterion = torch.nn.MSELoss()\nerr = criterion(a, b) + criterion(c, d)\n"
                "m = torch.sum(x ** 2)\nprint(err.data[0], m.data.cpu().numpy()[0], (-0.5 * m).cpu().data[0])\n",
                "import torch\ncriterion = torch.nn.MSELoss()\nerr = criterion(a, b) + criterion(c, d)\n"
                "m = torch.sum(x ** 2)\nprint(err.item(), m.item(), (-0.5 * m).cpu().item())\n"),
        Example("import torch\n\nh = model(x)\nprint(h.data[0])\n", "import torch\n\nh = model(x)\nprint(h.item())\n",
                unsafe=True),
        Example(ACCURACY, ACCURACY.replace("prec1[0]", "prec1.item()")),
        Example("import torch\n\nacc = torch.sum((pred == y).data.view(-1), dim=0).float() / 64\nprint(acc[0])\n",
                "import torch\n\nacc = torch.sum((pred == y).data.view(-1), dim=0).float() / 64\nprint(acc.item())\n"),
        Example("import torch\n\n\ndef gram(y):\n    _, c, h, w = y.size()\n    return y.bmm(y) / (c * h * w)\n\n\n"
                "style_loss = 0\nfor f1, f2 in zip(features, targets):\n"
                "    _, c, h, w = f1.size()\n    style_loss += torch.mean((gram(f1) - f2) ** 2) / (c * h * w)\n"
                "print(style_loss.data[0])\n",
                "import torch\n\n\ndef gram(y):\n    _, c, h, w = y.size()\n    return y.bmm(y) / (c * h * w)\n\n\n"
                "style_loss = 0\nfor f1, f2 in zip(features, targets):\n"
                "    _, c, h, w = f1.size()\n    style_loss += torch.mean((gram(f1) - f2) ** 2) / (c * h * w)\n"
                "print(style_loss.item())\n"),
        Example("import torch\nfrom torch.distributions import Categorical\n\nprobs = torch.softmax(torch.randn(4), 0)\n"
                "action = Categorical(probs).sample()\nprint(action.data[0])\n",
                "import torch\nfrom torch.distributions import Categorical\n\nprobs = torch.softmax(torch.randn(4), 0)\n"
                "action = Categorical(probs).sample()\nprint(action.item())\n"),
    )
    keeps = (
        ACCURACY.replace("sum(0)", "sum(0, keepdim=True)"),  # 1-dim: `[0]` still works
        ACCURACY.replace("prec1, prec5 =", "prec1 ="),  # `prec1[0]`: the list's first element
        "import torch\nx = torch.randn(5)\ntotal = x.view(-1).sum(0)\nprint(total[0])\n",  # a graph in 0.3
        "out = model(x)\nimg = out.data[0].numpy()\n",  # the first image: a row read (TM303)
        "batch = dataset.data[0]\n",  # a dataset's `.data`, not a tensor's
        "import torch.nn.functional as F\nlosses = F.nll_loss(out, t, reduce=False)\nfirst = losses.data[0][1]\n",
        "value = loss.item()\n",
        "import torch\nimages = torch.zeros(8, 3, 4, 4)\nfirst = images.data[0]\n",  # a row: TM303's
    )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``prec1[0]`` of a 0.3 tensor that holds one value (no ``.data``: those are the sites' work)."""
        value = node.value
        if index_value(node) != 0 or is_data(value):
            return
        ancestors = self.ctx.ancestors
        if tensor_context(node, ancestors[-2]) or written(ancestors):
            return
        analysis = self.ctx.analysis(DataAnalysis)
        scope = analysis.model.scope_of(node)
        if analysis.one_value(value, scope) and analysis.legacy_tensor(value, scope):
            name = code(value)
            self.report(node, f"`{name}` holds one value (a 1-dim tensor in 0.3, 0-dim now): `{name}[0]` raises "
                              f"IndexError; `{name}.item()` is the Python number it gave", item)


RULE = DataIndexZero
