"""Run one script in a child interpreter, in a throw-away working directory, and read its record.

Why each precaution:
- The script's folder is mirrored into a temp dir (real folders, small files
  copied, large files and folders past MIRROR_LIMIT entries linked) that
  becomes the working directory: relative reads and sibling imports work,
  while checkpoints and logs the script writes land in the copy, never in the
  user's folder nor in the other run's. A link turns into a copy before the
  script writes through it (bootstrap's audit hook; on Python < 3.8, as an
  ``--old-python`` may be, links are not guarded).
- The child starts a new session (own process group) and carries a unique
  marker in its environment; when it ends, times out, or the harness is
  interrupted, the group and every process carrying the marker (also
  ``setsid`` escapees) get SIGTERM, then SIGKILL: nothing is left behind.
- stdin is closed (a script that reads it gets EOF at once) and output goes to
  files, so megabytes of it neither block the child nor fill the harness's memory.
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
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from migrate.notebook import runnable

BOOTSTRAP = Path(__file__).with_name("bootstrap.py")
MARKER_VAR = "TORCH_MIGRATE_RUN"
COPY_LIMIT = 8 * 1024 * 1024  # bytes; bigger files (datasets) are linked, not copied
MIRROR_LIMIT = 5000  # entries copied before the rest of the tree is linked instead of walked
NOT_MIRRORED = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", "node_modules"}
TAIL_BYTES = 64 * 1024
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
FULL_LIMIT = 4096  # tensors up to this many elements are recorded whole
_SIGNAL_HINTS = {
    signal.SIGKILL: "killed (SIGKILL): out of memory? the kernel's OOM killer sends SIGKILL",
    signal.SIGSEGV: "crashed with a segmentation fault (SIGSEGV)",
    signal.SIGABRT: "aborted (SIGABRT)",
}
_FAULT_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class RunSpec:
    """One run. ``source_dir`` is what gets mirrored as the working directory."""

    label: str
    script: Path
    source_dir: Path
    python: str = sys.executable
    args: tuple[str, ...] = ()
    device: str = "cpu"
    steps: int | None = None
    timeout: float = 600.0
    compat: bool = False
    full: bool = False
    memory_steps: int = 3
    seed: int = 0


@dataclass
class RunOutcome:
    """What one run did. ``status``: ok | failed | crashed | timeout | skipped (never started)."""

    spec: RunSpec
    status: str
    reason: str
    returncode: int | None
    wall_time: float
    header: dict = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)
    memory: dict | None = None
    exception: dict | None = None
    end: dict | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    output_bytes: int = 0
    script_in_run: str = ""
    run_dir: str = ""
    leftover_processes: int = 0  # processes still running after the script ended (all killed)
    needed_sigkill: bool = False  # some process of the tree ignored SIGTERM

    @classmethod
    def skipped(cls, spec: RunSpec, reason: str) -> RunOutcome:
        return cls(spec=spec, status="skipped", reason=reason, returncode=None, wall_time=0.0)

    @property
    def comparable(self) -> bool:
        """Finished (or stopped) with at least one step: something to compare against."""
        return self.status == "ok" and bool(self.steps)

    @property
    def complete_steps(self) -> int:
        return sum(1 for s in self.steps if s["complete"])

    @property
    def failed_step(self) -> int | None:
        """The step in progress when the run failed or crashed."""
        if self.exception:
            return self.exception["step"]
        if self.status in ("crashed", "timeout"):
            return self.complete_steps + 1
        return None

    def failure_frames(self) -> list[tuple[str, int]]:
        """Where the run failed, innermost first: the exception's traceback, or the
        Python frames faulthandler printed for a fatal signal."""
        if self.exception:
            return [(file, int(line)) for file, line, _ in reversed(self.exception["frames"])]
        if self.status == "crashed":
            fault = self.stderr_tail.split("Fatal Python error")[-1]
            return [(m["file"], int(m["line"])) for m in _FAULT_FRAME.finditer(fault)]
        return []

    def original_path(self, file: str) -> Path | None:
        """The user's file behind ``file`` (a path in the run's mirror, or already mapped
        back to the source folder), or None for files outside it (torch, the harness)."""
        source = self.spec.source_dir.resolve()
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


def _tail(path: Path, mirror: Path, source: Path) -> tuple[str, int]:
    size = path.stat().st_size
    with open(path, "rb") as f:
        f.seek(max(0, size - TAIL_BYTES))
        return f.read().decode("utf-8", "replace").replace(str(mirror), str(source)), size


def _read_records(path: Path) -> list[dict]:
    records = []
    try:
        with open(path, "rb") as f:
            while True:
                records.append(pickle.load(f))
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
        pass  # the end of the stream, or a record cut short by a crash
    return records


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
    source_dir = spec.source_dir.resolve()
    script = spec.script.resolve()
    with tempfile.TemporaryDirectory(prefix=f"torch-migrate-{spec.label}-") as tmp:
        tmp_path = Path(tmp)
        cwd = tmp_path / "cwd"
        mirror_tree(source_dir, cwd, exclude=tmp_path)
        inside = source_dir in script.parents
        script_in_run = cwd / script.relative_to(source_dir) if inside else script
        script_in_run, entry_note = runnable(script_in_run, cwd, tmp_path)  # hook: a notebook runs as a script
        record_path = tmp_path / "record.pkl"
        config = {
            "record": str(record_path), "seed": spec.seed, "device": spec.device, "compat": spec.compat,
            "steps": spec.steps, "memory_steps": spec.memory_steps, "full": spec.full, "full_limit": FULL_LIMIT,
        }
        (tmp_path / "config.json").write_text(json.dumps(config))
        marker = uuid.uuid4().hex
        command = [spec.python, str(BOOTSTRAP), str(tmp_path / "config.json"), str(script_in_run), *spec.args]
        started = time.perf_counter()
        timed_out = False
        with open(tmp_path / "stdout", "wb") as out, open(tmp_path / "stderr", "wb") as err:
            proc = subprocess.Popen(command, cwd=cwd, env=_child_env(spec, marker), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                proc.wait(timeout=spec.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:  # also on KeyboardInterrupt: never leave the tree running
                leftovers, forced = kill_tree(proc.pid, f"{MARKER_VAR}={marker}".encode())
                proc.wait()
        wall = time.perf_counter() - started
        # Tracebacks name the mirror; the user knows their own paths.
        stdout_tail, out_size = _tail(tmp_path / "stdout", cwd, source_dir)
        stderr_tail, err_size = _tail(tmp_path / "stderr", cwd, source_dir)
        outcome = RunOutcome(
            spec=spec, status="ok", reason="", returncode=proc.returncode, wall_time=wall,
            stdout_tail=stdout_tail, stderr_tail=stderr_tail, output_bytes=out_size + err_size,
            script_in_run=str(script_in_run), run_dir=str(cwd),
            leftover_processes=max(0, leftovers - (1 if timed_out else 0)), needed_sigkill=forced,
        )
        _absorb(outcome, _read_records(record_path))
        outcome.status, outcome.reason = _classify(outcome, timed_out)
        if entry_note:
            outcome.reason += f" ({entry_note})"
    return outcome


def _absorb(outcome: RunOutcome, records: list[dict]) -> None:
    for record in records:
        kind = record["kind"]
        if kind == "step":
            outcome.steps.append(record)
        elif kind in ("header", "memory", "exception", "end"):
            setattr(outcome, kind, record)


def _classify(outcome: RunOutcome, timed_out: bool) -> tuple[str, str]:
    spec, end, exc = outcome.spec, outcome.end, outcome.exception
    if timed_out:
        how = "SIGKILL: SIGTERM was ignored" if outcome.needed_sigkill else "SIGTERM"
        return "timeout", (f"timed out after {spec.timeout:g} s during step {outcome.complete_steps + 1}; "
                           f"its whole process tree was killed ({how})")
    if exc is not None:
        what = "ran out of memory" if exc["oom"] else f"raised {exc['type']}"
        hint = " (stdin is closed: scripts run non-interactively)" if exc["type"] == "EOFError" else ""
        return "failed", f"{what} at step {exc['step']}: {_first_line(exc['message'])}{hint}"
    if end is not None:
        if end["reason"] == "exit":
            return "failed", f"exited with status {end['exit_code']} after {end['steps']} step(s)"
        return "ok", "stopped after the requested steps" if end["reason"] == "stopped" else "finished"
    rc = outcome.returncode
    if rc is not None and rc < 0:
        sig = signal.Signals(-rc)
        return "crashed", f"{_SIGNAL_HINTS.get(sig, f'killed by {sig.name}')} during step {outcome.complete_steps + 1}"
    if not outcome.header:
        return "failed", f"the harness could not start the script under {spec.python}: {_last_line(outcome.stderr_tail)}"
    if rc == 0:
        return "ok", "left through os._exit(0) before the harness could record the end"
    return "failed", f"exited with status {rc} through os._exit() during step {outcome.complete_steps + 1}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "(no output)"
