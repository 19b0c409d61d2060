"""Run scripts in child interpreters, in a throw-away mirror of their tree, and read their records.

The seam: a ``RunSpec`` (frozen, picklable: what to run and how) goes in, a
``RunOutcome`` (picklable, self-contained: typed records and captured output,
no live temp dir) comes out. ``run_side`` runs several specs in order in one
mirror (a pipeline: what one writes, the next reads); ``run_script`` is one.

Why each precaution:
- The spec's ``root`` is mirrored into a temp dir (real folders, small files
  copied, large files and folders past MIRROR_LIMIT entries linked); the script
  runs from its own folder inside it: relative reads and sibling imports work,
  while checkpoints and logs the script writes land in the copy, never in the
  user's folder nor in the other run's. A link turns into a copy before the
  script writes through it (bootstrap's audit hook; on Python < 3.8, as an
  ``--old-python`` may be, links are not guarded).
- The child starts a new session (own process group) and carries a unique
  marker in its environment; when it ends, times out, or the harness is
  interrupted, the group and every process carrying the marker (also
  ``setsid`` escapees) get SIGTERM, then SIGKILL: nothing is left behind.
- stdin is closed (a script that reads it gets EOF at once) and output goes to
  files, so megabytes of it neither block the child nor fill the harness's memory
  (the first OUTPUT_LIMIT bytes of each stream are kept for comparison, and the
  tail for the report); with ``echo`` it is also copied to the terminal as it comes.
"""
from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrate.notebook import runnable
from migrate.words import plural

from . import records
from .records import (Artifact, End, ExceptionRecord, Forward, Header, Hint, Layer, Log, Memory, ParamGrad, Scalar,
                      Step, WarningRecord)

BOOTSTRAP = Path(__file__).with_name("child") / "bootstrap.py"
MARKER_VAR = "TORCH_MIGRATE_RUN"
COPY_LIMIT = 8 * 1024 * 1024  # bytes; bigger files (datasets) are linked, not copied
MIRROR_LIMIT = 5000  # entries copied before the rest of the tree is linked instead of walked
NOT_MIRRORED = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", "node_modules"}
TAIL_BYTES = 64 * 1024
OUTPUT_LIMIT = 16 * 1024 * 1024  # bytes of each stream kept for comparison
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
POLL_INTERVAL = 0.5  # seconds between two looks at a running child's record (progress)
FULL_LIMIT = 4096  # tensors up to this many elements are recorded whole
_SIGNAL_HINTS = {
    signal.SIGKILL: "killed (SIGKILL): out of memory? the kernel's OOM killer sends SIGKILL",
    signal.SIGSEGV: "crashed with a segmentation fault (SIGSEGV)",
    signal.SIGABRT: "aborted (SIGABRT)",
}
_FAULT_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class RunSpec:
    """One run: ``script`` lies inside ``root``, the tree that gets mirrored; it runs from
    its own folder in the mirror (a script outside ``root`` runs from the mirror's top)."""

    label: str
    script: Path
    root: Path
    python: str = sys.executable
    args: tuple[str, ...] = ()
    device: str = "cpu"
    steps: int | None = None
    timeout: float = 600.0
    compat: bool = False
    full: bool = False
    memory_steps: int = 3
    seed: int = 0
    evaluation: bool = True  # record evaluation forward passes
    metrics: bool = True  # record TensorBoard scalars and log records
    artifacts: bool = True  # read back the files the run writes
    ignore_output: tuple[str, ...] = ()  # globs of written files to leave out
    echo: bool = False  # copy the run's output to this process's stdout/stderr as it comes
    layers: int | None = None  # record every module call and parameter gradient of this step (localisation)


