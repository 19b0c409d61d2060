"""Timestamped progress lines (stderr not a terminal): a run's step count as it changes, a heartbeat while a
long step runs, and nothing in between. (The command line's use of them is in test_cli_output.py.)"""
import io
import re
import time

from migrate.progress import Lines


def test_step_lines_come_at_most_every_interval_and_as_a_heartbeat_when_stuck():
    stream = io.StringIO()
    lines = Lines(stream, interval=0.5)
    lines.phase("verifying train.py (entry point 1 of 2)")
    lines.run_started("OLD", "train.py", "cpu", 5)
    lines.step(1)  # too soon after the start: no line
    time.sleep(0.6)
    lines.step(2)
    lines.step(3)  # too soon after the last line
    time.sleep(0.6)
    lines.step(3)
    time.sleep(0.6)
    lines.step(3)  # unchanged, and not yet six intervals: no line
    time.sleep(2.5)
    lines.step(3)  # unchanged for six intervals: still running
    lines.run_finished("ok", 5, 12.34)
    printed = stream.getvalue().splitlines()
    expected = [r"verifying train\.py \(entry point 1 of 2\)",
                r"OLD run \(train\.py\) on cpu: started, stops after 5 steps",
                r"OLD run \(train\.py\) on cpu: step 2 of 5, \d s",
                r"OLD run \(train\.py\) on cpu: step 3 of 5, \d s",
                r"OLD run \(train\.py\) on cpu: step 3 of 5, \d s",
                r"OLD run \(train\.py\) on cpu: ok after 5 steps, 12\.3 s"]
    assert len(printed) == len(expected), printed
    for line, pattern in zip(printed, expected):
        assert re.fullmatch(r"\d\d:\d\d:\d\d " + pattern, line), line
