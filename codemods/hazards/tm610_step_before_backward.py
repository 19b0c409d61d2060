"""TM610: ``backward()`` through a forward that ran before an ``optimizer.step()`` updated its parameters."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.steps import steps
from codemods.positions import positions
from codemods.syntax import code


class StepBeforeBackward(Rule):
    """A ``backward()`` whose graph holds a forward of module ``M`` that ran before ``opt.step()``, where
    ``opt`` updates ``M``'s parameters, and the step comes between the forward and the backward.

    Optimizers update parameters in place. Since 1.5 autograd checks that the tensors a graph saved are
    unchanged, so the backward raises "one of the variables needed for gradient computation has been modified
    by an inplace operation"; before 1.5 it silently computed gradients from a mix of old activations and new
    weights. The classic case is a GAN whose generator loss goes through ``D(fake)`` computed before
    ``d_opt.step()``; likewise a loss computed before ``opt.step()`` and back-propagated after it. Reported at
    the step and at the backward, with the reordering: compute the forward again after the step (the usual
    ``g_loss = crit(D(fake), ones)`` after the discriminator's update), or back-propagate before stepping.
    No fix: which order the training meant is the author's decision. Forwards under ``no_grad``, reads through
    ``.detach()``, optimizers over other modules and optimizers the file does not show are left alone.
    """

    code = "TM610"
    name = "step-before-backward"
    summary = "`backward()` through a forward computed before an `optimizer.step()` that updated its parameters"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("step(",)
    requires = ("backward",)
    changes = (
        Example("import torch\n\nd_opt = torch.optim.Adam(D.parameters())\nfor z in noise:\n    fake = G(z)\n"
                "    g_out = D(fake)\n    d_loss = D(fake.detach()).mean()\n    d_opt.zero_grad()\n"
                "    d_loss.backward()\n    d_opt.step()\n    g_loss = -g_out.mean()\n    g_loss.backward()\n"),
        Example("import torch\n\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nloss = model(x).pow(2).mean()\n"
                "opt.step()\nloss.backward()\n"),
    )
    keeps = (
        "import torch\n\nd_opt = torch.optim.Adam(D.parameters())\nfor z in noise:\n    fake = G(z)\n"
        "    d_loss = D(fake.detach()).mean()\n    d_opt.zero_grad()\n    d_loss.backward()\n    d_opt.step()\n"
        "    g_loss = -D(fake).mean()\n    g_loss.backward()\n",
        "import torch\n\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nloss = model(x).pow(2).mean()\n"
        "opt.zero_grad()\nloss.backward()\nopt.step()\n",
        "import torch\n\ng_opt = torch.optim.Adam(G.parameters())\nfake = G(z)\nd_opt.step()\n"
        "loss = -D(fake).mean()\nloss.backward()\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.blocks, self.calls = [node], []

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def leave_Module(self, node: cst.Module) -> None:
        found = self.ctx.analysis(steps).stale(self.blocks, self.calls)
        if not found:
            return
        lines = positions(node, [n for stale in found for n in (stale.forward, stale.step, stale.backward)])
        seen = set()
        for stale in found:
            forward, step, backward = (lines[id(n)][0] for n in (stale.forward, stale.step, stale.backward))
            loss = code(stale.backward.func.value) if type(stale.backward.func) is cst.Attribute else "the loss"
            what = (f"`{code(stale.forward)}` (line {forward}) runs before `{code(stale.step.func)}()` (line {step}) "
                    f"updates its parameters in place, and `{loss}` is back-propagated through it after (line "
                    f"{backward})")
            hint = (f"compute `{code(stale.forward)}` again after line {step}, or back-propagate before stepping")
            for at in (stale.step, stale.backward):
                if id(at) not in seen:
                    seen.add(id(at))
                    self.report(at, f"{what}: 'one of the variables needed for gradient computation has been "
                                    "modified by an inplace operation' since 1.5", hint=hint)


RULE = StepBeforeBackward
