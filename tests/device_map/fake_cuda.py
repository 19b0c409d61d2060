"""Run a script as if this CPU machine had one GPU, and record what it puts on that GPU.

``python fake_cuda.py OUT.json STEPS LEGACY SCRIPT [ARGS...]``

Device rewrites must put the same objects on the GPU as the legacy code did, and nothing in CI has a GPU.
So ``torch.cuda.is_available()`` answers yes here, and every way of moving something to CUDA (``.cuda()``,
``.to(<cuda device or a tensor already moved>)``, ``.type(torch.cuda.X)``, ``torch.cuda.FloatTensor(...)``,
factories with ``device=<cuda>``, ``nn.DataParallel``) records the object it moves (a tensor by shape and
dtype, a module by class and parameter shapes) with the script line that moved it, and leaves it on the CPU,
where the script goes on running. A model left on the CPU while its batches go to the GPU shows up as a
module the legacy run recorded and the migrated one did not.

The run stops before the backward pass or optimizer step after STEPS of them, so both sides execute the
same stretch of the script. LEGACY=1 installs the harness's 0.3 compatibility layer first, since legacy
code does not run on current PyTorch as it is.
"""
import json
import os
import sys
import traceback
import weakref

import torch

_CUDA_TYPES = ("FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor",
               "LongTensor", "BoolTensor")
_FACTORIES = ("tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
              "linspace", "eye", "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like",
              "as_tensor")


class _Stop(BaseException):
    """The script ran its STEPS steps."""


class Placements:
    """What went to the (pretended) GPU, in order, and which tensors are there now."""

    def __init__(self, script: str):
        self.folder = os.path.dirname(os.path.abspath(script))
        self.moved = []
        self.on_gpu = weakref.WeakSet()

    def where(self) -> str:
        """The innermost line of the script's own folder that led here."""
        for frame in reversed(traceback.extract_stack()):
            if os.path.abspath(frame.filename).startswith(self.folder + os.sep):
                return "%s:%d" % (os.path.relpath(frame.filename, self.folder), frame.lineno)
        return "?"

    def record(self, obj):
        if isinstance(obj, torch.nn.Module):
            what = ["module", type(obj).__name__, [list(p.shape) for p in obj.parameters()]]
        elif isinstance(obj, torch.Tensor):
            what = ["tensor", list(obj.shape), str(obj.dtype)]
            self.on_gpu.add(obj)
        else:
            return obj
        self.moved.append({"what": what, "at": self.where()})
        return obj


def _is_cuda(device) -> bool:
    return device is not None and torch.device(device).type == "cuda"


def install(placements: Placements) -> None:
    """Pretend one GPU; route every move to it through ``placements``."""
    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.get_device_name = lambda *args: "fake GPU"
    for name in ("set_device", "synchronize", "empty_cache", "reset_peak_memory_stats"):
        setattr(cuda, name, lambda *args, **kwargs: None)
    torch.Tensor.pin_memory = lambda self, *args, **kwargs: self
    torch.Tensor.is_cuda = property(lambda self: self in placements.on_gpu)

    def cuda_method(self, *args, **kwargs):
        return placements.record(self)

    torch.Tensor.cuda = cuda_method
    torch.nn.Module.cuda = cuda_method

    def wrap_to(original):
        def to(self, *args, **kwargs):
            device = torch._C._nn._parse_to(*args, **kwargs)[0]
            target = next((a for a in args if isinstance(a, torch.Tensor)), kwargs.get("other"))
            if _is_cuda(device) or (target is not None and target in placements.on_gpu):
                args = tuple(a for a in args if not isinstance(a, (str, torch.device, torch.Tensor)))
                kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "other")}
                if target is not None and target.dtype != self.dtype:
                    kwargs["dtype"] = target.dtype
                return placements.record(original(self, *args, **kwargs))
            return original(self, *args, **kwargs)
        return to

    torch.Tensor.to = wrap_to(torch.Tensor.to)
    torch.nn.Module.to = wrap_to(torch.nn.Module.to)

    original_type = torch.Tensor.type

    def type_(self, dtype=None, *args, **kwargs):
        spelled = dtype if isinstance(dtype, str) else getattr(dtype, "__module__", "") + "." + getattr(
            dtype, "__name__", "")
        if dtype is not None and "torch.cuda." in spelled:
            return placements.record(original_type(self, spelled.replace("torch.cuda.", "torch.")))
        return original_type(self, dtype, *args, **kwargs)

    torch.Tensor.type = type_
    for name in _CUDA_TYPES:
        setattr(cuda, name, _legacy_type(getattr(torch, name), placements))
    for name in _FACTORIES:
        setattr(torch, name, _factory(getattr(torch, name), placements))
    torch.nn.DataParallel = _data_parallel(placements)


def _legacy_type(cpu_type, placements: Placements):
    class CudaType:
        """``torch.cuda.FloatTensor(...)``: the CPU type's tensor, recorded as moved."""

        def __new__(cls, *args, **kwargs):
            return placements.record(cpu_type(*args, **kwargs))

    CudaType.__name__ = cpu_type.__name__
    CudaType.__module__ = "torch.cuda"
    return CudaType


def _factory(function, placements: Placements):
    def factory(*args, **kwargs):
        if _is_cuda(kwargs.get("device")):
            kwargs.pop("device")
            return placements.record(function(*args, **kwargs))
        return function(*args, **kwargs)
    return factory


def _data_parallel(placements: Placements):
    class DataParallel(torch.nn.Module):
        """One GPU: the real one moves the module to it and calls it."""

        def __init__(self, module, device_ids=None, output_device=None, dim=0):
            super().__init__()
            self.module = placements.record(module)
            self.device_ids, self.output_device, self.dim = [0], 0, dim

        def forward(self, *inputs, **kwargs):
            return self.module(*inputs, **kwargs)

    return DataParallel


def _stop_after(steps: int) -> None:
    """Raise ``_Stop`` when the script starts its next backward pass or optimizer step after ``steps``."""
    counts = {"backward": 0, "step": 0}

    def counted(kind):
        counts[kind] += 1
        if counts[kind] > steps:
            raise _Stop()

    backward = torch.Tensor.backward

    def counting_backward(self, *args, **kwargs):
        counted("backward")
        return backward(self, *args, **kwargs)

    torch.Tensor.backward = counting_backward
    from torch.optim.optimizer import register_optimizer_step_pre_hook
    register_optimizer_step_pre_hook(lambda optimizer, args, kwargs: counted("step"))


def main(argv) -> int:
    out, steps, legacy, script = argv[1], int(argv[2]), argv[3] == "1", os.path.abspath(argv[4])
    sys.argv = [script] + argv[5:]
    sys.path[0] = os.path.dirname(script)
    torch.manual_seed(0)
    placements = Placements(script)
    install(placements)
    _stop_after(steps)
    if legacy:
        from migrate.harness.child import compat
        compat.install_legacy()
        with open(script, encoding="utf-8") as source:
            code = compile(compat.fix_async_keyword(source.read()), script, "exec")
    else:
        code = compile(open(script, "rb").read(), script, "exec")
    status = 0
    try:
        exec(code, {"__name__": "__main__", "__file__": script, "__builtins__": __builtins__})
    except _Stop:
        pass
    except SystemExit as exc:
        status = 0 if exc.code in (None, 0) else 1
    finally:
        with open(out, "w") as f:
            json.dump({"moved": placements.moved, "status": status}, f)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
