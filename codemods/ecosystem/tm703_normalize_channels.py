"""TM703: ``Normalize`` with RGB statistics on single-channel images keeps the first channel's."""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.model import BindingKind
from codemods.syntax import argument, literal

NORMALIZE = frozenset({"torchvision.transforms.Normalize", "torchvision.transforms.transforms.Normalize"})
GRAYSCALE = "torchvision.transforms.Grayscale"
RGB = "transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))"
MNIST = ("from torchvision import datasets, transforms\n\n"
         "transform = transforms.Compose([transforms.ToTensor(), " + RGB + "])\n"
         "train = datasets.MNIST('data', train=True, download=True, transform=transform)\n")


class NormalizeChannels(Rule):
    """Legacy torchvision normalised with ``for t, m, s in zip(tensor, mean, std)``: on a 1-channel
    MNIST image, ImageNet's three means and stds were cut to the first. Current torchvision checks
    the channel count and raises ("The size of tensor a (3) must match ... (1)"). The fix keeps the
    first mean and std, which is exactly what the legacy code computed. It fires only where the
    images are provably single-channel: the ``Compose`` holding the ``Normalize`` goes (directly or
    through a name) only to MNIST-style datasets and everything before it keeps the channel count, or
    a ``Grayscale()`` with one output channel comes before it. Anything else (a ``Lambda``, a custom
    transform, an RGB dataset) is left alone."""

    code = "TM703"
    name = "normalize-channels"
    summary = "`Normalize` with 3-channel mean/std on single-channel images (ignored in legacy torchvision, an error now) keeps the first channel's"
    triggers = ("Normalize",)
    imports = ("torchvision",)
    changes = (
        Example(MNIST, MNIST.replace(RGB, "transforms.Normalize((0.485,), (0.229,))")),
        Example("import torchvision.transforms as T\n\n"
                "t = T.Compose([T.Grayscale(), T.ToTensor(), T.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])])\n",
                "import torchvision.transforms as T\n\n"
                "t = T.Compose([T.Grayscale(), T.ToTensor(), T.Normalize(mean=[0.5], std=[0.5])])\n"),
    )
    keeps = (
        MNIST.replace("datasets.MNIST", "datasets.CIFAR10"),
        MNIST.replace("transforms.ToTensor(), ", "transforms.ToTensor(), transforms.Lambda(lambda x: x.repeat(3, 1, 1)), "),
        MNIST.replace("transforms.ToTensor(), ", "transforms.Grayscale(3), transforms.ToTensor(), "),
        MNIST + "other = datasets.ImageFolder('imgs', transform=transform)\n",
        MNIST.replace(RGB, "transforms.Normalize((0.1307,), (0.3081,))"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        model = self.ctx.model
        if model.qualname(node.func) not in NORMALIZE:
            return
        stats = [argument(node, "mean", 0), argument(node, "std", 1)]
        if any(a is None or type(a.value) not in (cst.Tuple, cst.List) or len(a.value.elements) != 3 for a in stats):
            return
        compose, steps = self._compose(node)
        if compose is None:
            return
        grayscale = [i for i, step in enumerate(steps) if self._grayscale(step) == 1]
        after = steps[grayscale[-1] + 1:] if grayscale else steps
        if not grayscale and not self._single_channel_datasets(compose):
            return
        if all(type(s) is cst.Call and model.qualname(s.func) in torchapi.CHANNEL_KEEPING_TRANSFORMS for s in after):
            self.report(node, "the images are single-channel: legacy torchvision used only the first of these means "
                              "and stds, current torchvision raises on the channel count; keep the first of each",
                        lambda call: call.with_changes(args=[self._first(a) if a in (stats[0], stats[1]) else a
                                                             for a in call.args]))

    @staticmethod
    def _first(arg: cst.Arg) -> cst.Arg:
        first = arg.value.elements[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if type(arg.value) is cst.Tuple:
            first = first.with_changes(comma=cst.Comma())
        return arg.with_changes(value=arg.value.with_changes(elements=[first]))

    def _compose(self, node: cst.Call) -> Tuple[Optional[cst.Call], List[cst.BaseExpression]]:
        """The ``Compose([...])`` whose list literal holds ``node``, and the transforms before it."""
        model = self.ctx.model
        element, listed = model.parent(node), model.parent(model.parent(node))
        compose = model.parent(model.parent(listed)) if listed is not None else None
        if type(listed) is not cst.List or type(compose) is not cst.Call or not model.qualname(
                compose.func) or not model.qualname(compose.func).endswith("transforms.Compose"):
            return None, []
        return compose, [e.value for e in listed.elements[:list(listed.elements).index(element)]]

    def _grayscale(self, step: cst.BaseExpression) -> Optional[int]:
        if type(step) is not cst.Call or self.ctx.model.qualname(step.func) != GRAYSCALE:
            return None
        channels = argument(step, "num_output_channels", 0)
        return 1 if channels is None else literal(channels.value)

    def _single_channel_datasets(self, compose: cst.CSTNode) -> bool:
        """``compose`` reaches only single-channel datasets, as their ``transform=`` (directly or by a name)."""
        model = self.ctx.model
        up = model.parent(compose)
        if type(up) is cst.Arg:
            return self._is_dataset_transform(model.parent(up), up)
        target = model.parent(up) if type(up) is cst.AssignTarget else None
        assign = up if type(up) is cst.Assign else None
        if assign is None or len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name or target:
            return False
        name = assign.targets[0].target.value
        scope = model.scope_of(assign)
        owner, bindings = model.lookup(name, scope)
        if owner is None or len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or owner.uses.get(name):
            return False
        calls = owner.passed.get(name, [])
        return bool(calls) and all(
            any(self._is_dataset_transform(call, arg) for arg in call.args
                if type(arg.value) is cst.Name and arg.value.value == name) for call in calls)

    def _is_dataset_transform(self, call: cst.CSTNode, arg: cst.Arg) -> bool:
        return (type(call) is cst.Call and self.ctx.model.qualname(call.func) in torchapi.SINGLE_CHANNEL_DATASETS
                and arg.keyword is not None and arg.keyword.value == "transform")


RULE = NormalizeChannels
