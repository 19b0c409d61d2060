"""`torch-migrate migrate` end to end on a small multi-file repository (tests/data/repo).

The repository has a package with a model and a data module, two training
scripts that import it and read `data/points.csv` by a relative path.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent / "data" / "repo"
ENTRIES = ["train_classifier.py", "train_regression.py"]
SCHEDULER = "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)\n"


def migrate(repo, *args):
    command = [sys.executable, "-m", "migrate", "migrate", str(repo), "--steps", "4", "--json", str(repo.parent / "card.json"),
               "--markdown", str(repo.parent / "card.md"), *[a for e in ENTRIES for a in ("--entry", e)], *args]
    result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    return result, json.loads((repo.parent / "card.json").read_text())


@pytest.fixture
def repo(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(REPO, copy)
    return copy


@pytest.mark.slow
def test_migrate_rewrites_in_place_and_verifies_every_entry_point(repo):
    before = (repo / "proj" / "model.py").read_text()
    result, card = migrate(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {e["entry"]: e["verdict"] for e in card["entries"]} == dict.fromkeys(ENTRIES, "equivalent")
    assert card["written"] and set(card["changed"]) >= {"train_classifier.py", "train_regression.py", "proj/model.py"}
    assert card["fixes"]["TM101"] >= 3 and card["hazards"] == [] and card["errors"] == []
    assert (repo / "proj" / "model.py").read_text() != before and "xavier_uniform_" in (repo / "proj" / "model.py").read_text()
    markdown = (repo.parent / "card.md").read_text()
    assert "| `train_classifier.py` | equivalent |" in markdown
    # The runs left nothing behind in the repository (checkpoints, caches).
    assert sorted(p.name for p in repo.iterdir()) == sorted(p.name for p in REPO.iterdir())


@pytest.mark.slow
def test_diff_mode_leaves_the_repository_alone(repo):
    snapshot = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    result, card = migrate(repo, "--diff")
    assert result.returncode == 0, result.stderr
    assert not card["written"] and "+++ b/train_classifier.py" in result.stdout
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == snapshot


@pytest.mark.slow
def test_a_diverging_entry_point_names_the_rule_and_can_leave_it_out(repo):
    # An unsafe fix that changes training on purpose: TM506 moves `scheduler.step()` after the
    # optimizer step (the pre-1.1 schedule), which is not what the legacy script does on current PyTorch.
    script = repo / "train_classifier.py"
    text = script.read_text().replace("for epoch in range(args.epochs):\n",
                                      SCHEDULER + "for epoch in range(args.epochs):\n    scheduler.step()\n")
    script.write_text(text)
    result, card = migrate(repo, "--unsafe-fixes", "--leave-out-diverging")
    entries = {e["entry"]: e for e in card["entries"]}
    classifier = entries["train_classifier.py"]
    assert classifier["culprit"] == "TM506", classifier
    assert classifier["left_out"] == ["TM506"] and classifier["verdict"] == "equivalent"
    assert entries["train_regression.py"]["verdict"] == "equivalent"
    assert "scheduler.step()\n    for start" in script.read_text()  # TM506's change was left out
    assert result.returncode == 0, result.stdout + result.stderr
