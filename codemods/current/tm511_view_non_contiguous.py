"""TM511: ``.view()`` of a transposed/permuted/expanded result becomes ``.reshape()``."""
from __future__ import annotations

import functools

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.layouts import Fate, Layout, Layouts
from codemods.names import dotted
from codemods.syntax import method_name

SOURCES = torchapi.PERMUTING_METHODS | torchapi.STRIDING_METHODS | torchapi.PERMUTING_ATTRIBUTES


def size_arguments(call: cst.Call) -> bool:
    """``view(sizes)``, not ``view(dtype)`` (a reinterpretation ``reshape`` cannot do; numpy's ``view``)."""
    for arg in call.args:
        name = dotted(arg.value) or ""
        if arg.keyword is not None or ("." in name and name.rpartition(".")[2] in torchapi.DTYPE_NAMES):
            return False
    return bool(call.args)


class ViewNonContiguous(Rule):
    """Elementwise ops (comparisons, arithmetic, conversions) returned contiguous tensors in 0.3/0.4; since
    PyTorch 1.7 they keep the dimension order of a transposed input (TensorIterator), so ``.view()`` of
    their result raises "view size is not compatible with input tensor's size and stride". The ImageNet
    ``accuracy()`` (``pred = pred.t()``; ``correct = pred.eq(...)``; ``correct[:k].view(-1)``) is the
    classic case; pytorch/examples fixed it with ``.reshape(-1)``.

    ``.reshape()`` is exactly ``.view()`` wherever a view is possible and copies otherwise; a copy only
    differs when the result is written in place to reach the original, so such views are reported.
    Within one function, a value derives from ``.t()``/``.transpose()``/``.permute()``/``.T`` (kept
    through elementwise ops, conversions, slices and assignments) or ``.expand()``/``.narrow()``
    (views of them only: elementwise results of those are contiguous); ``.contiguous()`` ends it.
    """

    code = "TM511"
    min_torch = "0.4"
    name = "view-non-contiguous"
    summary = "`.view()` of a transposed/permuted/expanded result becomes `.reshape()` (elementwise ops keep strides)"
    triggers = (".view(", ".view_as(")
    changes = (
        Example(
            "def accuracy(output, target, topk=(1,)):\n    maxk = max(topk)\n"
            "    _, pred = output.topk(maxk, 1, True, True)\n    pred = pred.t()\n"
            "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n    res = []\n    for k in topk:\n"
            "        correct_k = correct[:k].view(-1).float().sum(0)\n        res.append(correct_k.mul_(100.0 / 8))\n"
            "    return res\n",
            "def accuracy(output, target, topk=(1,)):\n    maxk = max(topk)\n"
            "    _, pred = output.topk(maxk, 1, True, True)\n    pred = pred.t()\n"
            "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n    res = []\n    for k in topk:\n"
            "        correct_k = correct[:k].reshape(-1).float().sum(0)\n        res.append(correct_k.mul_(100.0 / 8))\n"
            "    return res\n",
        ),
        Example(
            "def scores(h):\n    h = h.transpose(1, 2)\n    s = (h * 2).sigmoid()\n    return s.view(h.size(0), -1)\n",
            "def scores(h):\n    h = h.transpose(1, 2)\n    s = (h * 2).sigmoid()\n    return s.reshape(h.size(0), -1)\n",
        ),
        Example("def f(x):\n    y = x.permute(0, 2, 1) > 0\n    flat = y.view(-1)\n    flat[0] = True\n    return y\n"),
    )
    keeps = (
        "def forward(self, x):\n    x = self.conv(x)\n    x = x.view(x.size(0), -1)\n    return self.fc(x)\n",
        "def accuracy(pred, target):\n    return pred.eq(target.view(1, -1).expand_as(pred))\n",
        "def f(x):\n    x = x.transpose(1, 2).contiguous()\n    return x.view(x.size(0), -1)\n",
        "def f(x):\n    x = x.transpose(1, 2)\n    x = x.contiguous()\n    return x.view(-1)\n",
        "def f(x, y):\n    e = x.expand_as(y) * y\n    return e.view(-1)\n",
        "import numpy as np\ndef f(a):\n    return a.transpose(1, 0).view(np.float32)\n",
    )

    @functools.cached_property
    def _has_sources(self) -> bool:
        """The cheap gate, once per file: something in it can make a value non-contiguous."""
        model = self.ctx.model
        return any(model.has_attribute(name) for name in SOURCES)

    def visit_Call(self, node: cst.Call) -> None:
        method = method_name(node)
        if method not in torchapi.VIEW_RESHAPES or not size_arguments(node) or not self._has_sources:
            return
        layouts = self.ctx.analysis(Layouts)
        if layouts.layout(node.func.value) is Layout.CONTIGUOUS:
            return
        message = (f"`.{method}()` of a tensor that may not be contiguous (it derives from a transpose/permute/"
                   f"expand): elementwise results keep that layout since PyTorch 1.7, and `.{method}()` raises")
        if layouts.fate(node) is Fate.READ:
            self.report(node, message + f"; `.{torchapi.VIEW_RESHAPES[method]}()` is the same view where one is "
                                        f"possible", self._reshape)
        else:
            self.report(node, message + "; the result is written in place (or escapes), so `.reshape()`, "
                                        "which may copy, is not applied",
                        hint="make the source `.contiguous()` where it is computed, then `.view()` works")

    @staticmethod
    def _reshape(updated: cst.Call) -> cst.Call:
        method = method_name(updated)
        if method not in torchapi.VIEW_RESHAPES:
            return updated
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(torchapi.VIEW_RESHAPES[method])))


RULE = ViewNonContiguous