@dataclass
class RunOutcome:
    """What one run did. ``status``: ok | failed | crashed | timeout | skipped (never started)."""

    spec: RunSpec
    status: str
    reason: str
    returncode: int | None
    wall_time: float
    header: Header | None = None
    steps: list[Step] = field(default_factory=list)
    memory: Memory | None = None
    exception: ExceptionRecord | None = None
    end: End | None = None
    forwards: list[Forward] = field(default_factory=list)
    scalars: list[Scalar] = field(default_factory=list)
    logs: list[Log] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    warnings: list[WarningRecord] = field(default_factory=list)
    layers: list[Layer] = field(default_factory=list)  # in completion order (spec.layers)
    param_grads: list[ParamGrad] = field(default_factory=list)  # in backward order (spec.layers)
    hints: list[Hint] = field(default_factory=list)  # what makes two runs of the script differ
    stdout: str = ""  # the first OUTPUT_LIMIT bytes, the mirror's path replaced by the root's
    stderr: str = ""
    stdout_tail: str = ""  # the last TAIL_BYTES
    stderr_tail: str = ""
    step_lines: dict[str, list[int | None]] = field(default_factory=dict)  # stream -> lines written by each step's end
    output_truncated: bool = False  # a stream was longer than OUTPUT_LIMIT
    output_bytes: int = 0
    script_in_run: str = ""
    run_dir: str = ""
    leftover_processes: int = 0  # processes still running after the script ended (all killed)
    needed_sigkill: bool = False  # some process of the tree ignored SIGTERM

    @classmethod
    def skipped(cls, spec: RunSpec, reason: str) -> RunOutcome:
        return cls(spec=spec, status="skipped", reason=reason, returncode=None, wall_time=0.0)

    @property
    def recorded_anything(self) -> bool:
        return bool(self.steps or self.forwards or self.scalars or self.logs or self.artifacts
                    or self.stdout.strip() or self.stderr.strip())

    @property
    def comparable(self) -> bool:
        """Finished (or stopped) with something to compare against: steps, evaluation, output, files."""
        return self.status == "ok" and self.recorded_anything

    @property
    def complete_steps(self) -> int:
        return sum(1 for s in self.steps if s.complete)

    @property
    def failed_step(self) -> int | None:
        """The step in progress when the run failed or crashed."""
        if self.exception:
            return self.exception.step
        if self.status in ("crashed", "timeout"):
            return self.complete_steps + 1
        return None

    def failure_frames(self) -> list[tuple[str, int]]:
        """Where the run failed, innermost first: the exception's traceback, or the
        Python frames faulthandler printed for a fatal signal."""
        if self.exception:
            return [(file, int(line)) for file, line, _ in reversed(self.exception.frames)]
        if self.status == "crashed":
            fault = self.stderr_tail.split("Fatal Python error")[-1]
            return [(m["file"], int(m["line"])) for m in _FAULT_FRAME.finditer(fault)]
        return []

    def original_path(self, file: str) -> Path | None:
        """The user's file behind ``file`` (a path in the run's mirror, or already mapped
        back to the source tree), or None for files outside it (torch, the harness)."""
        source = self.spec.root.resolve()
        if self.run_dir and file.startswith(self.run_dir + os.sep):
            return source / os.path.relpath(file, self.run_dir)
        if file.startswith(str(source) + os.sep) or file == str(self.spec.script.resolve()):
            return Path(file)
        return None


def mirror_tree(source: Path, target: Path, exclude: Path) -> None:
    """Copy ``source`` into ``target`` cheaply (see the module docstring); ``exclude``
    is the run's own temp dir, which may lie inside ``source``."""
    budget = MIRROR_LIMIT
    for root, dirs, files in os.walk(source):
        rel = Path(root).relative_to(source)
        (target / rel).mkdir(parents=True, exist_ok=True)
        descend = []
        for name in dirs:
            path = Path(root, name)
            if name in NOT_MIRRORED or path == exclude:
                continue
            if path.is_symlink() or budget <= 0 or (path / "pyvenv.cfg").exists():
                os.symlink(path.resolve(), target / rel / name)
            else:
                descend.append(name)
        dirs[:] = descend
        for name in files:
            path = Path(root, name)
            budget -= 1
            try:
                if path.is_file() and not path.is_symlink() and path.stat().st_size <= COPY_LIMIT:
                    shutil.copy2(path, target / rel / name)
                    continue
            except OSError:  # unreadable: the script could not read it either, a link keeps it visible
                pass
            if path.exists():
                os.symlink(path.resolve(), target / rel / name)


def _process_tree(pgid: int, marker: bytes) -> list[int]:
    """Live processes in the group or carrying the marker (zombies are already gone)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z":
                continue
            if int(fields[2]) == pgid:
                found.append(int(entry.name))
                continue
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                if marker in f.read().split(b"\0"):
                    found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def kill_tree(pgid: int, marker: bytes) -> tuple[int, bool]:
    """SIGTERM the whole tree, SIGKILL what is left after TERM_GRACE.
    Returns how many processes there were and whether SIGKILL was needed."""
    if not os.path.isdir("/proc"):  # no /proc to search: the process group is all we can reach
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                return 0, sig == signal.SIGKILL
            time.sleep(TERM_GRACE)
        return 0, True
    pids = _process_tree(pgid, marker)
    count = len(pids)
    deadline = time.monotonic() + TERM_GRACE
    sig = signal.SIGTERM
    while pids:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        pids = _process_tree(pgid, marker)
    return count, sig == signal.SIGKILL


def _read_output(path: Path, mirror: Path, root: Path, offsets: list[int | None]) -> tuple[str, str, list[int | None], int]:
    """(head, tail, lines written by each offset, size) of one captured stream. Tracebacks and
    messages name the mirror; the user knows their own paths."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(OUTPUT_LIMIT)
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read()
    lines = [None if offset is None else head.count(b"\n", 0, offset) for offset in offsets]
    decode = lambda raw: raw.decode("utf-8", "replace").replace(str(mirror), str(root))
    return decode(head), decode(tail), lines, size


