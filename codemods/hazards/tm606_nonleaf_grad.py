"""TM606: ``.grad`` of a tensor that is not a leaf."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import Facts, hazard_facts
from codemods.hazards.flow import flow_of
from codemods.syntax import method_name
from codemods.walk import parent




class NonLeafGrad(Rule):
    """Reading ``.grad`` of a tensor that is not a leaf.

    ``backward()`` stores gradients only in leaves (tensors made by the user or parameters). A result of
    an operation (``y = x * 2``, ``out = model(x)``, ``h = w.view(-1)``) has ``grad_fn`` set; its ``.grad``
    stays ``None`` (with a UserWarning), so code that reads it gets ``None`` or crashes on ``None.data`` (seed
    002). Call ``y.retain_grad()`` before backward if that gradient is really wanted, or read the leaf's
    ``.grad``. The classic case: ``w = torch.rand(10, requires_grad=True).cuda()`` names the GPU copy, not the
    leaf. Reported only when the file shows the tensor is computed from one that requires grad (a CPU float32
    factory moved by ``.cuda()``/``.to('cuda')``/``.double()`` is a copy; ``.to(device)`` may not be), and it
    never calls ``retain_grad()`` on it.
    """

    code = "TM606"
    name = "non-leaf-grad"
    summary = "`.grad` of a non-leaf tensor is None (call `retain_grad()` or read the leaf's grad)"
    kind = "hazard"
    min_torch = "0.4"
    triggers = (".grad",)
    changes = (
        Example(
            "import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.sum().backward()\nprint(y.grad)\n"
        ),
        Example(
            "import torch\n\nw = torch.rand(10, requires_grad=True).cuda()\nw.sum().backward()\nprint(w.grad)\n"
        ),
    )
    keeps = (
        "import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.retain_grad()\ny.sum().backward()\n"
        "print(x.grad, y.grad)\n",
        "import torch\n\nfor name, p in model.named_parameters():\n    if p.grad is not None:\n"
        "        print(name, p.grad.norm())\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = hazard_facts(self.ctx)
        for attribute, name in flow_of(self.ctx).nonleaf_grads:
            if self._retains(facts, attribute, name):
                continue
            self.report(attribute, f"`{name}` is not a leaf (it is computed from tensors that require grad): "
                                   f"`{name}.grad` is None", hint=f"call `{name}.retain_grad()` before backward, or "
                                                                  "read the gradient of the leaf")

    @staticmethod
    def _retains(facts: Facts, attribute: cst.Attribute, name: str) -> bool:
        chain = facts.chain(attribute)
        scope = facts.resolve(name, chain)
        return any(method_name(parent(parent(use))) == "retain_grad"
                   for use, _ in facts.uses.get((id(scope), name), []))


RULE = NonLeafGrad
