"""TM603: ``list(tensor)`` / ``[*tensor]`` where a list of parameters is built."""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import (Facts, bound_targets, hazard_facts, is_optimizer_call, running_nodes)
from codemods.hazards.flow import flow_of
from codemods.names import dotted
from codemods.syntax import code, method_name
from codemods.walk import parent




def _sink(facts: Facts, node: cst.CSTNode) -> Tuple[str, Optional[cst.CSTNode]]:
    """Where a list expression ends up: ``("optimizer", call)``, ``("name", target)`` or ``("", None)``."""
    current = node
    while True:
        up = parent(current)
        if isinstance(up, (cst.BinaryOperation, cst.Element, cst.StarredElement, cst.List, cst.Tuple,
                               cst.DictElement, cst.Dict, cst.Arg)):
            current = up
            continue
        if isinstance(up, cst.Call):
            if is_optimizer_call(facts, up):
                return "optimizer", up
            if dotted(up.func) in ("itertools.chain", "chain", "list", "tuple"):
                current = up
                continue
            return "", None
        if isinstance(up, cst.AssignTarget):
            return "", None
        if isinstance(up, (cst.Assign, cst.AugAssign)) and current is up.value:
            target = up.targets[0].target if isinstance(up, cst.Assign) else up.target
            if isinstance(target, cst.Name) and (isinstance(up, cst.AugAssign) or len(up.targets) == 1):
                return "name", target
        return "", None


def _feeds_parameters(facts: Facts, target: cst.Name) -> bool:
    """The list bound to ``target`` is given to an optimizer or looped over to set ``requires_grad``."""
    chain = facts.chain(target)
    scope = facts.resolve(target.value, chain)
    for use, _ in facts.uses.get((id(scope), target.value), []):
        kind, _ = _sink(facts, use)
        if kind == "optimizer":
            return True
        up = parent(use)
        if isinstance(up, cst.For) and use is up.iter:
            loop_vars = {dotted(t) for t in bound_targets(up.target)}
            for inner in running_nodes(up.body):
                if (method_name(inner) == "requires_grad_" and dotted(inner.func.value) in loop_vars) or (
                        isinstance(inner, cst.AssignTarget) and isinstance(inner.target, cst.Attribute)
                        and inner.target.attr.value == "requires_grad"
                        and dotted(inner.target.value) in loop_vars):
                    return True
    return False


class ListOfTensor(Rule):
    """``list(tensor)`` / ``[*tensor]`` where a list of parameters is built.

    ``list(t)`` iterates ``t``'s first dimension: ``list(model.parameters()) + list(perturbation)`` gives the
    optimizer the *rows* of ``perturbation`` (non-leaf views when it requires grad, which ``optim`` rejects;
    otherwise copies nobody reads), so ``perturbation`` itself is never optimised (seed 000). ``[t]`` was
    meant (the unsafe fix). Reported only when the argument is certainly a tensor (a torch factory,
    ``Variable(...)``, ``nn.Parameter``) and the list goes to an optimizer or to a ``requires_grad_`` loop;
    ``list(model.parameters())``, ``list(loader)``, ``list(range(n))`` are other things.
    """

    code = "TM603"
    name = "list-of-tensor"
    summary = "`list(tensor)` in a parameter list iterates its rows; `[tensor]` was meant"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("optim", "requires_grad")
    changes = (
        Example(
            "import torch\n\nz = torch.rand(1, 8, requires_grad=True)\n"
            "params = list(model.parameters()) + list(z)\noptimizer = torch.optim.Adam(params, 1e-3)\n",
            "import torch\n\nz = torch.rand(1, 8, requires_grad=True)\n"
            "params = list(model.parameters()) + [z]\noptimizer = torch.optim.Adam(params, 1e-3)\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\nz = torch.zeros(4, 3)\noptimizer = torch.optim.SGD([*z], lr=0.1)\n",
            "import torch\n\nz = torch.zeros(4, 3)\noptimizer = torch.optim.SGD([z], lr=0.1)\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\n\nparams = list(model.parameters()) + list(head.buffers())\n"
        "optimizer = torch.optim.Adam(params, 1e-3)\n",
        "import torch\n\nz = torch.rand(4, 8)\nrows = list(z)\noptimizer = torch.optim.Adam([z], 1e-3)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        flow = flow_of(self.ctx)
        facts = hazard_facts(self.ctx)
        for found in flow.tensors.values():
            kind, target = _sink(facts, found)
            if kind == "optimizer" or (kind == "name" and _feeds_parameters(facts, target)):
                self._report(found)

    def _report(self, found: cst.CSTNode) -> None:
        if isinstance(found, cst.Call):
            inner = found.args[0].value
            fix = lambda updated: cst.List([cst.Element(updated.args[0].value)], lpar=updated.lpar,  # noqa: E731
                                           rpar=updated.rpar)
        else:
            inner = found.value
            fix = lambda updated: cst.Element(updated.value, comma=updated.comma)  # noqa: E731
        self.report(found, f"`{code(found)}` iterates the rows of the tensor `{code(inner)}`: the optimizer gets "
                           "its rows, never the tensor itself", fix, unsafe=True, hint=f"use `[{code(inner)}]`")


RULE = ListOfTensor
