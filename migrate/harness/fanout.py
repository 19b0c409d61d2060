"""Verification jobs side by side: a local process pool, or a Ray cluster, running ``jobs.run_job``.

Both engines take a list of ``Job``s and give back one ``JobResult`` per job, in the jobs' order,
telling ``progress`` as each is queued, runs, is done or failed. A job whose worker dies, whose
node is lost or which runs past ``job_timeout`` is reported as failed for its entry point; the
others complete. Ctrl-C cancels every job (its scripts' process trees are killed: the running
job gets KeyboardInterrupt, which the runner answers so) and, for a Ray instance started here,
shuts it down.

- ``Local``: one process per job (a dead worker breaks nothing else, as it would a shared pool),
  at most one job per GPU for GPU jobs (each sees only its own: ``CUDA_VISIBLE_DEVICES``) and, for
  CPU jobs, as many as the cores and the available memory allow (``JOB_MEMORY`` each), or ``--jobs N``.
- ``Ray``: ``ray.init(address)`` (``auto``: the cluster this machine belongs to; ``local``: a new
  instance on this machine), a task per job with ``num_gpus=1`` (GPU jobs) or ``num_cpus=1``, never
  retried (a script that kills its worker would kill the next one too). The two trees travel with
  the jobs as one tar archive in Ray's object store (put once, shared by the jobs on those trees,
  unpacked by each job into a folder of its own, deleted after it: a task-level ``runtime_env``
  cannot upload a local folder, and the trees exist only after the connection is made), or are
  copied once to ``shared_dir``, a folder every node mounts at the same path.

Ray is imported only here and only for ``--ray``; without it ``RayMissing`` says how to install it.
"""
from __future__ import annotations

import contextlib
import io
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from migrate.progress import Progress

from .jobs import Job, JobResult, is_gpu, job_timeout, lost, run_job
from .runner import NOT_MIRRORED

JOB_MEMORY = 2 << 30  # bytes a CPU job is assumed to need (two interpreters with torch, a small model)
POLL = 0.5  # seconds between two looks at the jobs in flight
CANCEL_GRACE = 10.0  # seconds a cancelled job has to kill its scripts before its worker is killed
INSTALL = 'pip install "torch-migrate[ray]"'


class RayMissing(RuntimeError):
    """``--ray`` without Ray installed."""

    def __init__(self) -> None:
        super().__init__(f"--ray needs Ray, which is not installed here: {INSTALL}")


class RayUnreachable(RuntimeError):
    """``ray.init`` failed (no cluster at that address, a version mismatch)."""


@dataclass(frozen=True)
class Engine:
    """Where jobs run: ``ray`` an address (``auto``, ``ray://head:10001``, ``local``) or None for
    local processes, ``jobs`` at most that many at a time (0: as many as the machine or cluster takes)."""

    jobs: int = 0
    ray: str | None = None
    shared_dir: Path | None = None
    num_cpus: int | None = None  # a local Ray instance's CPUs (default: all)
    job_timeout: float | None = None  # seconds a job may take (default: ``jobs.job_timeout``)

    def deadline(self, job: Job) -> float:
        return self.job_timeout if self.job_timeout is not None else job_timeout(job.options)


def _past(seconds: float, action: str) -> str:
    return f"ran past {seconds:g} s, the time a job may take: {action}"


def open_engine(engine: Engine) -> "Pool":
    """The pool for ``engine``, connected (Ray); a context manager that disconnects."""
    return RayPool(engine) if engine.ray is not None else LocalPool(engine)


class Pool:
    where = ""

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        pass

    def run(self, jobs: Sequence[Job], progress: Progress = Progress()) -> list[JobResult]:
        raise NotImplementedError


def _finished(progress: Progress, result: JobResult) -> None:
    if result.failed:
        progress.job(result.name, "failed", result.detail or result.verify.reason)
    else:
        progress.job(result.name, "done", f"{result.verify.verdict}, {result.seconds:.0f} s")


# --- local processes -------------------------------------------------------------------------------

def cpu_slots() -> int:
    """CPU jobs at a time on this machine: one per core, fewer when memory is short."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        with open("/proc/meminfo") as f:
            available = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return cores
    return max(1, min(cores, available // JOB_MEMORY))


def _worker(job: Job, conn, gpu: int | None) -> None:
    """A pool process: one job. SIGTERM (a cancel, a timeout) becomes KeyboardInterrupt, on which the
    runner kills the scripts' process trees before this process ends."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    try:
        conn.send(run_job(job))
    except KeyboardInterrupt:
        pass
    finally:
        conn.close()


class _Running:
    def __init__(self, index: int, job: Job, process, conn, gpu: int | None):
        self.index, self.job, self.process, self.conn, self.gpu = index, job, process, conn, gpu
        self.started = time.monotonic()


def _death(process) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        hint = ": out of memory? the kernel's OOM killer sends SIGKILL" if name == "SIGKILL" else ""
        return f"its worker process died ({name}{hint})"
    return f"its worker process died (exit status {code})"


