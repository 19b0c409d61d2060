"""TM201: `.cuda()` and flag guards become one `torch.device` and `.to(device)`."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example
from codemods.device.analysis import Act
from codemods.device.common import DefinesDevice


class CudaToDevice(DefinesDevice):
    """``.cuda()`` pins code to a GPU and fails on a CPU-only machine; 0.4 introduced ``torch.device``.

    Every ``.cuda(...)`` becomes ``.to(<the file's device>)`` (``non_blocking=`` kept),
    the ``if <flag>:`` guards that only moved values disappear, and the device is
    defined once (see the module docstring for where and from what).
    """

    code = "TM201"
    name = "cuda-to-device"
    summary = "`.cuda()` and `if args.cuda: x = x.cuda()` become one `torch.device` and `.to(device)`"
    triggers = (".cuda(",)
    min_torch = "0.4"  # ``torch.device``, ``.to(device)``, ``non_blocking=``
    kinds = {
        Act.MOVE: lambda d: f"`.cuda()` becomes `.to({d['device']})`",
        Act.MOVE_UNREACHABLE: lambda d: "`.cuda()` where no `torch.device` is in scope (nor the flag it would come "
                                        "from): pass one in and use `.to(device)`",
        Act.MOVE_OTHER_INDEX: lambda d: "`.cuda(<index>)` with a GPU index that the file's one device does not "
                                        "have: `.to()` a `torch.device` with that index",
        Act.GUARD: lambda d: f"the guard only moved values to `{d['device']}`, which is the CPU when the flag is "
                             "false (`.to(cpu)` is `.cpu()`, a no-op on CPU values)",
        Act.GUARD_EXPRESSION: lambda d: f"`x.cuda() if flag else x` is `x.to({d['device']})`",
    }
    changes = (
        Example(
            "import torch\nargs = parser.parse_args()\nargs.cuda = not args.no_cuda and torch.cuda.is_available()\n"
            "model = Net()\nif args.cuda:\n    model.cuda()\n"
            "for data, target in loader:\n    if args.cuda:\n        data, target = data.cuda(), target.cuda()\n",
            "import torch\nargs = parser.parse_args()\nargs.cuda = not args.no_cuda and torch.cuda.is_available()\n"
            'device = torch.device("cuda" if args.cuda else "cpu")\n'
            "model = Net()\nmodel.to(device)\n"
            "for data, target in loader:\n    data, target = data.to(device), target.to(device)\n",
        ),
        Example(
            "import torch\ndef main():\n    args = parser.parse_args()\n"
            "    args.cuda = not args.no_cuda and torch.cuda.is_available()\n"
            "    model = Net()\n    if args.cuda:\n        model = torch.nn.DataParallel(model).cuda()\n"
            "    train(model, args)\n"
            "def train(model, args):\n    for x in loader:\n        x = x.cuda(non_blocking=True)\n",
            "import torch\ndef main():\n    args = parser.parse_args()\n"
            "    args.cuda = not args.no_cuda and torch.cuda.is_available()\n"
            '    args.device = torch.device("cuda" if args.cuda else "cpu")\n'
            "    model = Net()\n    if args.cuda:\n        model = torch.nn.DataParallel(model).to(args.device)\n"
            "    train(model, args)\n"
            "def train(model, args):\n    for x in loader:\n        x = x.to(args.device, non_blocking=True)\n",
        ),
        Example(
            "import torch\nimport torch.nn as nn\n\nnet = nn.Linear(2, 2).cuda(0)\nx = torch.zeros(1, 2).cuda(0)\n",
            "import torch\nimport torch.nn as nn\n\n"
            'device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n\n'
            "net = nn.Linear(2, 2).to(device)\nx = torch.zeros(1, 2).to(device)\n",
        ),
        Example(
            "import torch\nuse_cuda = torch.cuda.is_available()\n"
            'device = torch.device("cuda" if use_cuda else "cpu")\ny = x.cuda() if use_cuda else x\n',
            "import torch\nuse_cuda = torch.cuda.is_available()\n"
            'device = torch.device("cuda" if use_cuda else "cpu")\ny = x.to(device)\n',
        ),
        Example(
            "def sequence_mask(lengths, max_len):\n    seq_range = torch.arange(0, max_len)\n"
            "    if lengths.is_cuda:\n        seq_range = seq_range.cuda()\n"
            "    return seq_range < lengths.unsqueeze(1)\n",
            "def sequence_mask(lengths, max_len):\n    seq_range = torch.arange(0, max_len)\n"
            "    seq_range = seq_range.to(lengths.device)\n    return seq_range < lengths.unsqueeze(1)\n",
        ),
        Example("import torch\nmodel = Net()\nmodel.cuda(args.gpu)\n"),
        Example(  # a guard that is not about CUDA does not choose the device: the model still goes to the GPU
            "import torch\nargs = parser.parse_args()\nmodel = Net()\nif args.finetune:\n    model.cuda()\n",
            "import torch\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
            "args = parser.parse_args()\nmodel = Net()\nif args.finetune:\n    model.to(device)\n",
        ),
    )
    keeps = (
        "import torch\nx = torch.zeros(2)\ny = x.cpu()\nif x.is_cuda:\n    print('gpu')\n",
        "import torch\nif torch.cuda.is_available():\n    torch.cuda.manual_seed(1)\n"
        "torch.backends.cudnn.benchmark = True\n",
        'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "x = torch.zeros(2).to(device)\n",
        "import torch\ny = torch.Tensor.cuda\ns = 'x.cuda()'\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            self._emit(node)

    def visit_If(self, node: cst.If) -> None:
        self._emit(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._emit(node)


RULE = CudaToDevice
