"""Records a training run from inside the child interpreter.

This file runs under whatever Python/PyTorch the script needs (``--old-python``),
so it uses the standard library and torch only, and Python 3.5 syntax (a test
parses it with ``feature_version=(3, 5)``). Where torch lacks the global
optimizer hooks (< 2.0) it wraps each optimizer's ``step`` instead.

What a *step* is: one call of any optimizer's ``step()`` (a GAN's D and G
updates are two steps). Scripts that never construct an optimizer before their
first backward are recorded in *backward mode*: every ``backward()`` /
``autograd.grad()`` call is a step, gradients are read right after it and
values just before the next one (after the hand-written update). Steps are
numbered from 1; anything that happens after step k-1 finished belongs to step k.

Besides the steps, the recorder hands the rest to its helpers: evaluation
forward passes (``evaluation``), TensorBoard scalars and log records
(``metrics``), files written in the mirror (``files``, read at the end of the
run); each can be switched off in the config. The record stream and every field
of it are described in ``schema``.
"""
import contextlib
import io
import os
import pickle
import random
import sys
import time
import traceback
import types
import warnings
import weakref

import torch

from . import schema
from .determinism import DeterminismWatch
from .evaluation import EvaluationRecorder
from .files import Snapshot, read_file
from .layers import LayerRecorder
from .metrics import MetricRecorder

try:  # torch >= 1.x imports numpy itself when it is installed; this is free then
    import numpy
except ImportError:  # pragma: no cover - depends on the child environment
    numpy = None

_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DTYPES = frozenset(
    ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
)
_LEGACY_TYPE_NAMES = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
    "CharTensor": "int8", "ByteTensor": "uint8",
}
_SAMPLE_SIZE = 256
_MAX_CONTAINER = 64
_OOM_MARKERS = ("out of memory", "can't allocate memory", "Cannot allocate memory")
# Objects whose attributes never hold the script's models: looking into them would only cost time.
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _plain(t):
    """A detached, dense CPU view of ``t`` (a Variable on torch < 0.4; sparse embedding grads)."""
    t = t.detach() if hasattr(t, "detach") else t
    t = getattr(t, "data", t)
    if getattr(t, "is_sparse", False):
        t = t.to_dense()
    return t.cpu()


def _dtype_name(t):
    if hasattr(t, "dtype"):
        return str(t.dtype).replace("torch.", "")
    return _LEGACY_TYPE_NAMES.get(t.type().split(".")[-1], "float32")


class TensorEncoder(object):
    """Turns tensors into plain, picklable values without allocating torch memory
    (the CPU memory measure would otherwise count the harness)."""

    def __init__(self, full_limit):
        self.full_limit = full_limit
        self._sample_index = {}

    def encode(self, t):
        if t is None:
            return None
        t = _plain(t)
        dtype = _dtype_name(t)
        shape = list(t.size())
        numel = t.numel()
        if self.full_limit is None or numel <= self.full_limit:
            return {"dtype": dtype, "shape": shape, "data": self._elements(t.contiguous().view(-1), dtype),
                    "sample_index": None, "sample": None, "stats": None}
        flat = t.contiguous().view(-1)
        index = self._index_for(numel)
        sample = flat.index_select(0, index[1])
        stats = {}
        if t.is_floating_point() if hasattr(t, "is_floating_point") else True:
            stats = {
                "sum": float(flat.sum()), "l1": float(flat.norm(1)), "l2": float(flat.norm(2)),
                "min": float(flat.min()), "max": float(flat.max()),
            }
        return {
            "dtype": dtype, "shape": shape, "data": None, "sample_index": index[0],
            "sample": self._elements(sample, dtype), "stats": stats,
        }

    @staticmethod
    def _elements(flat, dtype):
        if numpy is not None and dtype in _NUMPY_DTYPES:
            return flat.numpy().tobytes()
        return flat.tolist()

    def _index_for(self, numel):
        """Same positions for the same size in both runs: seeded by the size alone."""
        if numel not in self._sample_index:
            positions = sorted(random.Random(numel).sample(range(numel), min(numel, _SAMPLE_SIZE)))
            self._sample_index[numel] = (positions, torch.LongTensor(positions))
        return self._sample_index[numel]


