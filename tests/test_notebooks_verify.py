"""`verify` and `migrate --entry nb.ipynb` on notebooks: the code cells run in order as one script under the
harness, old against new, with real PyTorch (each run takes a few seconds: marked slow)."""
import json
import re

import pytest

from notebook_support import MNIST, code, notebook_bytes, sources, torch_migrate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """The legacy MNIST notebook and its migration by `rewrite`."""
    folder = tmp_path_factory.mktemp("notebooks")
    (folder / "old.ipynb").write_bytes(notebook_bytes(MNIST))
    (folder / "new.ipynb").write_bytes(notebook_bytes(MNIST))
    result = torch_migrate("rewrite", "--no-cache", "new.ipynb", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder


def test_verify_runs_the_code_cells_old_against_new_and_notes_what_it_skipped(migrated):
    result = torch_migrate("verify", "old.ipynb", "new.ipynb", "--compat", "--steps", "3", "--json", "report.json",
                           cwd=migrated)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "EQUIVALENT" in result.stdout
    report = json.loads((migrated / "report.json").read_text())
    assert report["verdict"] == "equivalent"
    for run in report["runs"]:
        assert run["steps"] == 3 and run["status"] == "ok"
        # %%time's body ran (the training steps), as did `%time probs = ...`'s statement; the rest is named
        assert ("notebook run as a script of its code cells; not run: cell 2 `%matplotlib inline`, "
                "cell 2 `%load_ext autoreload`, cell 2 `%autoreload 2`, cell 3 `!pip install torchvision==0.2.0`, "
                "cell 3 `!nvidia-smi -L`, cell 5 `digits?` and 2 more") in run["reason"], run["reason"]
    losses = [run["losses"] for run in report["runs"]]
    assert losses[0] == losses[1] and len(losses[0]) == 3


def test_verify_finds_a_change_in_a_notebook_and_an_unreadable_one(migrated):
    tampered = sources(migrated / "new.ipynb")
    tampered[5] = tampered[5].replace("lr=0.01", "lr=0.02")
    cells = [dict(cell, source=source) for cell, source in zip(MNIST, tampered)]
    (migrated / "tampered.ipynb").write_bytes(notebook_bytes(cells))
    result = torch_migrate("verify", "old.ipynb", "tampered.ipynb", "--compat", "--steps", "2", "--json", "t.json",
                           cwd=migrated)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((migrated / "t.json").read_text())
    assert report["verdict"] == "different" and "value" in report["reason"], report["reason"]

    (migrated / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    result = torch_migrate("verify", "old.ipynb", "broken.ipynb", "--compat", "--steps", "1", "--json", "b.json",
                           cwd=migrated)
    assert result.returncode == 1
    new_run = json.loads((migrated / "b.json").read_text())["runs"][1]
    assert new_run["status"] == "failed"
    assert "notebook not readable: broken.ipynb:1:12: not a notebook: invalid JSON" in new_run["reason"]


def test_migrate_entry_notebook_diff_mode(tmp_path):
    """`migrate REPO --entry nb/mnist.ipynb --diff`: the repository is left alone, the diff shows the notebook
    per cell, the notebook (run from its own folder, reading a file beside it) verifies equivalent."""
    repo = tmp_path / "repo"
    (repo / "nb").mkdir(parents=True)
    cells = [*MNIST[:3], code("print(open('note.txt').read())"), *MNIST[3:]]
    (repo / "nb" / "mnist.ipynb").write_bytes(notebook_bytes(cells))
    (repo / "nb" / "note.txt").write_text("read from the notebook's folder\n")
    (repo / "train.py").write_text("import torch\nx = torch.ones(2).cuda(async=True)\n")
    before = {path: path.read_bytes() for path in repo.rglob("*") if path.is_file()}
    result = torch_migrate("migrate", str(repo), "--entry", "nb/mnist.ipynb", "--diff", "--steps", "2",
                           "--json", str(tmp_path / "card.json"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert before == {path: path.read_bytes() for path in repo.rglob("*") if path.is_file()}
    assert "# nb/mnist.ipynb: a notebook; this is a per-cell diff of its code, not a patch" in result.stdout
    assert re.search(r"^--- a/nb/mnist\.ipynb:cell 8$", result.stdout, re.M)
    assert "+    print('step {} loss {:.6f}'.format(step, loss.item()))" in result.stdout
    assert "--- a/train.py" in result.stdout
    card = json.loads((tmp_path / "card.json").read_text())
    assert sorted(card["changed"]) == ["nb/mnist.ipynb", "train.py"]
    entry = card["entries"][0]
    assert (entry["entry"], entry["verdict"]) == ("nb/mnist.ipynb", "equivalent"), entry["reason"]
    assert "read from the notebook's folder" in entry["verify"]["runs"][0]["stdout_tail"]
