"""Notebooks for the notebook tests, written as real tools write them (nbformat's layout and others).

``notebook_bytes`` serialises cells the way ``json.dumps`` does with a chosen
layout; the same call with the expected new sources is the exact file a
rewrite must produce, so a test compares bytes with an independent writer.
"""
import json
import subprocess
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]


def code(source: str, outputs=(), count=None, **metadata) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": dict(metadata), "outputs": list(outputs),
            "source": source}


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def raw(source: str) -> dict:
    return {"cell_type": "raw", "metadata": {"format": "text/plain"}, "source": source}


def stream(text: str) -> dict:
    return {"name": "stdout", "output_type": "stream", "text": text}


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n"
IMAGE = {"data": {"image/png": PNG, "text/plain": ["<Figure size 432x288 with 1 Axes>"]}, "metadata": {},
         "output_type": "display_data"}


def notebook_bytes(cells: List[dict], *, indent=1, ensure_ascii=False, split=True, sort_keys=True,
                   final_newline=True, crlf=False, bom=False, key_order=None, ids=True) -> bytes:
    """The notebook file for ``cells`` in the given layout (nbformat's own: the defaults)."""
    out_cells = []
    for index, cell in enumerate(cells):
        cell = dict(cell)
        if split:
            cell["source"] = cell["source"].splitlines(True)
        if ids:
            cell["id"] = f"cell-{index}"
        if key_order:
            cell = {key: cell[key] for key in key_order if key in cell} | cell
        out_cells.append(cell)
    document = {"cells": out_cells,
                "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                             "language_info": {"name": "python", "version": "3.11.7"}},
                "nbformat": 4, "nbformat_minor": 5 if ids else 2}
    if key_order:
        document = {"nbformat": 4, "nbformat_minor": document["nbformat_minor"], "metadata": document["metadata"],
                    "cells": out_cells}
    text = json.dumps(document, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys)
    text += "\n" if final_newline else ""
    if crlf:
        text = text.replace("\n", "\r\n")  # strings spell newlines as \n: only the layout changes
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


def sources(path: Path) -> List[str]:
    """Every cell's source, joined."""
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in json.loads(path.read_bytes().decode("utf-8-sig"))["cells"]]


def torch_migrate(*args: str, cwd: Path, script=None, env=None) -> subprocess.CompletedProcess:
    """``torch-migrate ARGS`` in a subprocess, output decoded; ``script`` replaces the entry point."""
    entry = ["-c", script] if script else ["-m", "migrate"]
    result = subprocess.run([sys.executable, *entry, *args], cwd=cwd, capture_output=True, env=env)
    result.stdout, result.stderr = (stream.decode("utf-8", "replace") for stream in (result.stdout, result.stderr))
    return result


# A legacy (PyTorch 0.3) MNIST-style classifier notebook, as course material had them: IPython magics,
# shell escapes, help, a %%time training cell and a `volatile=True` inference cell with their outputs.
MNIST = [
    markdown("# MNIST classifier (PyTorch 0.3)\n\nSynthetic 28x28 *digits*: no download. Größe: 28²."),
    code("%matplotlib inline\n%load_ext autoreload\n%autoreload 2\nimport torch\nimport torch.nn as nn\n"
         "import torch.nn.functional as F\nimport torch.optim as optim\nfrom torch.autograd import Variable", count=1),
    code("!pip install torchvision==0.2.0\n!nvidia-smi -L", outputs=[stream("Requirement already satisfied\n")],
         count=2),
    code("torch.manual_seed(1)\nuse_cuda = torch.cuda.is_available()\n"
         "prototypes = (torch.rand(10, 1, 7, 1, 7, 1) > 0.6).float()\n"
         "prototypes = prototypes.expand(10, 1, 7, 4, 7, 4).contiguous().view(10, 1, 28, 28)\n\n"
         "def digits(n):\n    target = torch.LongTensor(n).random_(0, 10)\n"
         "    data = prototypes.index_select(0, target) + 0.6 * torch.randn(n, 1, 28, 28)\n"
         "    return (data - 0.1307) / 0.3081, target\n\n"
         "train_x, train_y = digits(256)\ntest_x, test_y = digits(128)", count=3),
    code("digits?", count=4),
    code("from __future__ import (print_function,\n                        division)\n"
         "class Net(nn.Module):\n    def __init__(self):\n        super(Net, self).__init__()\n"
         "        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)\n        self.fc1 = nn.Linear(1440, 10)\n\n"
         "    def forward(self, x):\n        x = F.relu(F.max_pool2d(self.conv1(x), 2))\n"
         "        return F.log_softmax(self.fc1(x.view(-1, 1440)), dim=1)\n\n"
         "model = Net()\nif use_cuda:\n    model.cuda()\n"
         "optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)", count=5),
    code("%%time\nmodel.train()\nfor step in range(4):\n"
         "    data, target = train_x[step * 64:(step + 1) * 64], train_y[step * 64:(step + 1) * 64]\n"
         "    if use_cuda:\n        data, target = data.cuda(), target.cuda()\n"
         "    data, target = Variable(data), Variable(target)\n    optimizer.zero_grad()\n"
         "    loss = F.nll_loss(model(data), target)\n    loss.backward()\n    optimizer.step()\n"
         "    print('step {} loss {:.6f}'.format(step, loss.data[0]))",
         outputs=[stream("step 0 loss 2.301\nstep 1 loss 2.287\n"), IMAGE], count=6, collapsed=False),
    markdown("## Inference\n`volatile=True`: no graph."),
    code("model.eval()\ndata = Variable(test_x, volatile=True)\noutput = model(data)\n"
         "test_loss = F.nll_loss(output, Variable(test_y), size_average=False).data[0] / len(test_y)\n"
         "pred = output.data.max(1, keepdim=True)[1]\ncorrect = pred.eq(test_y.view_as(pred)).sum()\n"
         "print('test loss {:.4f}, accuracy {}/{}'.format(test_loss, correct, len(test_y)))",
         outputs=[stream("test loss 2.2764, accuracy 31/128\n")], count=7, tags=["inference"]),
    code('%%bash\necho "Variable(x) is not Python here"', outputs=[stream("Variable(x) is not Python here\n")],
         count=8),
    code("%time probs = F.softmax(model(Variable(test_x[:4])), dim=1)", count=9),
    raw("raw cell: Variable(x, volatile=True)"),
    code("ls -la", count=10),
]