def scan_frames(frame, accept):
    """Name tensors the way the script refers to them: ``{id: (name, tensor)}``.

    Walks the script's frames (innermost first) and looks at each variable, one
    level into lists, dicts and plain objects (``self.model``); a module
    contributes ``var.<named_parameters() name>``. When a tensor is reachable
    several ways the shortest name wins, so the choice does not depend on frame
    or dict order.
    """
    found = {}

    def offer(name, t):
        if not accept(t):
            return
        key = id(t)
        old = found.get(key)
        if old is None or (len(name), name) < (len(old[0]), old[0]):
            found[key] = (name, t)

    def visit(name, obj, depth):
        if isinstance(obj, torch.nn.Module):
            for sub, p in obj.named_parameters():
                offer(name + "." + sub, p)
        elif _is_tensor(obj):
            offer(name, obj)
        elif depth > 0 or isinstance(obj, _OPAQUE):
            return
        elif isinstance(obj, (list, tuple)) and len(obj) <= _MAX_CONTAINER:
            for i, item in enumerate(obj):
                visit("%s[%d]" % (name, i), item, 1)
        elif isinstance(obj, dict) and len(obj) <= _MAX_CONTAINER:
            for k, item in list(obj.items()):
                if isinstance(k, str):
                    visit("%s[%r]" % (name, k), item, 1)
        elif hasattr(obj, "__dict__"):
            for attr, item in list(vars(obj).items()):
                if not attr.startswith("_"):
                    visit(name + "." + attr, item, 1)

    seen_globals = []
    f = frame
    while f is not None:
        if not f.f_code.co_filename.startswith(_HARNESS_DIR):
            scopes = [f.f_locals]
            if not any(g is f.f_globals for g in seen_globals):
                seen_globals.append(f.f_globals)
                if f.f_globals is not f.f_locals:
                    scopes.append(f.f_globals)
            for scope in scopes:
                for var, obj in list(scope.items()):
                    if not var.startswith("__"):
                        visit(var, obj, 0)
        f = f.f_back
    return found


def _is_trainable_leaf(t):
    return bool(getattr(t, "requires_grad", False)) and bool(getattr(t, "is_leaf", True))


def _is_tensor(obj):
    return torch.is_tensor(obj) or type(obj).__name__ == "Variable"  # torch < 0.4 kept them apart


def _as_list(tensors):
    """``backward``/``grad`` accept a tensor or any iterable of them (a generator too,
    which the recorder must not consume behind the script's back)."""
    return [tensors] if _is_tensor(tensors) else list(tensors)


