"""The repository index (``codemods.repo``): names that travel between the files of a tree.

The end-to-end tests run ``torch-migrate rewrite`` on a real tree in a subprocess and then the migrated
scripts with real torch: a file that reaches ``Variable`` through ``from model import *`` must still run,
and its ``Variable`` is migrated where it is used.
"""
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cli_support import torch_migrate

import codemods
from codemods.engine import run_rules
from codemods.repo import RepoIndex

ROOT = Path(__file__).resolve().parents[1]

MODEL = """\
import torch
import torch.nn as nn
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


def to_var(x):
    return Variable(x)
"""
TRAIN = """\
from model import *

torch.manual_seed(0)
net = Net()
x = Variable(torch.randn(4, 3))
out = net(x)
assert isinstance(out, Variable)
print(round(float(out.sum()), 4))
"""


def tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def run_script(path):
    result = subprocess.run([sys.executable, "-W", "ignore", path.name], cwd=path.parent, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_star_import_keeps_the_import_and_migrates_the_user(tmp_path):
    root = tree(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    legacy_output = run_script(root / "train.py")
    result = torch_migrate("rewrite", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    model, train = (root / "model.py").read_text(), (root / "train.py").read_text()
    assert "from torch.autograd import Variable" in model  # train.py reads it through the star import
    assert "return x.detach()" in model
    assert "Variable" not in train  # reached through the star import, migrated where it is used
    assert "x = torch.randn(4, 3)" in train and "isinstance(out, torch.Tensor)" in train
    assert run_script(root / "train.py") == legacy_output


def test_from_import_of_a_reexported_name(tmp_path):
    root = tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/util.py": "import torch\nfrom torch.autograd import Variable\n\n\ndef ones():\n"
                       "    return Variable(torch.ones(2))\n",
        "use.py": "from pkg.util import Variable, torch, ones\ny = Variable(torch.ones(2) * 2)\n"
                  "print(float((y + ones()).sum()))\n",
    })
    before = run_script(root / "use.py")
    assert torch_migrate("rewrite", ".", cwd=root).returncode == 0
    util, use = (root / "pkg/util.py").read_text(), (root / "use.py").read_text()
    assert "from torch.autograd import Variable" in util
    assert "y = torch.ones(2) * 2" in use
    assert run_script(root / "use.py") == before


def test_unused_import_still_goes_when_no_other_file_reads_it(tmp_path):
    root = tree(tmp_path, {"model.py": MODEL, "other.py": "from model import Net\nprint(Net)\n"})
    assert torch_migrate("rewrite", ".", cwd=root).returncode == 0
    assert "Variable" not in (root / "model.py").read_text()


def test_index_answers(tmp_path):
    root = tree(tmp_path, {
        "model.py": MODEL + "Variable2 = 1\n",
        "helpers.py": "from model import *\nfrom torch.autograd import Variable as V\n",
        "train.py": "from helpers import *\nx = Variable(t)\ny = V(t)\n",
        "shadow.py": "from model import *\nVariable = lambda x: x\nz = Variable(1)\n",
        "limited.py": "__all__ = ['Net']\nfrom model import *\n",
        "use_limited.py": "from limited import *\nq = Variable(1)\n",
    })
    index = RepoIndex(sorted(root.rglob("*.py")))
    train = index.view(root / "train.py")
    assert train.reaching == {"Variable": "torch.autograd.Variable", "V": "torch.autograd.V".replace(
        "autograd.V", "autograd.Variable")}
    assert index.view(root / "shadow.py").reaching == {}  # rebound in the file
    assert "Variable" not in index.view(root / "use_limited.py").reaching  # __all__ stops it
    model = index.view(root / "model.py")
    assert model.keeps("Variable")  # train.py reads it through helpers' star import
    assert index.view(root / "helpers.py").keeps("V")


def test_single_file_use_needs_no_index():
    source = "from model import *\nx = Variable(t)\n"
    assert run_rules(source, codemods.all_rules()).text == source  # nothing known about `Variable`


def test_index_is_cheap(tmp_path):
    """Building the index costs little next to a rewrite: the test data tree, and 400 files."""
    started = time.perf_counter()
    RepoIndex(sorted((ROOT / "tests" / "data" / "repo").rglob("*.py")))
    small = time.perf_counter() - started
    body = (ROOT / "samples" / "mnist_legacy.py")
    text = body.read_text() if body.exists() else MODEL * 5
    files = {f"pkg{i % 20}/m{i}.py": f"from pkg{(i + 1) % 20}.m{i + 1} import *\n" + text for i in range(400)}
    root = tree(tmp_path, files)
    started = time.perf_counter()
    index = RepoIndex(sorted(root.rglob("*.py")))
    for path in sorted(root.rglob("*.py")):
        index.view(path)
    large = time.perf_counter() - started
    print(f"index: test data tree {small * 1000:.1f} ms, 400 files {large * 1000:.0f} ms")
    assert small < 0.5 and large < 5


def test_cached_result_of_a_star_importer_follows_what_reaches_it(tmp_path):
    """train.py does not change, but model.py starts to give it `Variable`: the cache must not answer."""
    root = tree(tmp_path, {"model.py": "import torch\n", "train.py": TRAIN})
    first = torch_migrate("check", ".", cwd=root)
    assert "TM101" not in first.stdout  # `Variable` is not known to be torch's
    (root / "model.py").write_text(MODEL)
    second = torch_migrate("check", ".", cwd=root)
    assert "train.py" in second.stdout and "TM101" in second.stdout


def test_names_reaching_a_file_that_never_spells_torch_are_resolved(tmp_path):
    """`F.sigmoid` through `from common import *`: the file imports nothing from torch and never says
    `torch`, yet its names resolve to torch's (they were once skipped: the pre-filter looked for the word)."""
    common = "import torch\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n"
    step = "from common import *\n\n\ndef step(model, x):\n    return F.sigmoid(model(x))\n"
    root = tree(tmp_path, {"common.py": common, "train.py": step, "mentions.py": "# torch\n" + step})
    found = torch_migrate("check", ".", cwd=root).stdout.replace("\\", "/")
    assert "train.py:5:12: TM401" in found and "mentions.py:6:12: TM401" in found
