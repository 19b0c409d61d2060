"""TM306: an element of a 1-dim tensor is 0-dim since 0.4; keep the 0.3 shape or number where the use needs it."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.data.analysis import DataAnalysis, ZeroDimUse
from codemods.syntax import code, method_call


def unsqueeze(node: cst.CSTNode) -> cst.CSTNode:
    """``target[i]`` -> ``target[i].unsqueeze(0)``: the (1,) vector 0.3 gave."""
    return method_call(node.with_changes(lpar=(), rpar=()), "unsqueeze", [cst.Arg(cst.Integer("0"))], like=node)


def item(node: cst.CSTNode) -> cst.CSTNode:
    """``x.data[i]`` -> ``x.data[i].item()``: the Python number 0.3 gave."""
    return method_call(node.with_changes(lpar=(), rpar=()), "item", like=node)


CHAR_RNN = ("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n\n"
            "criterion = nn.CrossEntropyLoss()\n\n\ndef train(rnn, text):\n"
            "    target = Variable(torch.LongTensor(len(text)).zero_())\n    loss = 0\n"
            "    for c in range(len(text)):\n        output = rnn(text[c])\n"
            "        loss += criterion(output, target[c])\n    return loss\n")
GREEDY = ("import torch\n\n\ndef decode(out):\n    _, top = out.data.topk(1)\n    word = top[0][0]\n"
          "    return vocab[word]\n")


class ZeroDimIndex(Rule):
    """In 0.3 an integer index into a 1-dim Variable gave a 1-element Variable of shape (1,), and into a
    1-dim *tensor* (``x.data``, a comparison, ``topk`` of one) a Python number. Since 0.4 both give a 0-dim
    tensor. Per use: a loss's input or target (``criterion(output, target[i])`` with a (1, C) output now
    raises "Expected input batch_size (1) to match target batch_size (0)") gets ``.unsqueeze(0)``, the (1,)
    vector 0.3 passed (values and gradients unchanged; left alone when the loss's other argument is 0-dim
    too, where both shapes give the same number, or 1-dim or an element itself: the unbatched form that
    current torch accepts and 0.3 refused); an element of a 0.3 tensor used as a number (printed,
    formatted, compared, a dict key, a counter) gets ``.item()``, the Python number 0.3 gave (a 0-dim
    tensor prints as ``tensor(...)`` and hashes by identity). Both only where the indexed value is provably
    1-dim; with its rank unknown a reducing loss's target is reported (not a per-element loss's: sequence
    code takes a (T, B) target's rows with ``reduce=False``), and a ``top[0][0]`` chain of a 0.3 tensor
    gets ``.item()`` as an unsafe fix (it raises rather than guesses if that is not one element). Left
    alone: branch conditions (a 0-dim tensor decides ``if x[0] > 0.5:`` as the number did), elements of
    2-dim values (vectors, then and now), slices and ``.view(1)``/``.unsqueeze(0)`` already there, lists,
    numpy arrays and dicts, printing a Variable's element (0.3 printed a Variable, not a number),
    ``x.data[0]`` (TM301) and ``torch.cat`` of elements (TM305)."""

    code = "TM306"
    name = "zero-dim-index"
    min_torch = "0.4"  # `.unsqueeze(0)`, `.item()` of 0-dim tensors
    summary = ("`x[i]` of a 1-dim tensor is 0-dim since 0.4: a loss argument keeps the 0.3 shape (`.unsqueeze(0)`), "
               "a 0.3 tensor's element used as a number becomes `.item()`")
    triggers = ("]",)
    imports = ("torch",)
    changes = (
        Example(CHAR_RNN, CHAR_RNN.replace("target[c])", "target[c].unsqueeze(0))")),
        Example("import torch\nimport torch.nn.functional as F\n\nscores = torch.randn(4, 3)\n"
                "labels = torch.tensor([0, 2, 1, 1])\nfor i in range(4):\n"
                "    loss = F.nll_loss(F.log_softmax(scores[i:i + 1], 1), labels[i])\n",
                "import torch\nimport torch.nn.functional as F\n\nscores = torch.randn(4, 3)\n"
                "labels = torch.tensor([0, 2, 1, 1])\nfor i in range(4):\n"
                "    loss = F.nll_loss(F.log_softmax(scores[i:i + 1], 1), labels[i].unsqueeze(0))\n"),
        Example("import torch\n\nprobs = model(x).data.view(-1)\nprint('p(2) = %s' % probs[2])\n"
                "best = probs.sort(0)[1][-1]\nlabel = names[best]\n",
                "import torch\n\nprobs = model(x).data.view(-1)\nprint('p(2) = %s' % probs[2].item())\n"
                "best = probs.sort(0)[1][-1].item()\nlabel = names[best]\n"),
        Example(GREEDY, GREEDY.replace("top[0][0]", "top[0][0].item()"), unsafe=True),
    )
    keeps = (
        CHAR_RNN.replace("LongTensor(len(text))", "LongTensor(len(text), 1)"),  # (N, 1) targets: `target[c]` is (1,) now too
        CHAR_RNN.replace("target[c])", "target[c:c + 1])"),
        CHAR_RNN.replace("target[c])", "target[c].view(1))"),
        "import torch\nimport torch.nn as nn\nmse = nn.MSELoss()\npred = torch.randn(5, requires_grad=True)\n"
        "y = torch.randn(5)\nloss = sum(mse(pred[i], y[i]) for i in range(5))\n",  # both 0-dim: the same number
        "import torch\nx = torch.randn(3).data\nif x[0] > 0.5:\n    print('high')\n",
        "import torch\nimport torch.nn.functional as F\nlogits = model(x)\nlabels = torch.tensor([1, 0])\n"
        "loss = sum(F.cross_entropy(logits[i], labels[i]) for i in range(2))\n",  # unbatched: 0.3 refused it
        "import torch\nlosses = [torch.zeros(1)]\nweights = {'a': 1}\nprint(losses[0], weights['a'])\n",
        "import numpy as np\nimport torch\na = np.zeros(3)\nprint(a[0])\n",
        "import torch\nout = torch.randn(3, requires_grad=True)\nprint(out[0])\n",  # a Variable's element
        "import torch\nx = torch.randn(3)\nv = torch.stack([x.data[1], x.data[2]])\n",  # used as tensors
    )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        use = self.ctx.analysis(DataAnalysis).zero_dim_use(node)
        if use is None:
            return
        name, whole = code(node.value), code(node)
        if use is ZeroDimUse.LOSS_ARGUMENT:
            self.report(node, f"`{whole}` is 0-dim since 0.4 (a (1,) vector in 0.3): as a loss argument it no longer "
                              f"matches a batch of one; `{whole}.unsqueeze(0)` keeps the 0.3 shape", unsqueeze)
        elif use is ZeroDimUse.LOSS_ARGUMENT_UNPROVEN:
            self.report(node, f"`{whole}` is 0-dim since 0.4 if `{name}` is 1-dim (it was a (1,) vector in 0.3): "
                              f"pass `{whole}.unsqueeze(0)` to the loss if so")
        elif use is ZeroDimUse.NUMBER:
            self.report(node, f"`{whole}` was a Python number in 0.3 and is a 0-dim tensor now (prints as "
                              f"`tensor(...)`, hashes by identity): `.item()`", item)
        else:
            self.report(node, f"`{whole}` was a Python number in 0.3 if it is one element; now a 0-dim tensor: "
                              f"`.item()` (raises if it is not one element)", item, unsafe=True)


RULE = ZeroDimIndex
