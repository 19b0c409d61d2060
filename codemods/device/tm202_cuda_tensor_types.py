"""TM202: `torch.cuda.FloatTensor` and friends become a dtype and the device."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.device.analysis import TENSOR_TYPES, Act
from codemods.device.common import DefinesDevice, constructor_message, unknown_argument_message


class CudaTensorTypes(DefinesDevice):
    """``torch.cuda.FloatTensor`` and friends raise on a CPU-only build ("type torch.cuda.FloatTensor not
    available"); since 0.4 a tensor's type is a dtype plus a device.

    Constructors become ``torch.empty``/``torch.tensor`` with ``device=``, ``.type(torch.cuda.X)``
    becomes ``.to(device, dtype)``, and a type selection (``Tensor = torch.cuda.FloatTensor if
    args.cuda else torch.FloatTensor``) is replaced at every use when its condition is the device's.
    """

    code = "TM202"
    name = "cuda-tensor-types"
    summary = ("`torch.cuda.FloatTensor(...)`, `.type(torch.cuda.X)` and `T = torch.cuda.X if cuda else torch.X` "
               "become dtype + device")
    triggers = tuple(f"cuda.{name}" for name in TENSOR_TYPES) + ("from torch.cuda import",)
    min_torch = "0.4"  # ``torch.empty``/``torch.tensor`` with ``device=``, ``.to(device, dtype)``
    kinds = {
        Act.CUDA_CONSTRUCTOR: constructor_message,
        Act.CUDA_CONSTRUCTOR_UNKNOWN: unknown_argument_message,
        Act.CUDA_CONSTRUCTOR_UNREACHABLE: lambda d: f"`{d['type']}(...)` where no `torch.device` is in scope",
        Act.TYPE_CALL: lambda d: f"`.type({d['type']})` becomes `.to({d['device']}, {d['dtype']})`",
        Act.TYPE_CALL_UNREACHABLE: lambda d: f"`.type({d['type']})` where no `torch.device` is in scope",
        Act.SELECTION: lambda d: f"type selection `{d['name']}` replaced by its dtype and `{d['device']}`",
        Act.SELECTION_KEPT: lambda d: f"type selection `{d['name']} = {d['type']} ...` kept: {d['problem']}",
    }
    changes = (
        Example(
            "import torch\nnoise = torch.cuda.FloatTensor(16, 100).normal_(0, 1)\n"
            "idx = torch.cuda.LongTensor([0, 2])\n",
            "import torch\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
            "noise = torch.empty(16, 100, device=device).normal_(0, 1)\n"
            "idx = torch.tensor([0, 2], dtype=torch.long, device=device)\n",
        ),
        Example(
            "import torch\nopt.cuda = not opt.no_cuda and torch.cuda.is_available()\n"
            "Tensor = torch.cuda.FloatTensor if opt.cuda else torch.FloatTensor\n"
            "noise = Tensor(64, 100, 1, 1).normal_(0, 1)\nreal = batch.type(Tensor)\n",
            "import torch\nopt.cuda = not opt.no_cuda and torch.cuda.is_available()\n"
            'device = torch.device("cuda" if opt.cuda else "cpu")\n'
            "noise = torch.empty(64, 100, 1, 1, device=device).normal_(0, 1)\n"
            "real = batch.to(device, torch.float32)\n",
        ),
        Example(
            'import torch\ndevice = torch.device("cuda")\nmask = mask.type(torch.cuda.ByteTensor)\n',
            'import torch\ndevice = torch.device("cuda")\nmask = mask.to(device, torch.uint8)\n',
        ),
        Example("import torch\ndtype = torch.cuda.FloatTensor\nw = torch.randn(3, 3).type(dtype)\nprint(dtype)\n"),
    )
    keeps = (
        "import torch\nok = isinstance(x, torch.cuda.FloatTensor)\ny = x.type(torch.FloatTensor)\n",
        "import torch\nif x.type() == 'torch.cuda.FloatTensor':\n    y = torch.zeros(2)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        self._emit(node)


RULE = CudaTensorTypes
