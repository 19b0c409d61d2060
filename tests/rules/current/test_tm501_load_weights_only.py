"""TM501: `torch.load` of whole pickled objects keeps `weights_only=False`; the migrated loads run on torch 2.13."""
import textwrap

import pytest
import torch

from codemods.engine import run_rules

from current_support import RULES, codes, execute, migrate


def test_load_of_a_saved_model_runs_after_migration(tmp_path):
    source = """
    import torch
    import torch.nn as nn
    model = nn.Linear(3, 2)
    torch.save(model, PATH)
    model = torch.load(PATH)
    out = model(torch.ones(1, 3))
    """
    path = str(tmp_path / "model.pt")
    with pytest.raises(Exception, match="Weights only load failed"):
        execute(textwrap.dedent(source), PATH=path)
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM501"]
    assert "# weights_only=False: it loads a whole pickled model" in outcome.text
    assert execute(outcome.text, PATH=path)["out"].shape == (1, 2)


def test_separate_inference_script_loads_whole_model(tmp_path):
    """The inference script never sees the save: using the value as a module is the evidence."""
    path = tmp_path / "sr.pth"
    torch.save(torch.nn.Conv2d(1, 1, 3), path)
    source = """
    import torch
    model = torch.load(opt_model)
    model.eval()
    out = model(torch.ones(1, 1, 4, 4))
    """
    outcome = migrate(source)
    assert "torch.load(opt_model, weights_only=False)" in outcome.text
    assert execute(outcome.text, opt_model=str(path))["out"].shape == (1, 1, 2, 2)


@pytest.mark.parametrize("source", [
    "import torch as th\nnet = th.load(p)\nnet.train()\n",
    "from torch import load\nnet = load(p).cuda()\nnet.eval()\n",
    "import torch\nwith open(args.save, 'rb') as f:\n    model = torch.load(f)\n    model.rnn.flatten_parameters()\nmodel.eval()\n",
    "import torch\ny = torch.load(p)(x)\n",
])
def test_load_used_as_module_spellings(source):
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM501"]
    assert "weights_only=False)" in outcome.text


def test_argparse_default_matches_save_and_load_paths():
    source = """
    import argparse
    import torch
    parser = argparse.ArgumentParser()
    parser.add_argument('--save', type=str, default='./model.pt')
    parser.add_argument('--checkpoint', type=str, default='model.pt')
    args = parser.parse_args()
    with open(args.save, 'wb') as f:
        torch.save(model, f)
    state = torch.load(args.checkpoint)
    """
    outcome = migrate(source)
    assert "state = torch.load(args.checkpoint, weights_only=False)" in outcome.text
    assert "this file writes it with `torch.save(model)`" in outcome.text


def test_state_dict_saves_and_unrelated_loads_are_not_weakened():
    source = """
    import torch
    torch.save(net.state_dict(), 'weights.pt')
    net.load_state_dict(torch.load('weights.pt'))
    sd = torch.load('weights.pt')
    pretrained = torch.load(args.pretrained)
    """
    outcome = migrate(source)
    assert "weights_only" not in outcome.text
    diagnostics = [f for f in outcome.findings if f.code == "TM501"]
    assert [f.line for f in diagnostics] == [6] and not diagnostics[0].fixable


def test_checkpoint_dict_with_safe_values_is_left_alone_and_namespace_is_not():
    safe = """
    import torch
    for epoch in range(3):
        torch.save({'epoch': epoch, 'state_dict': model.state_dict(), 'arch': 'resnet'}, 'ckpt.tar')
    ckpt = torch.load('ckpt.tar')
    """
    assert migrate(safe).findings == []
    unsafe = safe.replace("'arch': 'resnet'", "'opt': torch.optim.SGD(params, lr=0.1)")
    assert "torch.load('ckpt.tar', weights_only=False)" in migrate(unsafe).text


