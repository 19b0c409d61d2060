"""TM607: ``requires_grad`` on a tensor that nothing optimises or differentiates."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import Facts, hazard_facts, is_factory, sole_in_block, statement_of, test_or_debug
from codemods.hazards.fixes import without_argument
from codemods.hazards.origins import Uses
from codemods.syntax import argument, literal, method_name
from codemods.torchapi import VARIABLE




class UnusedRequiresGrad(Rule):
    """``requires_grad`` set on a tensor that nothing optimises or differentiates with respect to.

    The seed's bug (000): migrating ``style = Variable(style.repeat(...)).cuda()`` by hand into
    ``style.repeat(...).to(device).requires_grad_(True)``. ``style`` is not in any optimizer, its ``.grad`` is
    never read, it is not an input of ``torch.autograd.grad``; but the features computed from it once, before
    the training loop, now carry a graph. The first ``backward()`` frees it and the second fails: "Trying to
    backward through the graph a second time" (and with ``retain_graph=True``: memory and time grow). Even
    without that, every backward computes a gradient nobody reads. Reported when every use of the tensor in
    its scope is math, a module call or a rebinding; any other use (returned, stored, passed to an unknown
    function, put in a container) keeps it quiet. The unsafe fix drops the ``requires_grad``.
    """

    code = "TM607"
    name = "unused-requires-grad"
    summary = "`requires_grad` on a tensor no optimizer or autograd.grad uses: wasted work, shared-graph errors"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("requires_grad",)
    changes = (
        Example(
            "import torch\n\nstyle = torch.rand(1, 3, 8, 8).requires_grad_(True)\nvgg = Vgg16()\n"
            "style_features = vgg(style)\n",
            "import torch\n\nstyle = torch.rand(1, 3, 8, 8)\nvgg = Vgg16()\nstyle_features = vgg(style)\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\n\ndef main():\n    target = torch.zeros(4, requires_grad=True)\n"
            "    loss = ((model(x) - target) ** 2).mean()\n    loss.backward()\n",
            "import torch\n\n\ndef main():\n    target = torch.zeros(4)\n"
            "    loss = ((model(x) - target) ** 2).mean()\n    loss.backward()\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\n\nz = torch.zeros(4, requires_grad=True)\noptimizer = torch.optim.Adam([z], 0.1)\n",
        "import torch\n\nx = images.clone().requires_grad_(True)\nloss = model(x).sum()\nloss.backward()\n"
        "adv = x + 0.1 * x.grad.sign()\n",
        "import torch\n\ninterp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)\nd = critic(interp)\n"
        "g = torch.autograd.grad(d.sum(), interp, create_graph=True)[0]\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = hazard_facts(self.ctx)
        uses = Uses(facts)
        for (scope_id, name), binds in facts.binds.items():
            scope = facts.scopes[scope_id]
            if isinstance(scope, (cst.ClassDef, cst.Lambda)) or any(k == "param" for k, _, _ in binds) or (
                    isinstance(scope, cst.FunctionDef) and test_or_debug(scope)):
                continue
            for kind, value, where in binds:
                site = self._set_site(facts, kind, value, where)
                if site is not None and uses.name_outcome(scope, name) == Uses.NEUTRAL:
                    self._report(site, name)
        for stmt_node, name in facts.requires_grad_statements:
            stmt = statement_of(facts, stmt_node)
            chain = facts.chain(stmt) if stmt is not None else None
            if chain is None:
                continue
            scope = facts.resolve(name, chain)
            binds = facts.binds.get((id(scope), name), [])
            if scope is not chain[0] or not binds or any(k not in ("value",) for k, _, _ in binds) or (
                    isinstance(scope, cst.FunctionDef) and test_or_debug(scope)):
                continue
            if uses.name_outcome(scope, name) == Uses.NEUTRAL:
                fix = (lambda updated: cst.RemoveFromParent()) if not sole_in_block(facts, stmt) else None
                self.report(stmt, self._message(name), fix, unsafe=True, hint=self._hint(name))

    @staticmethod
    def _set_site(facts: Facts, kind: str, value, where) -> Optional[cst.Call]:
        """The call that makes ``name = <value>`` require grad (not a Parameter: modules optimise those)."""
        if kind != "value" or not isinstance(where, cst.Assign) or len(where.targets) != 1 or not isinstance(
                where.targets[0].target, cst.Name):
            return None
        if method_name(value) == "requires_grad_":
            flag = argument(value, "requires_grad", 0)
            return value if flag is None or literal(flag.value) is True else None
        if isinstance(value, cst.Call):
            qualified = facts.qualname(value.func) or ""
            flag = argument(value, "requires_grad")
            if (is_factory(qualified) or qualified in VARIABLE) and flag is not None and literal(
                    flag.value) is True:
                return value
        return None

    def _report(self, site: cst.Call, name: str) -> None:
        if method_name(site) == "requires_grad_":
            fix = lambda updated: updated.func.value  # noqa: E731
        else:
            fix = lambda updated: without_argument(updated, "requires_grad")  # noqa: E731
        self.report(site, self._message(name), fix, unsafe=True, hint=self._hint(name))

    @staticmethod
    def _message(name: str) -> str:
        return (f"`{name}` requires grad but nothing optimises it or differentiates with respect to it: every "
                "backward computes its gradient for nothing, and values computed from it once (before a loop) "
                "make the second backward fail ('Trying to backward through the graph a second time')")

    @staticmethod
    def _hint(name: str) -> str:
        return f"drop requires_grad on `{name}` (a Variable without requires_grad=True becomes the plain tensor)"


RULE = UnusedRequiresGrad
