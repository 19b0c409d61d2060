"""Scripts that misbehave are reported plainly, leave no process behind and no file in the user's folder."""
from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from harness_support import SCRIPTS, alive, printed_pids, run, snapshot, traced

from migrate.harness import VerifyOptions, runner, verify_scripts
from migrate.harness.comparer import Comparisons

MISBEHAVE = SCRIPTS / "misbehave.py"


@pytest.mark.parametrize("mode, status, reason", [
    ("oom", "failed", "ran out of memory at step 2"),
    ("segv", "crashed", "segmentation fault (SIGSEGV) during step 2"),
    ("abort", "crashed", "aborted (SIGABRT) during step 2"),
    ("stdin", "failed", "raised EOFError at step 2: EOF when reading a line (stdin is closed"),
])
def test_a_run_that_dies_is_reported_and_keeps_the_steps_before(mode, status, reason):
    outcome = run(MISBEHAVE, mode)
    assert outcome.status == status
    assert reason in outcome.reason
    assert outcome.complete_steps == 1
    if status == "crashed":  # faulthandler names the script line that crashed
        assert MISBEHAVE.resolve() in [outcome.original_path(file) for file, _ in outcome.failure_frames()]


def test_children_of_every_kind_are_gone_afterwards(tracer):
    outcome = run(MISBEHAVE, "children")
    assert not traced(tracer)
    assert outcome.status == "ok" and outcome.complete_steps == 2
    pids = printed_pids(outcome, "children")
    assert len(pids) == 3 and outcome.leftover_processes >= 3
    assert not any(alive(pid) for pid in pids)


def test_dataloader_workers_are_gone_after_a_stop_at_n_steps(tracer):
    outcome = run(SCRIPTS / "dataloader.py", steps=2)
    assert not traced(tracer)
    assert (outcome.status, outcome.reason, outcome.complete_steps) == ("ok", "stopped after the requested steps", 2)
    workers = printed_pids(outcome, "worker")
    assert len(workers) == 2 and not any(alive(pid) for pid in workers)


def test_a_script_that_ignores_sigterm_is_killed_at_the_timeout(tracer):
    outcome = run(MISBEHAVE, "sigterm", timeout=15)
    assert outcome.status == "timeout" and "timed out after 15 s" in outcome.reason
    assert not traced(tracer)
    assert outcome.needed_sigkill and "SIGTERM was ignored" in outcome.reason
    assert not any(alive(pid) for pid in printed_pids(outcome, "children"))


def test_megabytes_of_output_neither_block_nor_get_lost():
    outcome = run(MISBEHAVE, "output")
    assert outcome.status == "ok" and outcome.complete_steps == 2
    assert outcome.output_bytes >= 5_000_000
    assert outcome.stdout_tail.endswith("x" * 99 + "\n")


def test_finishing_without_any_step_means_no_comparison_unless_something_else_was_recorded():
    """`nostep` calls the model once, prints nothing and writes nothing: an evaluation call is all there is."""
    options = VerifyOptions(script_args=("nostep",), device="cpu", timeout=60)
    evaluated = verify_scripts(MISBEHAVE, MISBEHAVE, options)
    assert (evaluated.verdict, evaluated.exit_code) == ("equivalent", 0), evaluated.reason
    assert [q.kind for q in evaluated.pairs[0].quantities if q.ok][:2] == ["eval", "outcome"]
    result = verify_scripts(MISBEHAVE, MISBEHAVE, replace(options, compare=Comparisons(evaluation=False)))
    assert (result.verdict, result.exit_code) == ("error", 3)
    assert "without any optimizer step or backward call" in result.reason


@pytest.mark.parametrize("linked", [False, True], ids=["copied", "everything-linked"])
def test_relative_reads_and_sibling_imports_work_and_the_users_folder_is_unchanged(tmp_path, monkeypatch, linked):
    if linked:  # as for large files and for folders past the mirror's budget
        monkeypatch.setattr(runner, "COPY_LIMIT", -1)
        monkeypatch.setattr(runner, "MIRROR_LIMIT", 0)
    project = tmp_path / "project"
    shutil.copytree(SCRIPTS / "project", project)
    before = snapshot(project)
    outcome = run(project / "train.py")
    assert outcome.status == "ok" and outcome.complete_steps == 2, outcome.reason + outcome.stderr_tail
    assert snapshot(project) == before
    assert (project / "data" / "values.txt").read_text() == "1.0 2.0 3.0\n"