def test_load_comment_goes_above_a_one_line_compound_statement():
    source = "import torch\nif resume: model = torch.load(path); model.eval()\n"
    outcome = migrate(source)
    assert outcome.text == ("import torch\n# weights_only=False: it loads a whole pickled model, which weights_only=True"
                            " (the default since torch 2.6) refuses\nif resume: model = torch.load(path, "
                            "weights_only=False); model.eval()\n")


def test_load_keyword_after_a_trailing_comma_keeps_layout():
    source = "import torch\nmodel = torch.load(\n    path,\n    map_location='cpu',\n)\nmodel.eval()\n"
    text = migrate(source).text
    assert "    map_location='cpu',\n    weights_only=False,\n)\n" in text


# -- a pickle another file of the repository writes (issue 21 item 6) ---------------------------------------
GENERATE = "import numpy as np\nimport torch\n\ntorch.save(np.arange(6.0).reshape(2, 3), open('traindata.pt', 'wb'))\n"
TRAIN = "import torch\n\ndata = torch.load('traindata.pt')\nprint(float(data.sum()))\n"


def test_a_load_of_what_another_file_writes_keeps_full_unpickling_and_runs(tmp_path):
    import subprocess
    import sys

    from codemods.repo import RepoIndex
    (tmp_path / "generate.py").write_text(GENERATE)
    (tmp_path / "train.py").write_text(TRAIN)
    subprocess.run([sys.executable, "generate.py"], cwd=tmp_path, check=True)
    legacy = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True)
    assert legacy.returncode != 0 and "Weights only load failed" in legacy.stderr
    alone = migrate(TRAIN)  # without the repository: reported only
    assert alone.text == TRAIN and codes(alone, applied=False) == ["TM501"]
    index = RepoIndex([tmp_path / "generate.py", tmp_path / "train.py"])
    outcome = run_rules(TRAIN, RULES, repo=index.view(tmp_path / "train.py"))
    assert "data = torch.load('traindata.pt', weights_only=False)" in outcome.text
    assert "`generate.py` of this repository writes it with `torch.save(np.arange(6.0).reshape(2, 3))`" in outcome.text
    (tmp_path / "train.py").write_text(outcome.text)
    migrated = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True)
    assert migrated.returncode == 0 and migrated.stdout.strip() == "15.0"


def test_another_files_state_dict_save_is_loaded_as_it_is(tmp_path):
    from codemods.repo import RepoIndex, fingerprint
    (tmp_path / "export.py").write_text("import torch\ntorch.save(net.state_dict(), './weights.pt')\n")
    (tmp_path / "other.py").write_text("import torch\ntorch.save(net, 'elsewhere.pt')\n")
    source = "import torch\nsd = torch.load('weights.pt')\n"
    (tmp_path / "use.py").write_text(source)
    index = RepoIndex(sorted(tmp_path.glob("*.py")))
    view = index.view(tmp_path / "use.py")
    assert view.writers("weights.pt") == [("export.py", "net.state_dict()")]
    outcome = run_rules(source, RULES, repo=view)
    assert outcome.text == source and outcome.findings == []


def test_the_cache_key_follows_what_other_files_save_to_a_loaded_path(tmp_path, monkeypatch):
    from codemods import repo
    monkeypatch.setattr(repo, "_PATHS", None)  # restored after the test: the run's files stay undeclared
    monkeypatch.setattr(repo, "_CURRENT", None)
    source = b"import torch\nsd = torch.load('weights.pt')\n"
    (tmp_path / "use.py").write_bytes(source)
    keys = []
    for saved in ("net.state_dict()", "net"):
        (tmp_path / "export.py").write_text(f"import torch\ntorch.save({saved}, 'weights.pt')\n")
        repo.index_files(sorted(tmp_path.glob("*.py")))
        keys.append(repo.fingerprint((tmp_path / "use.py").resolve(), source))
    assert keys[0] != keys[1] and all(keys)
    assert repo.fingerprint(tmp_path / "use.py", b"import torch\nx = torch.load(path)\n") == b""
