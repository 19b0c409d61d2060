"""Record what the script logs: TensorBoard scalars and ``logging`` messages.

TensorBoard: ``SummaryWriter.add_scalar``/``add_scalars`` of
``torch.utils.tensorboard`` and ``tensorboardX`` are wrapped when the script
imports them (an import hook: the harness never imports TensorBoard itself, so
it need not be installed). The event files they write hold wall times and are
compared as these scalars instead. ``logging``: every record a logger passes
to its handlers (after level and filters), whatever the handlers do with it.
Printed lines need nothing here: the parent reads them from the captured output.
Standard library + torch only, Python 3.5 syntax.
"""
import importlib.util
import logging
import sys

WRITER_MODULES = ("torch.utils.tensorboard.writer", "tensorboardX.writer")


def _number(value):
    """(float or None, type name) of a logged value: a number, a 0-dim tensor or numpy scalar."""
    kind = type(value).__name__
    try:
        return float(value), kind
    except (TypeError, ValueError):
        return None, kind


class _PatchingLoader(object):
    """Loads a module with its own loader, then lets ``patch`` wrap what it defines."""

    def __init__(self, loader, patch):
        self.loader = loader
        self.patch = patch

    def create_module(self, spec):
        return self.loader.create_module(spec) if hasattr(self.loader, "create_module") else None

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.patch(module)


class _WriterFinder(object):
    """A meta path finder that only reacts to the SummaryWriter modules."""

    def __init__(self, patch):
        self.patch = patch
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name not in WRITER_MODULES or self.busy:
            return None
        self.busy = True  # find the real spec without finding ourselves again
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader, self.patch)
        return spec


class MetricRecorder(object):
    """``emit_scalar(tag, value, type name, global_step)`` per logged scalar and
    ``emit_log(logger, level, message)`` per log record."""

    def __init__(self, emit_scalar, emit_log):
        self.emit_scalar = emit_scalar
        self.emit_log = emit_log

    def install(self):
        sys.meta_path.insert(0, _WriterFinder(self._patch_writer))
        for name in WRITER_MODULES:  # imported before the recorder started (by a sitecustomize, say)
            if name in sys.modules:
                self._patch_writer(sys.modules[name])
        self._patch_logging()

    def _patch_writer(self, module):
        writer = getattr(module, "SummaryWriter", None)
        if writer is None or getattr(writer, "_torch_migrate_patched", False):
            return
        recorder = self
        add_scalar, add_scalars = writer.add_scalar, writer.add_scalars

        def patched_add_scalar(self, tag, scalar_value, global_step=None, *args, **kwargs):
            recorder._scalar(tag, scalar_value, global_step)
            return add_scalar(self, tag, scalar_value, global_step, *args, **kwargs)

        def patched_add_scalars(self, main_tag, tag_scalar_dict, global_step=None, *args, **kwargs):
            for tag in sorted(tag_scalar_dict):
                recorder._scalar("%s/%s" % (main_tag, tag), tag_scalar_dict[tag], global_step)
            return add_scalars(self, main_tag, tag_scalar_dict, global_step, *args, **kwargs)

        writer.add_scalar, writer.add_scalars = patched_add_scalar, patched_add_scalars
        writer._torch_migrate_patched = True

    def _scalar(self, tag, value, global_step):
        number, kind = _number(value)
        step, _ = _number(global_step)
        self.emit_scalar(str(tag), number, kind, None if step is None else int(step))

    def _patch_logging(self):
        recorder = self
        call_handlers = logging.Logger.callHandlers

        def patched(logger, record):
            try:
                message = record.getMessage()
            except Exception:  # a bad format string: logging reports it itself, in the handler
                message = str(record.msg)
            recorder.emit_log(logger.name, record.levelname, message)
            return call_handlers(logger, record)

        logging.Logger.callHandlers = patched