class LocalPool(Pool):
    def __init__(self, engine: Engine):
        import torch

        self.engine = engine
        self.gpus = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
        self.cpus = engine.jobs or cpu_slots()
        self.where = f"this machine ({self.cpus} at a time" + (f", {len(self.gpus)} GPUs)" if self.gpus else ")")
        # forkserver: a clean parent (no display thread, no lock held) forks each worker, with the harness loaded
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(["migrate.harness.jobs"])

    def run(self, jobs: Sequence[Job], progress: Progress = Progress()) -> list[JobResult]:
        results: list[JobResult | None] = [None] * len(jobs)
        queue = list(enumerate(jobs))
        running: list[_Running] = []
        free_gpus = list(self.gpus)
        progress.jobs([job.name for job in jobs], self.where)
        try:
            while queue or running:
                for item in list(queue):
                    index, job = item
                    gpu = is_gpu(job.options, bool(self.gpus))
                    if gpu and not free_gpus and not self.gpus:
                        queue.remove(item)
                        results[index] = lost(job, f"needs CUDA ({job.options.device}) and this machine has none")
                        _finished(progress, results[index])
                        continue
                    if (gpu and not free_gpus) or (not gpu and sum(r.gpu is None for r in running) >= self.cpus):
                        continue
                    queue.remove(item)
                    running.append(self._start(index, job, free_gpus.pop(0) if gpu else None))
                    progress.job(job.name, "running", "this machine" if not gpu else f"GPU {running[-1].gpu}")
                ready = multiprocessing.connection.wait([r.conn for r in running] + [r.process.sentinel for r in running],
                                                        timeout=POLL)
                for run in list(running):
                    result = None
                    if run.conn in ready or run.process.sentinel in ready:
                        try:
                            result = run.conn.recv()
                        except (EOFError, OSError):
                            run.process.join()
                            result = lost(run.job, _death(run.process))
                    elif time.monotonic() - run.started > self.engine.deadline(run.job):
                        self._stop(run)
                        result = lost(run.job, _past(self.engine.deadline(run.job), "stopped"))
                    if result is None:
                        continue
                    run.process.join()
                    run.conn.close()
                    running.remove(run)
                    if run.gpu is not None:
                        free_gpus.append(run.gpu)
                    results[run.index] = result
                    _finished(progress, result)
        except BaseException:  # Ctrl-C, SIGTERM: no job is left running
            for run in running:
                self._stop(run)
            raise
        return results

    def _start(self, index: int, job: Job, gpu: int | None) -> _Running:
        receive, send = self.context.Pipe(duplex=False)
        process = self.context.Process(target=_worker, args=(job, send, gpu), name=f"verify {job.name}", daemon=True)
        process.start()
        send.close()
        return _Running(index, job, process, receive, gpu)

    @staticmethod
    def _stop(run: _Running) -> None:
        if run.process.is_alive():
            run.process.terminate()
            run.process.join(CANCEL_GRACE)
        if run.process.is_alive():
            run.process.kill()
            run.process.join()


# --- Ray -------------------------------------------------------------------------------------------

def import_ray():
    try:
        import ray
    except ImportError:
        raise RayMissing() from None
    return ray


def _ray_job(job: Job, board, bundle: bytes | None) -> JobResult:
    """The Ray task: say where it runs, unpack the trees it was sent (if any) in a folder of its own,
    then the same function as a local worker."""
    import socket

    board.started.remote(job.name, socket.gethostname())
    if bundle is None:
        return run_job(job)
    with tempfile.TemporaryDirectory(prefix="torch-migrate-job-") as folder:
        with tarfile.open(fileobj=io.BytesIO(bundle)) as tar:
            try:
                tar.extractall(folder, filter="tar")
            except TypeError:  # a Python without extraction filters (before 3.9.17)
                tar.extractall(folder)
        return run_job(replace(job, base=(os.path.join(folder, "old"), os.path.join(folder, "new"))))


class _Board:
    """A Ray actor the tasks tell when they start, so that queued and running can be told apart."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def started(self, name: str, host: str) -> None:
        self.seen.append((name, host))

    def drain(self) -> list[tuple[str, str]]:
        seen, self.seen = self.seen, []
        return seen


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _skipped(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = Path(info.name).parts
    return None if any(part in NOT_MIRRORED for part in parts) or info.name.endswith(".pyc") else info


def bundle(trees: Sequence[str]) -> bytes:
    """The OLD and NEW trees as one tar archive (``old/``, ``new/``; links kept as links, a file
    hard-linked into both trees stored once)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for tree, name in zip(trees, ("old", "new")):
            tar.add(tree, arcname=name, filter=_skipped)
    return buffer.getvalue()


def stage(trees: Sequence[str], folder: Path) -> tuple[str, ...]:
    """Copy each tree into ``folder`` as ``old`` and ``new`` (hard links where the file system
    allows); returns their paths."""
    for tree, name in zip(trees, ("old", "new")):
        shutil.copytree(tree, folder / name, symlinks=True, copy_function=_link_or_copy,
                        ignore=shutil.ignore_patterns(*NOT_MIRRORED, "*.pyc"))
    return str(folder / "old"), str(folder / "new")


