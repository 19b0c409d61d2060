"""The process side of ``driver.run``: what each worker process does, how files are batched for the
workers, and the run's signal and garbage-collector settings.

Workers are forked from the run's process (they share what it loaded); each takes batches of files, largest
first, and writes through a thread of its own.
"""
from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from migrate.driver import FileResult, Interrupted, Options, process_file, write_now

_WORKER: dict = {}


def _die_with_parent(parent: int) -> None:
    """A worker whose parent is killed (SIGKILL) gets SIGTERM rather than waiting for work forever (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)


def init_worker(options: Options, stop, parent: int) -> None:
    """Writes go to a thread of their own, so that the next file's analysis runs while the disk syncs one
    (an fsync takes milliseconds, more than the rules on a small file). SIGTERM kills a worker, but never
    in the middle of a write: only the writer thread takes it, and atomic_write holds it until its rename is
    done."""
    from concurrent.futures import ThreadPoolExecutor

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # this thread, and the writer it starts...
    writer = ThreadPoolExecutor(1, initializer=signal.pthread_sigmask,
                                initargs=(signal.SIG_UNBLOCK, {signal.SIGTERM}))  # ...which takes it
    writer.submit(int)  # started now: until it runs, no thread of this process would take a SIGTERM
    _WORKER.update(options=options, rules=options.rules(), stop=stop, writer=writer)


def work_batch(batch: Sequence[Tuple[Path, Path]]) -> List[Optional[FileResult]]:
    """The batch's results, each complete (its write done) when the batch is returned."""
    results: List[Optional[FileResult]] = []
    writes = []

    def write_later(*args) -> None:
        writes.append(_WORKER["writer"].submit(write_now, *args))

    for shown, real in batch:
        if _WORKER["stop"].is_set():
            results.append(None)  # interrupted: the queued files are left as they are
        else:
            results.append(process_file(shown, real, _WORKER["options"], _WORKER["rules"], write_later))
    for done in writes:
        done.result()
    return results


def batches(paths: Sequence[Path], jobs: int) -> List[List[int]]:
    """Indices of ``paths`` in batches for the workers, largest files first: a file of a few thousand lines
    takes seconds, so it goes alone and early (a worker that draws it last would finish long after the
    others); small files go in batches of about an eighth of a worker's share of the bytes, at most 32."""
    sizes = []
    for path in paths:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)  # the worker reports it
    share = max(1, sum(sizes) // (jobs * 8))
    found: List[List[int]] = []
    filled = 0
    for index in sorted(range(len(paths)), key=lambda i: -sizes[i]):
        if not found or filled + sizes[index] > share or len(found[-1]) >= 32:
            found.append([])
            filled = 0
        found[-1].append(index)
        filled += sizes[index]
    return found


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``Interrupted`` (only the main thread can take signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, _frame):
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def quiet_cancel_race() -> Iterator[None]:
    """Drop one traceback of the standard library's: when a worker dies (a SIGTERM to the process group) while
    the interrupted run's futures are being cancelled (closing ``executor.map`` cancels them), the executor's
    manager thread sets an exception on a cancelled future and prints ``InvalidStateError`` (CPython gh-107219,
    fixed in 3.12; Python 3.11 has it). The run has its outcome by then; any other thread's exception is
    reported as before."""
    from concurrent.futures import InvalidStateError
    from concurrent.futures.process import _ExecutorManagerThread

    previous = threading.excepthook

    def hook(args) -> None:
        if not (issubclass(args.exc_type, InvalidStateError) and isinstance(args.thread, _ExecutorManagerThread)):
            previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous


@contextlib.contextmanager
def collect_less() -> Iterator[None]:
    """Keep what is loaded (modules, rule tables) out of the cycle collector's sight and collect young
    objects less often, here and in the workers forked meanwhile: a file's tree is ~10^5 objects without
    cycles, and the default thresholds spend about a tenth of a run re-scanning it."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
