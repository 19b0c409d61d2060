"""Verification jobs side by side: a local process pool and a real local Ray instance (2 CPUs).

The test repository (tests/data/repo) has two training entry points; a third one, written here,
kills the worker process running it in the middle of training (its parent: the pool process or
the Ray worker), as a crash or a lost node would: that entry point is reported, the others finish.
Ray's tests share one local instance per module (it takes 10-20 s to start); they are skipped
where Ray is not installed.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from migrate.harness import VerifyOptions
from migrate.harness.fanout import Engine, LocalPool, RayPool
from migrate.harness.jobs import Job, JobResult, relocate, run_job

REPO = Path(__file__).resolve().parent / "data" / "repo"
ENTRIES = ["train_classifier.py", "train_regression.py"]
INSTALL_ERROR = 'error: --ray needs Ray, which is not installed here: pip install "torch-migrate[ray]"'
KILLER = """\
import os, signal
import torch
from proj.data import load

torch.manual_seed(0)
features, labels = load()
w = torch.zeros(4, 1, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(10):
    loss = (features.mm(w) - labels.float().unsqueeze(1)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, float(loss))
    if step == 1:  # the process that runs this job dies in the middle of training
        os.kill(os.getppid(), signal.SIGKILL)
        os._exit(1)
"""


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def repo(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(REPO, copy)
    (copy / "train_killer.py").write_text(KILLER)
    return copy


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """The test repository with the killer (OLD) and a rewritten copy of it (NEW)."""
    trees = tmp_path_factory.mktemp("trees")
    shutil.copytree(REPO, trees / "old")
    (trees / "old" / "train_killer.py").write_text(KILLER)
    shutil.copytree(trees / "old", trees / "new")
    subprocess.run([sys.executable, "-m", "migrate", "rewrite", str(trees / "new")], check=True, capture_output=True)
    return trees / "old", trees / "new"


def _jobs(trees, names, steps=3):
    options = VerifyOptions(steps=steps, device="cpu", timeout=120, compat=True)
    return [Job(name, name, name, tuple(map(str, trees)), options) for name in names]


def _check_killed_job_is_reported(results, engine_words):
    by_name = {r.name: r for r in results}
    assert [r.name for r in results] == ["train_killer.py", "train_regression.py"]
    killed = by_name["train_killer.py"]
    assert killed.failed and killed.verify.verdict == "error" and killed.verify.exit_code == 3, killed
    assert re.search(engine_words, killed.verify.reason), killed.verify.reason
    other = by_name["train_regression.py"]
    assert not other.failed and other.verify.verdict == "equivalent", other.verify.reason
    assert other.verify.pairs[0].old.complete_steps == 3


def test_a_job_whose_worker_dies_is_reported_and_the_others_finish_locally(migrated):
    with LocalPool(Engine(jobs=2)) as pool:
        results = pool.run(_jobs(migrated, ["train_killer.py", "train_regression.py"]))
    _check_killed_job_is_reported(results, r"worker process died \(SIGKILL")


def test_a_job_whose_ray_worker_dies_is_reported_and_the_others_finish(ray_instance, migrated):
    with RayPool(Engine(ray="local")) as pool:
        results = pool.run(_jobs(migrated, ["train_killer.py", "train_regression.py"]))
        _check_killed_job_is_reported(results, r"Ray worker died")
        # the instance survives a dead worker: the next job runs
        (again,) = pool.run(_jobs(migrated, ["train_regression.py"], steps=2))
    assert again.verify.verdict == "equivalent" and ray_instance.is_initialized()
    # what the worker saw (the trees it unpacked) reads as the caller's paths
    text = json.dumps(again.verify.to_json())
    assert "torch-migrate-job-" not in text and str(migrated[1] / "train_regression.py") in text


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_a_job_past_its_time_is_stopped_and_reported(engine, request, tmp_path):
    pids = tmp_path / "pids"
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "stuck.py").write_text(
        f"import os, time\nwith open({str(pids)!r}, 'a') as f:\n    f.write('%d\\n' % os.getpid())\ntime.sleep(600)\n")
    tree = str(tmp_path / "tree")
    job = Job("stuck.py", "stuck.py", "stuck.py", (tree, tree), VerifyOptions(device="cpu", timeout=600))
    if engine == "ray":
        request.getfixturevalue("ray_instance")
    pool_class = RayPool if engine == "ray" else LocalPool
    with pool_class(Engine(ray="local" if engine == "ray" else None, job_timeout=8)) as pool:
        started = time.monotonic()
        (result,) = pool.run([job])
    assert result.failed and "ran past 8 s, the time a job may take" in result.verify.reason, result.verify.reason
    assert result.verify.exit_code == 3 and time.monotonic() - started < 60
    time.sleep(1)
    assert _read(pids) and [pid for pid in _read(pids) if _alive(pid)] == []  # its script was killed too


def test_the_result_travels_back_whole(migrated):
    """What a worker sends back pickles, and relocating it only rewrites the paths."""
    import pickle

    repo = migrated[0]
    (job,) = _jobs(migrated, ["train_regression.py"], steps=2)
    result = run_job(job)
    assert isinstance(result, JobResult) and result.verify.verdict == "equivalent"
    back = pickle.loads(pickle.dumps(result))
    assert back.verify.to_json() == result.verify.to_json()
    moved = relocate(result, {str(repo): "/elsewhere/repo"})
    assert moved.verify.old == Path("/elsewhere/repo/train_regression.py")
    assert moved.verify.pairs[0].old.spec.root == Path("/elsewhere/repo")
    assert moved.verify.runs[0] is moved.verify.pairs[0].old  # shared objects stay shared
    assert result.verify.old == repo / "train_regression.py"  # the original is untouched


def _migrate(repo, out, *args):
    command = [sys.executable, "-m", "migrate", "migrate", str(repo), "--diff", "--steps", "4",
               "--json", str(out / "card.json"), "--markdown", str(out / "card.md"),
               *[a for e in ENTRIES for a in ("--entry", e)], *args]
    result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
    assert (out / "card.md").exists(), result.stderr
    return result, (out / "card.md").read_text(), json.loads((out / "card.json").read_text())


def _card(markdown):
    """The card without the step times, which differ between any two runs."""
    return re.sub(r"\| time per step \(median\) \|[^\n]*", "| time per step |", markdown)


@pytest.mark.slow
def test_migrate_on_ray_gives_the_local_report_card(repo, tmp_path):
    pytest.importorskip("ray")
    runs = {}
    for name, args in (("local", ()), ("ray", ("--ray", "local")), ("pool", ("--verify-jobs", "2"))):
        out = tmp_path / name
        out.mkdir()
        runs[name] = _migrate(repo, out, *args)
    for name, (result, markdown, card) in runs.items():
        assert result.returncode == 0, (name, result.stderr)
        assert {e["entry"]: e["verdict"] for e in card["entries"]} == dict.fromkeys(ENTRIES, "equivalent")
        assert _card(markdown) == _card(runs["local"][1]), name
        assert "torch-migrate-job-" not in json.dumps(card)
    stderr = runs["ray"][0].stderr
    assert "2 entry points queued on Ray (a local instance" in stderr
    assert re.search(r"train_classifier.py: running \(", stderr) and "train_regression.py: done (equivalent" in stderr


def test_ray_missing_is_one_clear_line(repo):
    """`--ray` where Ray cannot be imported: one line naming the install command, nothing rewritten."""
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    block = ("import sys; sys.modules['ray'] = None; sys.argv = ['torch-migrate'] + sys.argv[1:]; "
             "from migrate.cli import main; main()")
    result = subprocess.run([sys.executable, "-c", block, "migrate", str(repo), "--entry", ENTRIES[0], "--ray", "auto"],
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [INSTALL_ERROR]
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before


def _sleepers(repo, pids):
    """Both entry points train, write their process id to ``pids``, then sleep long past the test."""
    for name in ENTRIES:
        text = (repo / name).read_text()
        (repo / name).write_text(f"{text}\nimport os, time\nwith open({str(pids)!r}, 'a') as f:\n"
                                 f"    f.write('%d\\n' % os.getpid())\ntime.sleep(600)\n")


def test_ctrl_c_cancels_every_job_on_a_cluster_it_leaves_running(ray_instance, repo, tmp_path):
    """On a cluster the tool did not start, Ctrl-C cancels the jobs: their scripts are killed, the cluster stays."""
    import _thread
    import threading

    pids = tmp_path / "pids"
    _sleepers(repo, pids)

    def interrupt():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_read(pids)) < 2:
            time.sleep(0.5)
        _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()
    options = VerifyOptions(device="cpu", timeout=600, compat=True)
    jobs = [Job(name, name, name, (str(repo), str(repo)), options) for name in ENTRIES]
    with RayPool(Engine(ray="auto")) as pool, pytest.raises(KeyboardInterrupt):
        pool.run(jobs)
    assert len(_read(pids)) == 2
    time.sleep(2)
    assert [pid for pid in _read(pids) if _alive(pid)] == []
    assert ray_instance.is_initialized() and ray_instance.get(ray_instance.put(1)) == 1


@pytest.mark.slow
def test_ctrl_c_cancels_every_job_and_stops_the_local_instance(repo, tmp_path):
    pytest.importorskip("ray")
    pids = tmp_path / "pids"
    _sleepers(repo, pids)
    command = [sys.executable, "-m", "migrate", "migrate", str(repo), "--diff", "--steps", "0", "--no-search",
               *[a for e in ENTRIES for a in ("--entry", e)], "--ray", "local"]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    lines = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_read(pids)) < 2:  # both OLD runs are in their sleep
            time.sleep(1)
        ray_processes = _children(process.pid)  # the local instance: GCS, raylet, workers
        assert len(_read(pids)) == 2 and ray_processes
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=120)[1]
    finally:
        process.kill()
    assert process.returncode == 130, rest
    time.sleep(3)
    alive = [pid for pid in _read(pids) + ray_processes if _alive(pid)]
    assert alive == [], [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in alive if _alive(pid)]


def _read(path):
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _children(parent):
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[1]) == parent:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.slow
def test_verify_several_pairs_on_ray(migrated, tmp_path):
    """`verify OLD NEW --pair OLD:NEW --ray local`: a report per pair, the worst exit status, a JSON list."""
    pytest.importorskip("ray")
    old, new = migrated
    changed = tmp_path / "new"
    shutil.copytree(new, changed)
    script = changed / "train_regression.py"
    script.write_text(script.read_text().replace("lr=0.05", "lr=0.06"))
    command = [sys.executable, "-m", "migrate", "verify", str(old / "train_classifier.py"), str(new / "train_classifier.py"),
               "--pair", f"{old / 'train_regression.py'}:{script}", "--compat", "--steps", "3", "--no-localize",
               "--ray", "local", "--json", str(tmp_path / "results.json")]
    result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = [r["verdict"] for r in json.loads((tmp_path / "results.json").read_text())]
    assert verdicts == ["equivalent", "different"]
    assert f"{old / 'train_regression.py'} vs {script}: different: cpu: " in result.stdout
