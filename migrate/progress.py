"""Progress of ``verify`` and ``migrate`` on stderr, while stdout carries the report.

A live display on a terminal (what the command is doing, which script runs,
its step count and elapsed time), plain timestamped lines when stderr is a
file or a pipe (a CI log shows that a long run is alive), nothing with ``-q``.
The step count of a running script comes from the record it writes after each
step, which the harness's runner reads as it grows.
"""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Iterator, Optional, Sequence, TextIO

from migrate.words import plural


class Progress:
    """Shows nothing (``-q``); the interface of the two that do."""

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def phase(self, text: str) -> None:
        """What the command does now: a snapshot, a rewrite, an entry point and which of how many."""

    def run_started(self, label: str, script: str, device: str, steps: Optional[int]) -> None:
        """A script run begins (``label`` OLD or NEW; ``steps`` the limit, if any)."""

    def step(self, count: int) -> None:
        """The running script has recorded ``count`` steps."""

    def run_finished(self, status: str, steps: int, seconds: float) -> None:
        """The running script ended."""

    def jobs(self, names: Sequence[str], where: str) -> None:
        """Entry points verified side by side (``where``: a process pool, a Ray cluster) are all queued."""

    def job(self, name: str, state: str, detail: str = "") -> None:
        """An entry point's job is ``running`` (``detail``: the host), ``done`` (its verdict) or
        ``failed`` (why: its worker died, it ran past its time, ...)."""

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """Out of the way while the command asks the user something."""
        yield

    def close(self) -> None:
        """The command is done."""


def _steps(count: int, limit: Optional[int]) -> str:
    return f"step {count} of {limit}" if limit else f"step {count}"


def _finished(run: str, status: str, steps: int, seconds: float) -> str:
    return f"{run}: {status} after {steps} step{'' if steps == 1 else 's'}, {seconds:.1f} s"


class Lines(Progress):
    """One timestamped line per event; a running script's step count at most every ``interval`` seconds
    when it changes, and every six intervals when it does not (a long step, still running)."""

    def __init__(self, stream: Optional[TextIO] = None, interval: float = 10.0):
        self.stream = stream or sys.stderr
        self.interval = interval
        self._run = ""
        self._limit: Optional[int] = None
        self._count = 0
        self._started = self._last = 0.0

    def _line(self, text: str) -> None:
        self.stream.write(f"{time.strftime('%H:%M:%S')} {text}\n")
        self.stream.flush()

    def phase(self, text: str) -> None:
        self._line(text)

    def run_started(self, label: str, script: str, device: str, steps: Optional[int]) -> None:
        self._run, self._limit, self._count = f"{label} run ({script}) on {device}", steps, 0
        self._started = self._last = time.monotonic()
        self._line(f"{self._run}: started" + (f", stops after {steps} steps" if steps else ""))

    def step(self, count: int) -> None:
        now = time.monotonic()
        if now - self._last >= (self.interval if count != self._count else 6 * self.interval):
            self._count, self._last = count, now
            self._line(f"{self._run}: {_steps(count, self._limit)}, {now - self._started:.0f} s")

    def run_finished(self, status: str, steps: int, seconds: float) -> None:
        self._line(_finished(self._run, status, steps, seconds))

    def jobs(self, names: Sequence[str], where: str) -> None:
        self._line(f"{plural(len(names), 'entry point')} queued on {where}: {', '.join(names)}")

    def job(self, name: str, state: str, detail: str = "") -> None:
        self._line(f"{name}: {state}" + (f" ({detail})" if detail else ""))


class Live(Progress):
    """A rich display: the phase with its elapsed time, and the running script with its step count."""

    def __init__(self, console):
        from rich.progress import BarColumn, Progress as Display, SpinnerColumn, TextColumn, TimeElapsedColumn
        from rich.table import Column

        self.console = console
        # A long description is cut (it is also printed whole when a run ends); the step count never is.
        self._display = Display(
            SpinnerColumn(), TextColumn("{task.description}", table_column=Column(ratio=1, no_wrap=True)),
            BarColumn(bar_width=20), TextColumn("{task.fields[steps]}", table_column=Column(no_wrap=True, min_width=14)),
            TimeElapsedColumn(), console=console, transient=True, refresh_per_second=4, expand=True)
        self._phase = self._display.add_task("", total=None, steps="")
        self._run = None
        self._run_text = ""
        self._limit: Optional[int] = None
        self._display.start()

    def phase(self, text: str) -> None:
        self._display.reset(self._phase, description=text, steps="")

    def run_started(self, label: str, script: str, device: str, steps: Optional[int]) -> None:
        self._end_run()
        self._limit, self._run_text = steps, f"{label} run ({script}) on {device}"
        self._run = self._display.add_task(f"  {self._run_text}", total=steps, steps=_steps(0, steps))

    def step(self, count: int) -> None:
        if self._run is not None:
            self._display.update(self._run, completed=count, steps=_steps(count, self._limit))

    def run_finished(self, status: str, steps: int, seconds: float) -> None:
        if self._run is not None:
            self.console.print(f"  {_finished(self._run_text, status, steps, seconds)}", markup=False,
                               highlight=False, style="dim")
        self._end_run()

    def jobs(self, names: Sequence[str], where: str) -> None:
        self._jobs = {name: "queued" for name in names}
        self.console.print(f"{plural(len(names), 'entry point')} on {where}", markup=False, highlight=False, style="dim")
        self._overall = self._phase
        self._display.reset(self._phase, total=len(names))
        self._rows = {name: self._display.add_task(f"  {name}", total=None, steps="queued", start=False)
                      for name in names}
        self._tally()

    def job(self, name: str, state: str, detail: str = "") -> None:
        self._jobs[name] = state
        row = self._rows[name]
        if state == "running":
            self._display.start_task(row)
            self._display.update(row, steps="running", description=f"  {name}" + (f" on {detail}" if detail else ""))
        else:
            self._display.remove_task(row)
            self.console.print(f"  {name}: {state}" + (f" ({detail})" if detail else ""), markup=False,
                               highlight=False, style="dim" if state == "done" else "red")
        self._tally()

    def _tally(self) -> None:
        counts = {state: list(self._jobs.values()).count(state) for state in ("queued", "running", "done", "failed")}
        self._display.update(self._overall, completed=counts["done"] + counts["failed"],
                             description=", ".join(f"{n} {state}" for state, n in counts.items()),
                             steps=f"{counts['done'] + counts['failed']} of {len(self._jobs)}")

    def _end_run(self) -> None:
        if self._run is not None:
            self._display.remove_task(self._run)
            self._run = None

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        self._display.stop()
        try:
            yield
        finally:
            self._display.start()

    def close(self) -> None:
        self._display.stop()


def for_stderr(quiet: bool) -> Progress:
    """Silent with ``-q``, live on a terminal that can redraw (not ``TERM=dumb``), timestamped lines otherwise."""
    if quiet:
        return Progress()
    if sys.stderr.isatty():
        from rich.console import Console

        console = Console(stderr=True, highlight=False)
        if console.is_interactive:
            return Live(console)
    return Lines()