class _Echo(threading.Thread):
    """Copies what a run writes to its output files to this process's stdout/stderr as it comes."""

    def __init__(self, files: Path) -> None:
        super().__init__(daemon=True)
        self.streams = [(files / "stdout", sys.stdout), (files / "stderr", sys.stderr)]
        self.positions = [0, 0]
        self.done = threading.Event()

    def copy(self) -> None:
        for i, (path, target) in enumerate(self.streams):
            with open(path, "rb") as f:
                f.seek(self.positions[i])
                chunk = f.read()
            if chunk:
                self.positions[i] += len(chunk)
                target.write(chunk.decode("utf-8", "replace"))
                target.flush()

    def run(self) -> None:
        while not self.done.wait(0.1):
            self.copy()
        self.copy()


class _RecordStream:
    """The child's record file, read as it grows: each complete record is parsed once, and a record
    still being written (or cut short by a crash) is left for the next read."""

    def __init__(self, path: Path):
        self.path, self.raw, self._offset = path, [], 0

    def read(self) -> list[dict]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                while True:
                    self.raw.append(pickle.load(f))
                    self._offset = f.tell()
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            pass  # the end of the stream so far
        return self.raw

    def steps(self) -> int:
        return sum(1 for record in self.read() if record["kind"] == Step.KIND)


def _child_env(spec: RunSpec, marker: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        MARKER_VAR: marker,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": str(spec.seed),  # set/dict-of-str iteration order must match between runs
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",  # required for deterministic cuBLAS
    })
    env.setdefault("KINETO_LOG_LEVEL", "99")  # the memory profiler's chatter would pollute stderr
    if spec.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run_script(spec: RunSpec) -> RunOutcome:
    return run_side([spec])[0]


def run_side(specs: Sequence[RunSpec], skip: Sequence[str | None] = (),
             on_start: Callable[[RunSpec], None] | None = None,
             on_step: Callable[[int], None] | None = None,
             on_end: Callable[[RunOutcome], None] | None = None) -> list[RunOutcome]:
    """Run ``specs`` one after the other in one mirror of their common ``root``: a pipeline
    (train, then evaluate, then infer) sees what the runs before it wrote. ``skip[i]``, when
    given and not None, is why run i is not made (its outcome is ``skipped``). ``on_step(n)``
    is told the number of steps the running script has recorded, as it goes."""
    roots = {spec.root.resolve() for spec in specs}
    if len(roots) != 1:
        raise ValueError(f"the runs of one side share one root, not {sorted(map(str, roots))}")
    (root,) = roots
    reasons = list(skip) + [None] * (len(specs) - len(skip))
    outcomes = []
    with tempfile.TemporaryDirectory(prefix=f"torch-migrate-{specs[0].label}-") as tmp:
        mirror = Path(tmp) / "tree"
        mirror_tree(root, mirror, exclude=Path(tmp))
        for i, (spec, reason) in enumerate(zip(specs, reasons)):
            if reason is not None:
                outcomes.append(RunOutcome.skipped(spec, reason))
                continue
            if on_start:
                on_start(spec)
            outcomes.append(_run_in(spec, root, mirror, Path(tmp) / f"run{i}", on_step))
            if on_end:
                on_end(outcomes[-1])
    return outcomes


