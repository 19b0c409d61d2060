"""One verification job: a plain, picklable description, and the one function that runs it.

A ``Job`` is (entry point, arguments and options, device) over two trees: OLD and NEW, each a
folder the job's machine can read. ``run_job`` runs OLD, then NEW, compares and judges
(``verify_pipeline`` on one pair), and returns a ``JobResult``: no callbacks, no shared state, so a
local process pool and a Ray task run the very same function (``fanout``).

Where the trees lie on the machine that runs the job is not known when the job is made (Ray
unpacks a shipped working directory where it likes): ``Job.roots`` names each tree as the caller
sees it, ``Job.base`` where the job finds them (relative to its working directory when not
absolute). The result is translated back (``relocate``), so that a report made on a cluster reads
as one made here, path for path.
"""
from __future__ import annotations

import copy
import dataclasses
import os
import socket
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path, PurePath

from migrate.harness.verify import EXIT_NO_COMPARISON, UsageError, VerifyOptions, VerifyResult, verify_pipeline

GPU_DEVICES = ("cuda", "all")


@dataclass(frozen=True)
class Job:
    """``old``/``new``: the scripts, relative to the ``old``/``new`` trees in ``roots``; ``options``
    carry the arguments, steps, device and tolerances (their roots are set by ``run_job``)."""

    name: str  # the entry point as the user named it (the report's key)
    old: str
    new: str
    roots: tuple[str, str]  # the OLD and NEW trees as the caller sees them
    options: VerifyOptions
    base: tuple[str, str] | None = None  # where the job finds them (None: at ``roots``; relative: in its cwd)

    def where(self) -> tuple[Path, Path]:
        """The OLD and NEW trees on the machine running the job."""
        return tuple(Path(os.path.abspath(b)) for b in (self.base or self.roots))


@dataclass
class JobResult:
    """``status``: done (a verdict, whatever it is) | failed (the job itself failed: the worker died,
    its node was lost, it ran past its time, it could not start); ``verify`` holds the verdict either way."""

    name: str
    status: str
    verify: VerifyResult
    host: str = ""
    seconds: float = 0.0
    detail: str = ""  # for a failed job: what happened, in words

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def is_gpu(options: VerifyOptions, cuda_present: bool) -> bool:
    """A job that needs a GPU: ``cuda``/``all``, or ``auto`` where GPUs are present."""
    return options.device in GPU_DEVICES or (options.device == "auto" and cuda_present)


def job_timeout(options: VerifyOptions) -> float:
    """Seconds after which a whole job counts as lost: OLD, NEW, a repeat of OLD and two localising
    re-runs, each within ``--timeout``, and a minute for start-up."""
    return 5 * options.timeout + 60


def run_job(job: Job) -> JobResult:
    """Run OLD and NEW of one entry point, compare, judge. Never raises for the job's own failures
    (an option that cannot work here, a harness error): they are the result's verdict."""
    started = time.monotonic()
    old_root, new_root = job.where()
    old, new = old_root / job.old, new_root / job.new
    options = replace(job.options, old_root=old_root, new_root=new_root)
    try:
        (verify,) = verify_pipeline([(old, new)], options)
        status, detail = "done", ""
    except UsageError as exc:
        detail = f"not run on {socket.gethostname()}: {exc}"
        verify, status = failure(old, new, options, detail), "failed"
    except Exception as exc:  # the harness failed: say where, for this entry point alone
        last = traceback.extract_tb(exc.__traceback__)[-1]
        detail = f"internal error on {socket.gethostname()}: {type(exc).__name__}: {exc} ({last.filename}:{last.lineno})"
        verify, status = failure(old, new, options, detail), "failed"
    result = JobResult(job.name, status, verify, socket.gethostname(), time.monotonic() - started, detail)
    return relocate(result, {str(here): str(there) for here, there in zip((old_root, new_root), job.roots)
                             if str(here) != str(there)})


def failure(old: Path, new: Path, options: VerifyOptions, reason: str) -> VerifyResult:
    """The verdict of an entry point that could not be compared: no runs to show."""
    return VerifyResult(old, new, options, "error", EXIT_NO_COMPARISON, reason, [])


def lost(job: Job, reason: str) -> JobResult:
    """The result of a job that never came back (its worker or node died, it ran past its time)."""
    roots = [Path(r) for r in job.roots]
    options = replace(job.options, old_root=roots[0], new_root=roots[1])
    return JobResult(job.name, "failed", failure(roots[0] / job.old, roots[1] / job.new, options, reason), detail=reason)


def relocate(obj, prefixes: dict[str, str], _memo: dict | None = None):
    """``obj`` with every path and string that starts with (or contains) a key of ``prefixes`` pointing
    at its value instead; dataclasses (frozen ones too), lists, tuples and dicts are rebuilt, shared
    objects stay shared."""
    if not prefixes:
        return obj
    memo = {} if _memo is None else _memo
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, str):
        for here, there in prefixes.items():
            obj = obj.replace(here, there)
        return obj
    if isinstance(obj, PurePath):
        return type(obj)(relocate(str(obj), prefixes, memo))
    if isinstance(obj, (list, tuple)):
        items = [relocate(item, prefixes, memo) for item in obj]
        new = type(obj)(items) if not hasattr(obj, "_fields") else type(obj)(*items)
    elif isinstance(obj, dict):
        new = {relocate(k, prefixes, memo): relocate(v, prefixes, memo) for k, v in obj.items()}
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        new = copy.copy(obj)
        memo[id(obj)] = new  # before the fields: a field may lead back here
        for f in dataclasses.fields(obj):
            object.__setattr__(new, f.name, relocate(getattr(obj, f.name), prefixes, memo))
        return new
    else:
        return obj
    memo[id(obj)] = new
    return new

