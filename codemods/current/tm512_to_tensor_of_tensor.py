"""TM512: ``transforms.ToTensor`` applied to a value that is already a tensor (a TypeError) is reported."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.analysis import torchvision_name
from codemods.model import BindingKind
from codemods.syntax import code


class ToTensorOfTensor(Rule):
    """``transforms.ToTensor`` (and ``F.to_tensor``) convert PIL images and numpy arrays; on a tensor they raise
    "pic should be PIL Image or ndarray". Legacy scripts hit it once the data they feed is a tensor (a
    ``train_data`` tensor, ``torch.from_numpy(...)``, a generated batch), and since torchvision 0.8 the other
    transforms (``Normalize``, ``Resize``, crops, flips) take tensors, so ``ToTensor`` is the leftover. The rule
    finds ``ToTensor()(x)``, ``F.to_tensor(x)``, and a name bound once to ``ToTensor()`` or to a ``Compose``
    that starts with it, called on an ``x`` the semantic model proves is a tensor. Only
    ``ToTensor()(torch.from_numpy(a))`` has one meaning (the array is what ``ToTensor`` takes: it permutes
    H x W x C to C x H x W and scales uint8 by 1/255), an unsafe fix; otherwise what the tensor holds decides
    (already C x H x W floats in [0, 1]: drop ``ToTensor``; uint8 C x H x W:
    ``ConvertImageDtype(torch.float)``), so it is reported."""

    code = "TM512"
    min_torch = "0.4"
    name = "to-tensor-of-tensor"
    summary = "`transforms.ToTensor` applied to a tensor (TypeError: it takes PIL images and arrays) is reported"
    triggers = ("ToTensor", "to_tensor")
    imports = ("torchvision",)
    changes = (
        Example("import torch\nfrom torchvision import transforms\nimg = torch.rand(3, 32, 32)\n"
                "x = transforms.ToTensor()(img)\n"),
        Example("import torch\nimport torchvision.transforms as T\nprep = T.Compose([T.ToTensor(), "
                "T.Normalize((0.5,), (0.5,))])\nbatch = prep(torch.ByteTensor(1, 28, 28))\n"),
        Example("import numpy as np\nimport torch\nfrom torchvision import transforms\n"
                "x = transforms.ToTensor()(torch.from_numpy(frame))\n",
                "import numpy as np\nimport torch\nfrom torchvision import transforms\n"
                "x = transforms.ToTensor()(frame)\n", unsafe=True),
    )
    keeps = (
        "import numpy as np\nfrom torchvision import transforms\nx = transforms.ToTensor()(np.zeros((4, 4, 3)))\n",
        "from PIL import Image\nfrom torchvision import transforms\nx = transforms.ToTensor()(Image.open(p))\n",
        "from torchvision import transforms\nt = transforms.Compose([transforms.Resize(8), transforms.ToTensor()])\n"
        "x = t(image)\n",
        "import torch\nfrom torchvision import transforms\nx = transforms.ConvertImageDtype(torch.float)(img)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        model = self.ctx.model
        qualified = torchvision_name(model.qualname(node.func))
        if qualified not in torchapi.TO_TENSOR_FUNCTIONS and not self._to_tensor(node.func):
            return
        value = node.args[0].value
        found = model.value(value)
        if not found.is_tensor:
            return
        message = ("`ToTensor` takes PIL images and numpy arrays: on a tensor it raises TypeError ('pic should be "
                   "PIL Image or ndarray')")
        source = self._from_numpy(value)
        if source is not None:
            self.report(node.args[0], message + f"; `{code(source)}` is the array it takes",
                        lambda arg: arg.with_changes(value=source), unsafe=True)
            return
        hint = ("it is uint8: `transforms.ConvertImageDtype(torch.float)` scales it like `ToTensor` (if already "
                "C x H x W)" if found.dtype == "uint8" else
                "drop `ToTensor` if it already holds C x H x W floats in [0, 1]; other transforms take tensors")
        self.report(node, message, hint=hint)

    def _to_tensor(self, func: cst.BaseExpression, depth: int = 0) -> bool:
        """``func`` is ``ToTensor()``, a ``Compose`` starting with it, or a name bound once to one of those."""
        model = self.ctx.model
        if type(func) is cst.Call:
            qualified = torchvision_name(model.qualname(func.func))
            if qualified in torchapi.TO_TENSOR:
                return not func.args
            if qualified in torchapi.COMPOSE and func.args and type(func.args[0].value) in (cst.List, cst.Tuple):
                elements = func.args[0].value.elements
                return bool(elements) and type(elements[0].value) is cst.Call and self._to_tensor(elements[0].value)
            return False
        if type(func) is cst.Name and depth < 2:
            _, bindings = model.lookup(func.value, model.scope_of(func))
            return bool(bindings) and len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and \
                self._to_tensor(bindings[0].value, depth + 1)
        return False

    def _from_numpy(self, value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        if type(value) is cst.Call and self.ctx.model.qualname(value.func) == "torch.from_numpy" and \
                len(value.args) == 1 and value.args[0].keyword is None and not value.args[0].star:
            return value.args[0].value
        return None


RULE = ToTensorOfTensor
