"""TM205: CUDA-only calls run only `if torch.cuda.is_available()`."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.device.analysis import Act
from codemods.device.common import DeviceRule


class CudaOnlyCalls(DeviceRule):
    """``torch.cuda.set_device(k)``, ``torch.cuda.synchronize()`` and
    ``torch.set_default_tensor_type(torch.cuda.FloatTensor)`` raise without CUDA (unlike ``manual_seed``
    or ``empty_cache``); unguarded, they stop the migrated script on a CPU-only machine. Guarded by
    ``torch.cuda.is_available()`` they run exactly as before wherever CUDA exists. A statement already
    under an ``if`` that mentions cuda or gpu (``if args.cuda:``, ``if args.gpu is not None:``) is left alone."""

    code = "TM205"
    name = "cuda-only-calls"
    summary = ("unguarded `torch.cuda.set_device()`, `synchronize()`, cuda `set_default_tensor_type()` "
               "run only `if torch.cuda.is_available()`")
    triggers = ("set_device", "synchronize", "set_default_tensor_type")
    min_torch = "0.4"  # ``torch.cuda.is_available()`` guards (any torch)
    kinds = {
        Act.CUDA_ONLY: lambda d: "a CUDA-only call raises on a CPU-only machine: guard it with "
                                 "`torch.cuda.is_available()`",
    }
    changes = (
        Example(
            "import torch\ntorch.cuda.set_device(0)  # GPU 0\nstart = time.time()\ntorch.cuda.synchronize()\n",
            "import torch\nif torch.cuda.is_available():\n    torch.cuda.set_device(0)  # GPU 0\n"
            "start = time.time()\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
        ),
    )
    keeps = (
        "import torch\nif args.cuda:\n    torch.cuda.set_device(args.gpu)\ntorch.cuda.manual_seed(1)\n",
        "import torch\ntorch.set_default_tensor_type(torch.DoubleTensor)\n",
        "import torch\nif use_gpu:\n    torch.cuda.synchronize()\n",
    )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._emit(node)


RULE = CudaOnlyCalls
