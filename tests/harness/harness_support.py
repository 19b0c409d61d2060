"""Helpers for the harness tests: every test runs real scripts in real subprocesses."""
from __future__ import annotations

from pathlib import Path

from migrate.harness.runner import RunOutcome, RunSpec, run_script

SCRIPTS = Path(__file__).parent / "scripts"
QUICK = 60.0  # timeout for runs that should take seconds: a hang fails the test instead of blocking CI


def run(script: Path, *args: str, **spec) -> RunOutcome:
    spec.setdefault("timeout", QUICK)
    return run_script(RunSpec(label="test", script=script, root=script.parent, args=args, **spec))


def variant(tmp_path: Path, source: Path, name: str, *replacements: tuple[str, str]) -> Path:
    """A copy of ``source`` with each (old, new) text replaced once: a migration, right or wrong."""
    text = source.read_text()
    for old, new in replacements:
        assert text.count(old) == 1, f"{old!r} must occur once in {source.name}"
        text = text.replace(old, new)
    target = tmp_path / name
    target.write_text(text)
    return target


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for a parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def printed_pids(outcome: RunOutcome, tag: str) -> list[int]:
    pids = [int(p) for line in outcome.stdout_tail.splitlines() if line.startswith(tag + " ")
            for p in line.split()[1:]]
    assert pids, f"the script printed no {tag!r} line:\n{outcome.stdout_tail[-2000:]}"
    return pids


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() or p.is_dir()}


def traced(tracer: str) -> list[int]:
    wanted, found = f"TORCH_MIGRATE_TEST_TRACER={tracer}".encode(), []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and wanted in (entry / "environ").read_bytes().split(b"\0") and alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found

