"""TM204: `torch.FloatTensor(...)` becomes `torch.empty(...)` or `torch.tensor(..., dtype=...)`."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.device.analysis import Act
from codemods.device.common import DeviceRule, constructor_message, unknown_argument_message


class LegacyConstructors(DeviceRule):
    """``torch.FloatTensor(...)`` means two things: sizes (uninitialised memory) or data.

    Where the arguments tell which, it becomes ``torch.empty(sizes)`` or
    ``torch.tensor(data, dtype=...)`` (same dtype, same values). A single argument
    of unknown kind is reported: ``torch.tensor`` would copy a float32 numpy array
    that the legacy constructor shares, and ``torch.empty`` reads a list as a shape.
    """

    code = "TM204"
    name = "legacy-constructors"
    summary = ("`torch.FloatTensor(2, 3)` -> `torch.empty(2, 3)`; "
               "`torch.LongTensor([1, 2])` -> `torch.tensor([1, 2], dtype=torch.long)`")
    triggers = ("Tensor(",)
    min_torch = "0.4"  # ``torch.empty``, ``torch.tensor``
    kinds = {
        Act.CONSTRUCTOR: constructor_message,
        Act.CONSTRUCTOR_UNKNOWN: unknown_argument_message,
    }
    changes = (
        Example(
            "import torch\nbuf = torch.FloatTensor(2, 3).zero_()\nw = torch.FloatTensor([0.5, 1])\n"
            "ids = torch.LongTensor([[1, 2], [3, 4]])\nweight = torch.Tensor(10, 5)\n",
            "import torch\nbuf = torch.empty(2, 3).zero_()\nw = torch.tensor([0.5, 1], dtype=torch.float32)\n"
            "ids = torch.tensor([[1, 2], [3, 4]], dtype=torch.long)\nweight = torch.empty(10, 5)\n",
        ),
        Example(
            "import torch\ndef batch(tokens, x):\n    ids = [vocab[t] for t in tokens]\n"
            "    return torch.LongTensor(ids), torch.ByteTensor(x.size(0))\n",
            "import torch\ndef batch(tokens, x):\n    ids = [vocab[t] for t in tokens]\n"
            "    return torch.tensor(ids, dtype=torch.long), torch.empty(x.size(0), dtype=torch.uint8)\n",
        ),
        Example(
            "import torch\ndef labels(n):\n    return torch.LongTensor(n).random_(0, 10)\n",
            "import torch\ndef labels(n):\n    return torch.empty(n, dtype=torch.long).random_(0, 10)\n",
            unsafe=True,
        ),
        Example("import torch\nimport numpy as np\nt = torch.FloatTensor(np.load('x.npy'))\n"),
    )
    keeps = (
        "import torch\nx = torch.tensor([1, 2])\ny = torch.Tensor([1.0, 2.0])\nz = x.new(2, 3)\n",
        "import torch\nok = isinstance(x, torch.FloatTensor)\ns = torch.FloatStorage(3)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        self._emit(node)


RULE = LegacyConstructors
