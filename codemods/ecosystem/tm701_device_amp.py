"""TM701: ``torch.cuda.amp.autocast()`` and friends become ``torch.amp.autocast("cuda")``."""
from __future__ import annotations

from typing import List

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.syntax import TIGHT_EQUAL, code, release_import, spelled


def _device_argument(qualified: str, device: str) -> cst.Arg:
    value = cst.SimpleString(f'"{device}"')
    keyword = torchapi.DEVICE_AMP_KEYWORD.get(qualified)
    if keyword is None:
        return cst.Arg(value)
    return cst.Arg(value, keyword=cst.Name(keyword), equal=TIGHT_EQUAL)


class DeviceAmp(Rule):
    """Since 2.4 every call of ``torch.cuda.amp.autocast``, ``torch.cuda.amp.GradScaler``,
    ``torch.cpu.amp.autocast`` and the ``custom_fwd``/``custom_bwd`` decorators warns (a FutureWarning on
    each step of a training loop) and names the replacement: the ``torch.amp`` object with the device
    given. ``torch.amp.autocast`` takes ``dtype`` second where the legacy one took ``enabled``, so
    positional arguments become keywords; defaults are the same (float16 on CUDA, bfloat16 on the CPU), so
    the numbers are. A call with ``*args``/``**kwargs`` is reported: which parameter they fill is not
    visible."""

    code = "TM701"
    name = "device-amp"
    summary = "`torch.cuda.amp.autocast()`/`GradScaler()`/`custom_fwd` (deprecated in 2.4) become `torch.amp.*` with the device"
    triggers = ("amp",)
    imports = ("torch",)
    min_torch = "2.4"
    changes = (
        Example("import torch\n\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n"
                "    loss = model(x)\n",
                "import torch\n\nscaler = torch.amp.GradScaler(\"cuda\")\nwith torch.amp.autocast(\"cuda\"):\n"
                "    loss = model(x)\n"),
        Example("from torch.cuda.amp import GradScaler, autocast\n\nscaler = GradScaler(2.0 ** 10)\n"
                "with autocast(args.amp):\n    loss = model(x)\n",
                "import torch\n\nscaler = torch.amp.GradScaler(\"cuda\", 2.0 ** 10)\n"
                "with torch.amp.autocast(\"cuda\", enabled=args.amp):\n    loss = model(x)\n"),
        Example("import torch\n\nwith torch.cpu.amp.autocast(dtype=torch.bfloat16):\n    y = model(x)\n",
                "import torch\n\nwith torch.amp.autocast(\"cpu\", dtype=torch.bfloat16):\n    y = model(x)\n"),
        Example("import torch\nfrom torch.cuda.amp import custom_bwd, custom_fwd\n\n\n"
                "class Scale(torch.autograd.Function):\n    @staticmethod\n    @custom_fwd(cast_inputs=torch.float32)\n"
                "    def forward(ctx, x):\n        return x * 2\n\n    @staticmethod\n    @custom_bwd\n"
                "    def backward(ctx, g):\n        return g * 2\n",
                "import torch\n\n\n"
                "class Scale(torch.autograd.Function):\n    @staticmethod\n"
                "    @torch.amp.custom_fwd(cast_inputs=torch.float32, device_type=\"cuda\")\n"
                "    def forward(ctx, x):\n        return x * 2\n\n    @staticmethod\n"
                "    @torch.amp.custom_bwd(device_type=\"cuda\")\n    def backward(ctx, g):\n        return g * 2\n"),
    )
    keeps = (
        "import torch\n\nwith torch.amp.autocast(\"cuda\"):\n    y = model(x)\n",
        "import torch\nscaler = torch.amp.GradScaler(\"cuda\")\n",
        "from apex import amp\nwith amp.scale_loss(loss, optimizer) as scaled:\n    scaled.backward()\n",  # TM702's
        "def autocast():\n    pass\n\n\nwith autocast():\n    pass\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        entry = torchapi.DEVICE_AMP.get(self.ctx.model.qualname(node.func) or "")
        if entry is None:
            return
        target, device, positions = entry
        new = f"{target}(\"{device}\")" if target not in torchapi.DEVICE_AMP_KEYWORD else target
        if any(arg.star for arg in node.args) or positions and sum(a.keyword is None for a in node.args) > len(positions):
            self.report(node, f"`{code(node.func)}` is deprecated since 2.4: `{new}`, with its arguments by name")
            return
        self.report(node, f"`{code(node.func)}` is deprecated since 2.4 (a warning on every call): `{new}`",
                    lambda call: self._fix(call, target, device, positions))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """``@custom_fwd`` without a call."""
        entry = torchapi.DEVICE_AMP.get(self.ctx.model.qualname(node.decorator) or "")
        if entry is not None and type(node.decorator) in (cst.Name, cst.Attribute):
            target, device, _ = entry
            self.report(node.decorator, f"`@{code(node.decorator)}` is deprecated since 2.4: `@{target}(device_type="
                                        f"\"{device}\")`", lambda old: self._call(old, target, device, []))

    def _fix(self, call: cst.Call, target: str, device: str, positions) -> cst.Call:
        args = list(call.args)
        if positions and target not in torchapi.DEVICE_AMP_KEYWORD:  # ``custom_fwd(fn)``: fn stays positional
            names = iter(positions)
            args = [a.with_changes(keyword=cst.Name(next(names)), equal=TIGHT_EQUAL) if a.keyword is None else a
                    for a in args]
        return self._call(call.func, target, device, args).with_changes(lpar=call.lpar, rpar=call.rpar)

    def _call(self, old: cst.BaseExpression, target: str, device: str, args: List[cst.Arg]) -> cst.Call:
        release_import(self.ctx, old)
        device_arg = _device_argument(target, device)
        if device_arg.keyword is None:
            return cst.Call(spelled(self.ctx, target), [device_arg, *args])
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return cst.Call(spelled(self.ctx, target), [*args, device_arg])


RULE = DeviceAmp
