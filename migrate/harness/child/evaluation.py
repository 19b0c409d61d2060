"""Record evaluation forward passes: outputs of top-level module calls outside training steps.

A *top-level* call is a module call made while no other module call is running
(``model(x)``, ``criterion(out, y)``; not the layers inside them). It is an
evaluation call when grad mode is off (``no_grad``, ``inference_mode``, a
volatile input under ``--compat``), or when its output does not require grad,
or when no gradient ever reaches its output: a sampler or a validation loop
that forgot ``no_grad``. For those, a hook on the output tells whether a
backward reached it; if none did by the time the output is freed (or the run
ends), the output is recorded then, from a detached alias that shares its
storage (no copy; the alias lives as long as the graph that holds the output).

``Module.__call__`` is wrapped rather than using global forward hooks: those
take every module call, layers included, off PyTorch's fast path.
Standard library + torch only, Python 3.5 syntax.
"""
import os
import sys
import weakref

import torch

_MAX_OUTPUTS = 64  # tensors taken from one output structure
BACKWARD = "backward"  # the grad mode of a call whose output a backward reached: a training call


def _tensors(output, path, found):
    """(path, tensor) for the tensors in a module's output: a tensor, or tuples, lists, dicts of them."""
    if len(found) >= _MAX_OUTPUTS:
        return found
    if torch.is_tensor(output):
        found.append((path, output))
    elif isinstance(output, (tuple, list)):
        for i, item in enumerate(output):
            _tensors(item, "%s[%d]" % (path, i), found)
    elif isinstance(output, dict):
        for key in sorted(output, key=str):
            _tensors(output[key], "%s[%r]" % (path, key), found)
    elif hasattr(output, "_fields"):  # a namedtuple such as PackedSequence
        for name in output._fields:
            _tensors(getattr(output, name), "%s.%s" % (path, name), found)
    return found


class _Token(object):
    """Dies with the autograd graph that holds a watched output (weakly referable)."""


def _grad_mode():
    if hasattr(torch, "is_inference_mode_enabled") and torch.is_inference_mode_enabled():
        return "inference_mode"
    return "grad" if torch.is_grad_enabled() else "no_grad"


class EvaluationRecorder(object):
    """Wraps ``Module.__call__``. ``emit(details, outputs)`` is called once per evaluation call:
    ``details`` is (call number, complete steps at the call, site, module class, grad mode,
    training flag), ``outputs`` the (path, tensor) pairs of its output. ``steps_done()`` tells
    how many steps were complete at a call."""

    def __init__(self, root, emit, steps_done):
        self.root = root + os.sep
        self.emit = emit
        self.steps_done = steps_done
        self.depth = 0
        self.calls = 0
        self.pending = {}  # call number -> (detached outputs, details): no backward reached them yet

    def install(self):
        recorder = self
        original = torch.nn.Module.__call__

        def __call__(module, *args, **kwargs):
            if recorder.depth:
                return original(module, *args, **kwargs)
            recorder.depth = 1
            try:
                output = original(module, *args, **kwargs)
            finally:
                recorder.depth = 0
            recorder.top_level(module, output, sys._getframe(1))
            return output

        torch.nn.Module.__call__ = __call__

    def _site(self, frame):
        """file:line of the innermost caller in the user's tree (not a library calling the model)."""
        first = frame
        while frame is not None and not frame.f_code.co_filename.startswith(self.root):
            frame = frame.f_back
        frame = frame or first
        filename = frame.f_code.co_filename
        name = filename[len(self.root):] if filename.startswith(self.root) else os.path.basename(filename)
        return "%s:%d" % (name.replace(os.sep, "/"), frame.f_lineno)

    def top_level(self, module, output, frame):
        self.calls += 1
        tensors = _tensors(output, "", [])
        if not tensors:
            return
        trainable = [t for _, t in tensors if t.requires_grad]
        mode = _grad_mode()
        if mode == "grad" and not trainable:  # no graph built, as under no_grad (a volatile input)
            mode = "no_grad"
        details = (self.calls, self.steps_done(), self._site(frame), type(module).__name__, mode,
                   bool(module.training))
        if mode != "grad":
            self.emit(details, tensors)
            return
        self._watch(details, tensors, trainable)

    def _watch(self, details, tensors, trainable):
        """Record the call only if no backward reaches its output before its graph is freed. The
        hook lives in the graph (not on the Python tensor, which a loss expression drops at once):
        when the graph goes, so does the hook and the token it holds, whose finalizer decides."""
        call = details[0]
        self.pending[call] = ([(path, t.detach()) for path, t in tensors], details)
        token = _Token()

        def reached(grad, token=token):
            entry = self.pending.pop(call, None)
            if entry is not None:  # a training call: said without its outputs, so that the other run's
                # evaluation call at this site (a migration that changed what gets gradients) is paired with it
                self.emit(entry[1][:4] + (BACKWARD,) + entry[1][5:], [])

        for t in trainable:
            t.register_hook(reached)
        weakref.finalize(token, self._freed, call)

    def _freed(self, call):
        entry = self.pending.pop(call, None)
        if entry is not None:
            aliases, details = entry
            self.emit(details, aliases)

    def flush(self):
        """The end of the run: outputs still alive that no backward reached were evaluation."""
        for call in sorted(self.pending):
            self._freed(call)