class RayPool(Pool):
    def __init__(self, engine: Engine):
        import logging

        ray = self.ray = import_ray()
        self.engine = engine
        self.owned = not ray.is_initialized()
        if self.owned:
            address = None if engine.ray in ("", "local") else engine.ray
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING, configure_logging=False,
                         **({"num_cpus": engine.num_cpus} if address is None and engine.num_cpus else {}))
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise RayUnreachable(f"cannot connect to Ray at {engine.ray}: {exc}") from None
        resources = ray.cluster_resources()
        self.gpus = int(resources.get("GPU", 0))
        nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
        self.where = (f"Ray ({'a local instance' if address_is_local(engine.ray) else engine.ray}: "
                      f"{nodes} node{'' if nodes == 1 else 's'}, {int(resources.get('CPU', 0))} CPUs, {self.gpus} GPUs)")
        self.board = ray.remote(num_cpus=0)(_Board).remote()
        self.task = ray.remote(_ray_job)

    def close(self) -> None:
        if not self.ray.is_initialized():
            return
        if self.owned:
            self.ray.shutdown()
        else:
            with contextlib.suppress(Exception):
                self.ray.kill(self.board)

    @contextlib.contextmanager
    def _shipped(self, jobs: Sequence[Job]) -> Iterator[list[tuple[Job, object]]]:
        """Each job as the workers see it, with the object that carries its trees there: a tar archive
        put once in Ray's object store (every job on those trees shares it), or None with --shared-dir,
        where the trees are copied once and the jobs name them."""
        with contextlib.ExitStack() as stack:
            carried = {}
            for roots in dict.fromkeys(job.roots for job in jobs):
                if self.engine.shared_dir is not None:
                    folder = Path(self.engine.shared_dir) / f"torch-migrate-{uuid.uuid4().hex[:12]}"
                    folder.mkdir(parents=True)
                    stack.callback(shutil.rmtree, folder, True)
                    carried[roots] = (stage(roots, folder), None)
                else:
                    carried[roots] = (None, self.ray.put(bundle(roots)))
            yield [(replace(job, base=carried[job.roots][0]), carried[job.roots][1]) for job in jobs]

    def run(self, jobs: Sequence[Job], progress: Progress = Progress()) -> list[JobResult]:
        ray = self.ray
        results: list[JobResult | None] = [None] * len(jobs)
        progress.jobs([job.name for job in jobs], self.where)
        with self._shipped(jobs) as shipped:
            pending = list(enumerate(shipped))
            refs: dict = {}  # ref -> index
            started: dict[int, float] = {}
            try:
                while pending or refs:
                    while pending and (not self.engine.jobs or len(refs) < self.engine.jobs):
                        index, (job, carried) = pending.pop(0)
                        gpu = is_gpu(job.options, self.gpus > 0)
                        if gpu and not self.gpus:
                            results[index] = lost(job, f"needs a GPU ({job.options.device}) and the cluster has none")
                            _finished(progress, results[index])
                            continue
                        resources = {"num_gpus": 1, "num_cpus": 1} if gpu else {"num_cpus": 1}
                        ref = self.task.options(**resources, max_retries=0, name=f"verify {job.name}").remote(
                            job, self.board, carried)
                        refs[ref] = index
                    done, _ = ray.wait(list(refs), num_returns=1, timeout=POLL)
                    for name, host in ray.get(self.board.drain.remote()):
                        for index, job in enumerate(jobs):
                            if job.name == name and index in refs.values() and index not in started:
                                started[index] = time.monotonic()
                                progress.job(name, "running", host)
                    for ref in done:
                        index = refs.pop(ref)
                        results[index] = self._collect(ref, jobs[index])
                        _finished(progress, results[index])
                    now = time.monotonic()
                    for ref, index in list(refs.items()):
                        limit = self.engine.deadline(jobs[index])
                        if index in started and now - started[index] > limit:
                            self._cancel([ref])
                            refs.pop(ref)
                            results[index] = lost(jobs[index], _past(limit, "cancelled"))
                            _finished(progress, results[index])
            except BaseException:  # Ctrl-C: every submitted job is cancelled
                self._cancel(list(refs))
                raise
        return results

    def _cancel(self, refs: list) -> None:
        """Cancel (KeyboardInterrupt in the task: its scripts are killed), then force what is left."""
        ray = self.ray
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
        left = list(refs)
        deadline = time.monotonic() + CANCEL_GRACE
        while left and time.monotonic() < deadline:
            _, left = ray.wait(left, num_returns=len(left), timeout=POLL)
        for ref in left:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)

    def _collect(self, ref, job: Job) -> JobResult:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.WorkerCrashedError:
            reason = "its Ray worker died (the process running it exited or was killed)"
        except ray.exceptions.NodeDiedError:
            reason = "the Ray node running it was lost"
        except ray.exceptions.OutOfMemoryError:
            reason = "Ray's memory monitor killed it: its node ran out of memory"
        except ray.exceptions.TaskCancelledError:
            reason = "cancelled"
        except ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()
            reason = f"Ray could not run it: {type(exc).__name__}: {first[0] if first else ''}"
        return lost(job, reason)


def address_is_local(address: str | None) -> bool:
    return address in (None, "", "local")