def _run_in(spec: RunSpec, root: Path, mirror: Path, files: Path,
            on_step: Callable[[int], None] | None = None) -> RunOutcome:
    """One run in an existing mirror; ``files`` holds its config, record and output."""
    files.mkdir()
    script = spec.script.resolve()
    inside = root in script.parents
    script_in_run = mirror / script.relative_to(root) if inside else script
    cwd = script_in_run.parent if inside else mirror
    script_in_run, entry_note = runnable(script_in_run, mirror, files)  # hook: a notebook runs as a script
    record_path = files / "record.pkl"
    record_stream = _RecordStream(record_path)
    config = {
        "record": str(record_path), "seed": spec.seed, "device": spec.device, "compat": spec.compat,
        "steps": spec.steps, "memory_steps": spec.memory_steps, "full": spec.full, "full_limit": FULL_LIMIT,
        "root": str(mirror), "evaluation": spec.evaluation, "metrics": spec.metrics, "artifacts": spec.artifacts,
        "ignore_output": list(spec.ignore_output), "layers": spec.layers,
    }
    (files / "config.json").write_text(json.dumps(config))
    marker = uuid.uuid4().hex
    command = [spec.python, str(BOOTSTRAP), str(files / "config.json"), str(script_in_run), *spec.args]
    started = time.perf_counter()
    timed_out = False
    with open(files / "stdout", "wb") as out, open(files / "stderr", "wb") as err:
        proc = subprocess.Popen(command, cwd=cwd, env=_child_env(spec, marker), stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True)
        echo = _Echo(files) if spec.echo else None
        if echo:
            echo.start()
        try:
            _wait(proc, spec.timeout, lambda: on_step(record_stream.steps()) if on_step else None)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:  # also on KeyboardInterrupt: never leave the tree running
            leftovers, forced = kill_tree(proc.pid, f"{MARKER_VAR}={marker}".encode())
            proc.wait()
            if echo:
                echo.done.set()
                echo.join()
    wall = time.perf_counter() - started
    outcome = RunOutcome(
        spec=spec, status="ok", reason="", returncode=proc.returncode, wall_time=wall,
        script_in_run=str(script_in_run), run_dir=str(mirror),
        leftover_processes=max(0, leftovers - (1 if timed_out else 0)), needed_sigkill=forced,
    )
    _absorb(outcome, record_stream.read())
    sizes = 0
    for stream in ("stdout", "stderr"):
        offsets = [getattr(step, f"{stream}_bytes") for step in outcome.steps]
        head, tail, lines, size = _read_output(files / stream, mirror, root, offsets)
        setattr(outcome, stream, head)
        setattr(outcome, f"{stream}_tail", tail)
        outcome.step_lines[stream] = lines
        outcome.output_truncated |= size > OUTPUT_LIMIT
        sizes += size
    outcome.output_bytes = sizes
    outcome.status, outcome.reason = _classify(outcome, timed_out)
    if entry_note:
        outcome.reason += f" ({entry_note})"
    return outcome


def _wait(proc: subprocess.Popen, timeout: float, poll: Callable[[], None]) -> None:
    """``proc.wait(timeout)``, calling ``poll`` every POLL_INTERVAL seconds meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            proc.wait(timeout=max(0.0, min(POLL_INTERVAL, deadline - time.monotonic())))
            return
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
            poll()


_LISTS = {"step": "steps", "forward": "forwards", "scalar": "scalars", "log": "logs", "artifact": "artifacts",
          "warning": "warnings", "layer": "layers", "param_grad": "param_grads", "hint": "hints"}


def _absorb(outcome: RunOutcome, raw: list[dict]) -> None:
    for record in map(records.parse, raw):
        if record.KIND in _LISTS:
            getattr(outcome, _LISTS[record.KIND]).append(record)
        else:
            setattr(outcome, record.KIND, record)


def _classify(outcome: RunOutcome, timed_out: bool) -> tuple[str, str]:
    spec, end, exc = outcome.spec, outcome.end, outcome.exception
    if timed_out:
        how = "SIGKILL: SIGTERM was ignored" if outcome.needed_sigkill else "SIGTERM"
        return "timeout", (f"timed out after {spec.timeout:g} s during step {outcome.complete_steps + 1}; "
                           f"its whole process tree was killed ({how})")
    if exc is not None:
        what = "ran out of memory" if exc.oom else f"raised {exc.type}"
        hint = " (stdin is closed: scripts run non-interactively)" if exc.type == "EOFError" else ""
        return "failed", f"{what} at step {exc.step}: {_first_line(exc.message)}{hint}"
    if end is not None:
        if end.reason == "exit":
            return "failed", f"exited with status {end.exit_code} after {plural(end.steps, 'step')}"
        return "ok", "stopped after the requested steps" if end.reason == "stopped" else "finished"
    rc = outcome.returncode
    if rc is not None and rc < 0:
        sig = signal.Signals(-rc)
        return "crashed", f"{_SIGNAL_HINTS.get(sig, f'killed by {sig.name}')} during step {outcome.complete_steps + 1}"
    if outcome.header is None:
        return "failed", f"the harness could not start the script under {spec.python}: {_last_line(outcome.stderr_tail)}"
    if rc == 0:
        return "ok", "left through os._exit(0) before the harness could record the end"
    return "failed", f"exited with status {rc} through os._exit() during step {outcome.complete_steps + 1}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "(no output)"
