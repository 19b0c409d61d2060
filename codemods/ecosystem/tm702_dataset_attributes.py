"""TM702: ``mnist.train_data``/``train_labels`` become ``mnist.data``/``targets``."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.model import BindingKind
from codemods.syntax import code

MNIST = "from torchvision import datasets\n\ntrain = datasets.MNIST('data', train=True, download=True)\n"


class DatasetAttributes(Rule):
    """torchvision 0.2.2 gave every dataset one ``data``/``targets`` pair for both splits. MNIST-style
    datasets keep ``train_data``, ``test_data``, ``train_labels`` and ``test_labels`` as aliases that warn
    on every use; CIFAR10/100 dropped theirs (AttributeError). Both spellings name the same tensor or
    array, so the rename changes no value. The rule renames where the receiver is provably such a dataset:
    a name bound only to ``torchvision.datasets.MNIST(...)`` (or FashionMNIST, KMNIST, EMNIST, QMNIST,
    CIFAR10, CIFAR100), or the call itself. A dataset reached another way (``loader.dataset``) is left."""

    code = "TM702"
    name = "dataset-attributes"
    summary = "torchvision datasets' `train_data`/`train_labels` (gone or warning since 0.2.2) become `data`/`targets`"
    triggers = ("_data", "_labels")
    imports = ("torchvision",)
    changes = (
        Example(MNIST + "x = train.train_data.float() / 255\ny = train.train_labels\n",
                MNIST + "x = train.data.float() / 255\ny = train.targets\n"),
        Example("import torchvision\n\nn = len(torchvision.datasets.CIFAR10('.', train=False).test_labels)\n",
                "import torchvision\n\nn = len(torchvision.datasets.CIFAR10('.', train=False).targets)\n"),
    )
    keeps = (
        "x = loader.dataset.train_data\n",
        MNIST + "train = Subset(train, range(100))\nx = train.train_data\n",  # rebound: not only MNIST
        "from torchvision import datasets\n\ntrain = datasets.SVHN('data')\nx = train.train_data\n",
        MNIST + "x = train.data\n",
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        new = torchapi.DATASET_ATTRIBUTE_RENAMES.get(node.attr.value)
        if new is None:
            return
        dataset = self._dataset(node.value)
        if dataset is not None:
            self.report(node, f"`{code(node)}`: torchvision datasets call it `{new}` since 0.2.2 ({dataset.rpartition('.')[2]}"
                              f"'s old name {'warns' if 'CIFAR' not in dataset else 'is gone'})",
                        lambda old: old.with_changes(attr=cst.Name(new)))

    def _dataset(self, receiver: cst.BaseExpression) -> Optional[str]:
        """The dataset class ``receiver`` is provably an instance of, if it is one of the renamed ones."""
        model = self.ctx.model
        if type(receiver) is cst.Name:
            _, bindings = model.lookup(receiver.value, model.scope_of(receiver))
            if not bindings or any(b.kind is not BindingKind.ASSIGN for b in bindings):
                return None
            classes = {model.qualname(b.value.func) if type(b.value) is cst.Call else None for b in bindings}
            found = classes.pop() if len(classes) == 1 else None
        else:
            found = model.qualname(receiver.func) if type(receiver) is cst.Call else None
        return found if found in torchapi.RENAMED_ATTRIBUTE_DATASETS else None


RULE = DatasetAttributes
