"""TM604: ``retain_graph=True`` on the only backward of a graph."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import Chain, Facts, enclosing_loop, hazard_facts, running_nodes
from codemods.hazards.origins import GraphOrigin
from codemods.syntax import argument, literal, method_name
from codemods.torchapi import AUTOGRAD_CALLS




def _receiver(call: cst.Call, qualified: Optional[str]) -> Optional[cst.CSTNode]:
    if method_name(call) == "backward" and qualified not in AUTOGRAD_CALLS:
        return call.func.value
    first = argument(call, "outputs" if qualified == "torch.autograd.grad" else "tensors", 0)
    return first.value if first is not None else None


class RetainGraphPatch(Rule):
    """``retain_graph=True`` on a ``backward()`` that is the only backward of its graph.

    ``retain_graph=True`` is needed when a second ``backward()``/``autograd.grad`` goes through the same
    graph (two losses sharing a forward, a gradient penalty). On the only backward of a graph built fresh each
    iteration it is the patch the seed warns about: it silences "Trying to backward through the graph a second
    time", whose cause is a graph kept from outside the loop (a tensor that should not require grad, a state
    that should be detached), and keeps every graph alive: memory and time grow (seed 000: it no longer fit on
    the GPU). Not reported when the scope has another backward, when the loss comes from the function's
    arguments or ``self``, or when the same loss is back-propagated repeatedly in a loop.
    """

    code = "TM604"
    name = "retain-graph-patch"
    summary = "`retain_graph=True` on the only backward of its graph hides a bug and keeps graphs alive"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("retain_graph", "retain_variables")
    changes = (
        Example(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
            "    loss.backward(retain_graph=True)\n    optimizer.step()\n"
        ),
        Example(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
            "    loss.backward(retain_variables=True)\n    optimizer.step()\n"
        ),
    )
    keeps = (
        "for x in loader:\n    policy_loss, value_loss = agent(x)\n    optimizer.zero_grad()\n"
        "    policy_loss.backward(retain_graph=True)\n    value_loss.backward()\n    optimizer.step()\n",
        "import torch\n\ny = f(x)\nfor i in range(3):\n"
        "    g, = torch.autograd.grad(y[i], x, retain_graph=True)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = hazard_facts(self.ctx)
        for call, chain in facts.backwards:
            retain = argument(call, "retain_graph") or argument(call, "retain_variables")  # the 0.3 spelling
            if retain is None or literal(retain.value) is not True or argument(call, "create_graph") is not None:
                continue
            if any(other is not call and other_chain[0] is chain[0] for other, other_chain in facts.backwards):
                continue
            receiver = _receiver(call, facts.qualname(call.func))
            if receiver is None or self._shared(facts, call, receiver, chain):
                continue
            if enclosing_loop(facts, call, chain[0]) is not None:
                message = ("`retain_graph=True` on the only backward() of each iteration's graph: it hides a graph "
                           "kept from an earlier iteration and keeps every graph alive (memory and time grow)")
            else:
                message = ("`retain_graph=True` on the only backward() of this graph: nothing back-propagates "
                           "through it again, it only keeps the graph's buffers alive")
            self.report(call, message, hint="find what carries a graph across iterations (a tensor that should "
                                            "not require grad, a state to detach) and drop retain_graph")

    def _shared(self, facts: Facts, call: cst.Call, receiver: cst.CSTNode, chain: Chain) -> bool:
        """Whether the graph may be back-propagated again: another backward in this scope, or the loss reads
        a value whose graph was built before the loop (or outside the function) and is reused."""
        scope = chain[0]
        for inner in running_nodes(scope.body if not isinstance(scope, cst.Module) else scope):
            if isinstance(inner, cst.Call) and inner is not call and facts.runs_backward(inner):
                return True
        region = enclosing_loop(facts, call, scope) or scope
        origin = GraphOrigin(facts, chain, region)
        return any(origin.outside(name) == GraphOrigin.GRAPH for name in origin.free_names(receiver))


RULE = RetainGraphPatch
