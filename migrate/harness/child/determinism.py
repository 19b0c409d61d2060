"""Note what makes two runs of the same script differ, for the parent to name when OLD disagrees with itself.

The harness seeds torch, random and numpy before the script runs; what can still
differ between two runs, where it can be seen from here: the script reseeding
from a value that changes (the clock) or with none (``random.seed()``,
``numpy.random.default_rng()``), DataLoader workers without a seeded generator
or ``worker_init_fn``, ``cudnn.benchmark`` turned on, threads or processes
running the script's own code (Hogwild). Each is written once as a ``hint``
record; a seed's value is in its detail, so the parent can tell a seed that
changed between runs from one that did not. Nondeterministic ops show up as
warnings (``use_deterministic_algorithms(True, warn_only=True)`` is on), which
are recorded anyway. Standard library + torch only, Python 3.5 syntax.
"""
import multiprocessing.process
import os
import random
import threading

import torch

try:
    import numpy
except ImportError:  # pragma: no cover - depends on the child environment
    numpy = None


class DeterminismWatch(object):
    """``emit(source, detail)`` writes one hint; ``root`` is the user's tree (whose code threads run)."""

    def __init__(self, root, emit):
        self.root = root + os.sep
        self.emit = emit
        self.said = set()

    def note(self, source, detail):
        if (source, detail) not in self.said:
            self.said.add((source, detail))
            self.emit(source, detail)

    def install(self):
        self._watch_seed(torch, "manual_seed", "torch.manual_seed")
        self._watch_seed(random, "seed", "random.seed")
        if numpy is not None:
            self._watch_seed(numpy.random, "seed", "numpy.random.seed")
            self._watch_seed(numpy.random, "default_rng", "numpy.random.default_rng")
        self._watch_loader()
        self._watch_start(threading.Thread, "thread", "_target")
        self._watch_start(multiprocessing.process.BaseProcess, "process", "_target")

    def finish(self):
        if getattr(torch.backends.cudnn, "benchmark", False):
            self.note("cudnn_benchmark", "torch.backends.cudnn.benchmark = True: cuDNN picks kernels by timing them")

    def _watch_seed(self, owner, attr, shown):
        original, watch = getattr(owner, attr, None), self
        if original is None:
            return

        def seeded(*args, **kwargs):
            value = args[0] if args else kwargs.get("seed")
            if value is None:
                watch.note("seed", "%s() without a seed: seeded from the OS or the clock" % shown)
            else:
                watch.note("seed", "%s(%r)" % (shown, value))
            return original(*args, **kwargs)

        setattr(owner, attr, seeded)

    def _watch_loader(self):
        loader = torch.utils.data.DataLoader
        original, watch = loader.__init__, self

        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            if getattr(self, "num_workers", 0) and getattr(self, "generator", None) is None and \
                    getattr(self, "worker_init_fn", None) is None:
                watch.note("dataloader", "DataLoader with num_workers=%d and neither a seeded generator nor "
                                         "worker_init_fn" % self.num_workers)

        loader.__init__ = __init__

    def _watch_start(self, cls, source, target_attr):
        original, watch = cls.start, self

        def start(self, *args, **kwargs):
            target = getattr(self, target_attr, None)
            code = getattr(target, "__code__", None)
            if code is not None and os.path.abspath(code.co_filename).startswith(watch.root):
                watch.note(source, "the script runs %s() in %ss: their order varies between runs"
                           % (code.co_name, source))
            return original(self, *args, **kwargs)

        cls.start = start
