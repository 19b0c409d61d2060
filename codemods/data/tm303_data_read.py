"""TM303: ``x.data`` reads become ``x.detach()``, or ``x`` where the result cannot carry a graph."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.data.analysis import SiteKind, is_data
from codemods.data.common import DataSiteRule, unwrap_data
from codemods.syntax import method_call


def detach(attr: cst.Attribute) -> cst.CSTNode:
    return method_call(attr.value, "detach", like=attr) if is_data(attr) else attr


class DataRead(DataSiteRule):
    """``x.data`` gave 0.3 code the tensor inside a Variable. Today it returns a tensor that shares
    storage but is invisible to autograd: an in-place change through it silently corrupts
    gradients. ``x.detach()`` gives the same values and lets autograd detect such changes. Where
    the value only feeds something without a graph (``.item()``, ``.size()``, comparisons,
    ``max(1)[1]`` indices, ``new(...)``, ``nn.init`` calls, a ``.grad``), ``x`` alone is exact, and
    the second ``.data`` of ``x.data.data`` or ``x.data[0].data`` goes. Left alone: assignments to ``.data`` (storage
    swaps), in-place calls on ``.data`` of non-parameters (e.g. masking inside ``forward``), aliases
    (``h = x.data``) or arguments of functions of this file that are then changed in place (autograd
    would now see the change: not the same behaviour), and ``.data`` of datasets, namespaces, numpy
    arrays and modules."""

    code = "TM303"
    name = "data-read"
    min_torch = "0.4"  # `.detach()` of a tensor (0.3 had it on Variables only)
    summary = "`x.data` reads become `x.detach()` (or plain `x` where the result cannot carry a graph)"
    triggers = (".data",)
    sites = {
        SiteKind.REDUNDANT: (lambda name: f"`{name}.data`: the second `.data` changes nothing", unwrap_data, False),
        SiteKind.PLAIN_READ: (lambda name: f"`{name}.data` read only for a value without a graph: `{name}`",
                              unwrap_data, False),
        SiteKind.DETACHED_READ: (lambda name: f"`{name}.data` read: `{name}.detach()` (same values; autograd "
                                              "still sees in-place changes)", detach, False),
    }
    changes = (
        Example("out = model(x)\nimgs = out.data.cpu().numpy()\n",
                "out = model(x)\nimgs = out.detach().cpu().numpy()\n"),
        Example("import torch\n\n\ndef test(model, data, target):\n    output = model(data)\n"
                "    pred = output.data.max(1, keepdim=True)[1]\n    hits = pred.eq(target.data.view_as(pred))\n",
                "import torch\n\n\ndef test(model, data, target):\n    output = model(data)\n"
                "    pred = output.max(1, keepdim=True)[1]\n    hits = pred.eq(target.view_as(pred))\n"),
        Example("import torch.nn as nn\n\n\ndef init(m):\n    nn.init.normal_(m.weight.data, 0.0, 0.02)\n"
                "    grad = m.weight.grad.data\n",
                "import torch.nn as nn\n\n\ndef init(m):\n    nn.init.normal_(m.weight, 0.0, 0.02)\n"
                "    grad = m.weight.grad\n"),
        Example("import torch\nout = model(x)\na = out.data.data.cpu()\nb = images.data[0].data.cpu().numpy()\n",
                "import torch\nout = model(x)\na = out.detach().cpu()\nb = images.detach()[0].cpu().numpy()\n"),
    )
    keeps = (
        "a.data = b.data\nh.data = h.data.cuda()\n",  # storage swaps: the whole statement stays
        "scores = attn(h)\nscores.data.masked_fill_(mask, -float('inf'))\n",  # in-place on a non-parameter
        "corpus = data.Corpus(args.data)\nx = train_set.data\ny = self.data\n",
        "import torch.utils.data\nloader = torch.utils.data.DataLoader(ds)\n",
        "def fill(t):\n    t.zero_()\n\n\nfill(h.data)\n",  # a function of this file that changes it in place
        "import torch\nx = torch.randn(3)\nh = x.data\nh.zero_()\nself.buf = x.data\n",  # aliases changed later
        "from torch import Tensor\ngetter = Tensor.data.__get__\nsize = Tensor.data\n",  # the class's descriptor
        "import torch\nimport compiler.lowering as L\nview = L.permute(node, dims).data\n",  # a module's function
    )


RULE = DataRead