class Recorder(object):
    """Hooks optimizers and autograd, and writes the record stream described above."""

    def __init__(self, config, out, device):
        self.out = out
        self.device = device
        self.step_limit = config.get("steps")
        self.memory_steps = config.get("memory_steps", 0)
        self.encoder = TensorEncoder(None if config.get("full") else config.get("full_limit", 4096))
        self.pid = os.getpid()
        self.hooks = None  # "global" (torch >= 2.0 hooks) or "patched" (wrapped Optimizer.step)
        self.mode = None  # "optimizer" or "backward", fixed at the first backward
        self.steps_done = 0
        self.backwards = 0  # top-level backward()/grad() calls that returned
        self.optimizers = weakref.WeakKeyDictionary()  # optimizer -> index in construction order
        self._names = weakref.WeakKeyDictionary()  # optimizer -> (param ids, [(name, slot, param)])
        self._in_step = 0  # nested steps (a wrapper optimizer) count once
        self._in_backward = 0  # backward inside backward (reentrant checkpointing) is not a new loss
        self._pending = _new_step()
        self._leaves = None  # backward mode: {name: tensor} whose values close the pending step
        self._t_last = time.perf_counter()
        self._profiler = None
        self._memory_done = False
        self.root = config.get("root") or os.getcwd()
        self.config = config
        self.evaluation = None
        self.snapshot = None
        self.determinism = DeterminismWatch(self.root, lambda source, detail: self._write(schema.make(
            "hint", after_step=self.steps_done, source=source, detail=detail)))

    # ------------------------------------------------------------------ output
    def _write(self, record):
        if os.getpid() != self.pid:  # a forked DataLoader worker: only the main process records
            return
        pickle.dump(record, self.out, 2)
        self.out.flush()

    def header(self, **extra):
        self._write(schema.make("header", format=schema.FORMAT, python=sys.version.split()[0],
                                torch=torch.__version__, device=self.device, hooks=self.hooks, **extra))

    def _emit_step(self, complete):
        step = self._pending
        now = time.perf_counter()
        step.update(step=self.steps_done + 1, complete=complete, time=now - self._t_last,
                    stdout_bytes=_written(sys.stdout, 1), stderr_bytes=_written(sys.stderr, 2))
        self._t_last = now
        self._pending = _new_step()
        self._leaves = None
        self._write(schema.make("step", **step))
        if not complete:
            return
        self.steps_done += 1
        if self.steps_done == self.memory_steps:
            self.finish_memory()
        if self.step_limit is not None and self.steps_done >= self.step_limit:
            self.stop()

    # ------------------------------------------------------------------ installation
    def install(self):
        __import__("torch.optim.optimizer")
        optim_module = sys.modules["torch.optim.optimizer"]
        use_global = hasattr(optim_module, "register_optimizer_step_pre_hook") and not os.environ.get(
            "TORCH_MIGRATE_LEGACY_HOOKS")
        self.hooks = "global" if use_global else "patched"
        self._patch_optimizer_init(wrap_step=not use_global)
        if use_global:
            optim_module.register_optimizer_step_pre_hook(lambda opt, args, kwargs: self._step_begin(opt))
            optim_module.register_optimizer_step_post_hook(lambda opt, args, kwargs: self._step_end(opt))
        self._patch_autograd()
        self._patch_warnings()
        self.determinism.install()
        if self.config.get("evaluation", True):
            self.evaluation = EvaluationRecorder(self.root, self._emit_forward, lambda: self.steps_done)
            self.evaluation.install()
        if self.config.get("metrics", True):
            MetricRecorder(self._emit_scalar, self._emit_log).install()
        if self.config.get("artifacts", True):
            self.snapshot = Snapshot(self.root, self.config.get("ignore_output", ()))
        if self.config.get("layers"):
            LayerRecorder(self.root, self.config["layers"], self.current_step, self.encoder.encode,
                          lambda fields: self._write(schema.make("layer", **fields)),
                          lambda order, name, t: self._write(schema.make("param_grad", order=order, name=name,
                                                                          tensor=t))).install()

    def current_step(self):
        """The step in progress. In backward mode step k is the k-th backward call (and the
        forward before it), though step k-1 is only closed when that call begins."""
        return (self.backwards if self.mode == "backward" else self.steps_done) + 1

    def _patch_warnings(self):
        """Note each warning shown, as shown, so that the parent can tell it from the script's stderr."""
        recorder, show = self, warnings.showwarning

        def showwarning(message, category, filename, lineno, file=None, line=None):
            if file is None:  # shown on stderr (a warning written elsewhere is not in the comparison)
                text = warnings.formatwarning(message, category, filename, lineno, line)
                recorder._write(schema.make("warning", after_step=recorder.steps_done, category=category.__name__,
                                            text=text))
            return show(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning

    def _emit_forward(self, details, tensors):
        call, after_step, site, module, grad_mode, training = details
        outputs = [{"path": path, "tensor": self.encoder.encode(t)} for path, t in tensors]
        self._write(schema.make("forward", call=call, after_step=after_step, site=site, module=module,
                                grad_mode=grad_mode, training=training, outputs=outputs))

    def _emit_scalar(self, tag, value, kind, global_step):
        self._write(schema.make("scalar", after_step=self.steps_done, tag=tag, value=value, type=kind,
                                global_step=global_step))

    def _emit_log(self, logger, level, message):
        self._write(schema.make("log", after_step=self.steps_done, logger=logger, level=level, message=message))

    def _write_artifacts(self):
        """Read back what the run wrote. Unpickling may print or warn: that is not the script's output."""
        sink = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            for relative, change in self.snapshot.changes():
                self._write(schema.make("artifact", **read_file(self.root, relative, self.snapshot.name(relative),
                                                                 change, self.encoder)))

    def _patch_optimizer_init(self, wrap_step):
        recorder = self
        original = torch.optim.Optimizer.__init__

        def __init__(opt, *args, **kwargs):
            original(opt, *args, **kwargs)
            if opt not in recorder.optimizers:
                recorder.optimizers[opt] = len(recorder.optimizers)
                if wrap_step:
                    opt.step = recorder._wrap_step(opt, opt.step)

        torch.optim.Optimizer.__init__ = __init__

    def _wrap_step(self, opt, step):
        def wrapped(*args, **kwargs):
            self._step_begin(opt)
            result = step(*args, **kwargs)
            self._step_end(opt)
            return result
        return wrapped

    def _patch_autograd(self):
        recorder = self
        autograd = torch.autograd
        backward, grad = autograd.backward, autograd.grad

        def patched_backward(tensors, *args, **kwargs):
            roots = _as_list(tensors)
            return recorder._around_backward("backward", roots, None, backward, (roots,) + args, kwargs)

        def patched_grad(outputs, inputs, *args, **kwargs):
            roots, leaves = _as_list(outputs), _as_list(inputs)
            return recorder._around_backward("grad", roots, leaves, grad, (roots, leaves) + args, kwargs)

        autograd.backward, autograd.grad = patched_backward, patched_grad
        classes = set([torch.Tensor, getattr(autograd, "Variable", torch.Tensor)])
        for cls in [c for c in classes if "backward" in vars(c)]:
            self._patch_tensor_backward(cls, vars(cls)["backward"])

    def _patch_tensor_backward(self, cls, original):
        recorder = self

        def backward(tensor, *args, **kwargs):
            return recorder._around_backward("backward", [tensor], None, original, (tensor,) + args, kwargs)

        cls.backward = backward

    # ------------------------------------------------------------------ events
    def _step_begin(self, opt):
        self._in_step += 1
        if self._in_step > 1:
            return
        if self.mode is None:
            self.mode = "optimizer"
        named = self._optimizer_names(opt, sys._getframe(1))
        self._pending["optimizer"] = self.optimizers.get(opt)
        self._pending["slots"] = dict((name, slot) for name, slot, _ in named)
        self._pending["grads"] = dict((name, self.encoder.encode(p.grad)) for name, _, p in named)

    def _step_end(self, opt):
        self._in_step -= 1
        if self._in_step > 0:
            return
        named = self._names[opt][1]
        self._pending["values"] = dict((name, self.encoder.encode(p)) for name, _, p in named)
        self._emit_step(complete=True)

    def _optimizer_names(self, opt, frame):
        params = [p for group in opt.param_groups for p in group["params"]]
        ids = [id(p) for p in params]
        cached = self._names.get(opt)
        if cached is None or cached[0] != ids:
            wanted = set(ids)
            found = scan_frames(frame, lambda t: id(t) in wanted)
            index = self.optimizers.get(opt, 0)
            named, taken = [], set()
            for g, group in enumerate(opt.param_groups):
                for k, p in enumerate(group["params"]):
                    slot = "opt%d.group%d.param%d" % (index, g, k)
                    name = found.get(id(p), (slot,))[0]
                    name = slot if name in taken else name  # two variables of one name (shadowing)
                    taken.add(name)
                    named.append((name, slot, p))
            cached = (ids, named)
            self._names[opt] = cached
        return cached[1]

    def _around_backward(self, source, roots, inputs, original, args, kwargs):
        if self._in_backward:
            return original(*args, **kwargs)
        frame = sys._getframe(2)
        if self.mode is None:
            self.mode = "optimizer" if len(self.optimizers) else "backward"
        if self.mode == "backward" and self._leaves is not None:
            self._close_backward_step(scan_frames(frame, _is_trainable_leaf))
        self._pending["losses"].extend({"source": source, "tensor": self.encoder.encode(r)} for r in roots)
        self._in_backward += 1
        try:
            result = original(*args, **kwargs)
        finally:
            self._in_backward -= 1
            self.backwards += 1
        if self.mode == "backward" and not self._in_step:
            self._open_backward_step(frame, inputs, result)
        return result

    def _open_backward_step(self, frame, inputs, result):
        """Backward mode: gradients right after the call (``grad()`` returns them)."""
        if inputs is None:
            named = sorted(scan_frames(frame, _is_trainable_leaf).values(), key=lambda item: item[0])
            named = [("%s#%d" % (name, k) if any(n == name for n, _ in named[:k]) else name, t)
                     for k, (name, t) in enumerate(named)]  # two variables of one name (shadowing)
            grads = [t.grad for _, t in named]
        else:
            wanted = set(id(t) for t in inputs)
            found = scan_frames(frame, lambda t: id(t) in wanted)
            named = [found.get(id(t), ("input%d" % k, t)) for k, t in enumerate(inputs)]
            grads = list(result)
        self._pending["grads"] = dict((name, self.encoder.encode(g)) for (name, _), g in zip(named, grads))
        self._pending["slots"] = dict((name, name) for name, _ in named)
        self._leaves = dict(named)

    def _close_backward_step(self, rescanned):
        """Backward mode: values after the hand-written update close the step. A
        script that rebinds its weights (``w = w - lr * g``) is seen through the
        rescan; otherwise the tensors found at the backward call are read."""
        leaves = self._leaves
        leaves.update((name, t) for name, t in rescanned.values() if name in leaves)
        self._pending["values"] = dict((name, self.encoder.encode(t)) for name, t in leaves.items())
        self._emit_step(complete=True)

    # ------------------------------------------------------------------ memory
    def start_memory(self):
        """CUDA: the allocator's peak over the whole run. CPU: the profiler sees
        every tensor allocation and free; it is too slow to keep on for a whole
        run, so it covers the first ``memory_steps`` steps, where the peak of a
        training loop is reached (each later step repeats the same allocations)."""
        if self.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
            return
        try:
            from torch import profiler
        except ImportError:  # pragma: no cover - torch < 1.8.1: memory is reported as not measured
            return
        if self.memory_steps:
            self._profiler = profiler.profile(activities=[profiler.ProfilerActivity.CPU], profile_memory=True)
            self._profiler.__enter__()

    def finish_memory(self):
        if self._memory_done:
            return
        self._memory_done = True
        record = {"device": self.device, "steps": self.steps_done, "peak_bytes": None, "method": "unavailable"}
        if self.device == "cuda":
            record.update(peak_bytes=torch.cuda.max_memory_allocated(), method="torch.cuda.max_memory_allocated")
        elif self._profiler is not None:
            self._profiler.__exit__(None, None, None)
            record.update(peak_bytes=_profiled_peak(self._profiler), method="torch.profiler(profile_memory=True)")
            self._profiler = None
        self._write(schema.make("memory", **record))

    # ------------------------------------------------------------------ ends
    def _close(self, reason, exit_code):
        if self._leaves is not None:
            self._close_backward_step({})
        elif self._pending["losses"]:
            self._emit_step(complete=False)
        self.finish_memory()
        self.determinism.finish()
        if self.evaluation is not None and reason in ("finished", "exit"):  # cut short: undecided, left out
            self.evaluation.flush()
        if self.snapshot is not None and os.getpid() == self.pid:
            self._write_artifacts()
        try:
            import resource
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        except ImportError:  # pragma: no cover - not on Windows
            rss = None
        self._write(schema.make("end", reason=reason, exit_code=exit_code, steps=self.steps_done, mode=self.mode,
                                max_rss_kb=rss))

    def finish(self, exit_code=0):
        self._close("finished" if exit_code == 0 else "exit", exit_code)

    def fail(self, exc):
        if self._pending["losses"] or self._pending["grads"] is not None:
            self._leaves = None
            self._emit_step(complete=False)
        message = str(exc)
        frames = [[f[0], f[1], f[2]] for f in traceback.extract_tb(exc.__traceback__)
                  if not f[0].startswith(_HARNESS_DIR)]
        oom = type(exc).__name__ in ("MemoryError", "OutOfMemoryError") or any(m in message for m in _OOM_MARKERS)
        self._write(schema.make("exception", step=self.steps_done + 1, type=type(exc).__name__, message=message,
                                frames=frames, oom=oom))
        self._close("exception", 1)

    def stop(self):
        """``--steps`` reached: flush everything and leave at once. Unwinding the
        script instead would run its ``finally`` blocks and wait on its workers."""
        self._close("stopped", 0)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)


def _new_step():
    return {"step": None, "optimizer": None, "losses": [], "grads": None, "values": None,
            "slots": {}, "time": None, "complete": False, "stdout_bytes": None, "stderr_bytes": None}


def _written(stream, fd):
    """Bytes written to ``fd`` so far (the runner sends it to a file), after flushing ``stream``."""
    for s in (stream, getattr(sys, "__%s__" % ("stdout" if fd == 1 else "stderr"), None)):
        try:
            s.flush()
        except Exception:  # a script's own replacement without flush(), or a closed stream
            pass
    try:
        return os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:  # not a file (a terminal or a pipe)
        return None


def _profiled_peak(profiler):
    """Peak of the running sum of allocation (+) and free (-) events, in time order."""
    try:
        events = [(e.start_ns(), e.nbytes()) for e in profiler.profiler.kineto_results.events()
                  if e.name() == "[memory]"]
    except AttributeError:  # older torch: the public, slower event list
        events = [(e.time_range.start, e.cpu_memory_usage) for e in profiler.events() if e.name == "[memory]"]
    events.sort(key=lambda e: e[0])
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return peak
