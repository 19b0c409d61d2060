"""TM305: ``torch.cat`` of one-number tensors becomes ``torch.stack``."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.model import BindingKind

REINFORCE = ("import torch\nfrom torch.distributions import Categorical\n\nrewards, log_probs = [], []\n"
             "logits = torch.randn(5, 4, requires_grad=True)\n"
             "for t in range(5):\n    probs = torch.softmax(logits[t], dim=0)\n"
             "    m = Categorical(probs)\n    action = m.sample()\n    log_probs.append(m.log_prob(action))\n"
             "    rewards.append(1.0)\nloss = []\nfor log_prob, reward in zip(log_probs, rewards):\n"
             "    loss.append(-log_prob * reward)\nloss = torch.cat(loss).sum()\n")


class CatOfNumbers(Rule):
    """In 0.3 a loss, a reduction or an element of a 1-dim Variable was a 1-element vector, so
    ``torch.cat(losses)`` of such values gave a vector of them. Since 0.4 they are 0-dim tensors and
    ``torch.cat`` raises "zero-dimensional tensor cannot be concatenated"; ``torch.stack`` gives the
    same vector. The rule fires where every element is provably one number now: a list literal, or a
    list of the same function (or module) only built by literals and ``append`` and passed nowhere
    else, each element a 0-dim tensor by the semantic model (a loss, a full reduction, a 1-dim
    distribution's ``log_prob``, arithmetic of those with numbers). Elements of unknown rank (a
    ``log_prob`` of batched probabilities is 1-dim, and ``cat`` is right there) are left alone."""

    code = "TM305"
    name = "cat-of-numbers"
    min_torch = "0.4"  # `torch.stack` of 0-dim tensors (in 0.3 they were (1,) and stacked to (n, 1))
    summary = "`torch.cat` of one-number tensors (1-element vectors in 0.3, 0-dim now: RuntimeError) becomes `torch.stack`"
    triggers = ("cat(",)
    imports = ("torch",)
    changes = (
        Example("import torch\nimport torch.nn.functional as F\n\nlosses = []\nfor x, y in batches:\n"
                "    losses.append(F.mse_loss(model(x), y))\ntotal = torch.cat(losses).mean()\n",
                "import torch\nimport torch.nn.functional as F\n\nlosses = []\nfor x, y in batches:\n"
                "    losses.append(F.mse_loss(model(x), y))\ntotal = torch.stack(losses).mean()\n"),
        Example(REINFORCE, REINFORCE.replace("torch.cat(loss)", "torch.stack(loss)")),
        Example("import torch\n\n\ndef penalties(a, b):\n    return torch.cat([a.norm(), b.abs().sum()], 0)\n",
                "import torch\n\n\ndef penalties(a, b):\n    return torch.stack([a.norm(), b.abs().sum()], 0)\n"),
    )
    keeps = (
        REINFORCE.replace("logits[t]", "logits[t:t + 1]").replace("dim=0", "dim=1"),  # log_prob is (1,)
        "import torch\nparts = []\nfor x in xs:\n    parts.append(x.sum(0))\nout = torch.cat(parts)\n",  # rank unknown
        "import torch\nlosses = [loss_a.sum()]\nlosses.extend(more)\nout = torch.cat(losses)\n",  # filled elsewhere
        "import torch\nout = torch.cat([x.sum(), y], 0)\n",  # y may be a vector
        "import torch\nout = torch.stack([x.sum(), y.sum()])\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is not cst.Attribute or self.ctx.qualname(node.func) != "torch.cat" or not node.args \
                or node.args[0].keyword is not None or node.args[0].star:
            return
        model = self.ctx.model  # only now: a file without ``torch.cat`` does not need it from this rule
        sources = self._elements(node.args[0].value, node)
        if sources and all(model.value(value, scope).is_tensor and model.value(value, scope).is_number
                           for value, scope in sources):
            self.report(node.func, "`torch.cat` of one-number tensors: they were 1-element vectors in 0.3 and are "
                                   "0-dim now, which `cat` refuses; `torch.stack` gives the same vector",
                        lambda func: func.with_changes(attr=cst.Name("stack")))

    def _elements(self, values: cst.BaseExpression, call: cst.Call):
        """(expression, scope) of every element of ``values``, or ``None`` when the file does not say."""
        model = self.ctx.model
        scope = model.scope_of(call)
        if type(values) in (cst.List, cst.Tuple):
            if any(type(e) is cst.StarredElement for e in values.elements):
                return None
            return [(e.value, scope) for e in values.elements]
        if type(values) is not cst.Name:
            return None
        owner, bindings = model.lookup(values.value, scope)
        if owner is None or not bindings or any(b.kind is not BindingKind.ASSIGN for b in bindings):
            return None
        return model.list_sources(values.value, owner, consumer=call)


RULE = CatOfNumbers
