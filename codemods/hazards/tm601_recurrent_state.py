"""TM601: recurrent state carried into the next iteration with its graph."""
from __future__ import annotations

from typing import Iterator, Set, Tuple

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import Facts, hazard_facts, self_name, statement_of
from codemods.hazards.carry import (Carry, carry_assignments, function_of, lazy_init, param_names, read_first,
                                    resettable, state_name, surely_tensor, taint)
from codemods.hazards.fixes import detach_fix
from codemods.hazards.flow import flow_of




class RecurrentStateNotDetached(Rule):
    """Recurrent state kept across iterations with its graph.

    ``self.hx = out`` in a module's ``forward``, or ``hidden = output`` / ``output, hidden = model(x, hidden)``
    in a training loop that calls ``backward()`` every iteration, feeds this iteration's graph into the next
    one. The first ``backward()`` frees that graph; the second walks into it: "RuntimeError: Trying to
    backward through the graph a second time" (seed 002: the hand-written RNN cell). With
    ``retain_graph=True`` it runs instead, back-propagating through every earlier step, ever slower. The
    state must be cut when it is carried over: ``out.detach()`` (truncated BPTT), ``repackage_hidden(h)``,
    or a fresh ``model.init_hidden(bsz)``. Only state that flows through a module call or math with
    parameters and back into itself is reported; a loop without backward is left alone.
    """

    code = "TM601"
    name = "recurrent-state-not-detached"
    summary = "recurrent state carried into the next iteration with its graph (detach it)"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("backward", "def forward")
    changes = (
        Example("import torch.nn as nn\n\nrnn = nn.GRU(4, 8)\nh = None\nfor x in data:\n    out, h = rnn(x, h)\n"
                "    out.sum().backward()\n"),
        Example(
            "import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.W = nn.Parameter(torch.randn(4, 4))\n        self.hx = torch.zeros(1, 4)\n\n"
            "    def forward(self, x):\n        out = torch.tanh(x + torch.mm(self.hx, self.W))\n"
            "        self.hx = out\n        return out\n",
            "import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.W = nn.Parameter(torch.randn(4, 4))\n        self.hx = torch.zeros(1, 4)\n\n"
            "    def forward(self, x):\n        out = torch.tanh(x + torch.mm(self.hx, self.W))\n"
            "        self.hx = out.detach()\n        return out\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch.nn as nn\n\nrnn = nn.LSTM(4, 8)\nhidden = None\nfor x, y in data:\n"
        "    hidden = repackage_hidden(hidden)\n    output, hidden = rnn(x, hidden)\n"
        "    loss = (output - y).pow(2).mean()\n    loss.backward()\n",
        "import torch.nn as nn\n\nrnn = nn.GRU(4, 8)\nhidden = None\nfor x in data:\n"
        "    output, hidden = rnn(x, hidden)\n",
        "import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.W = nn.Parameter(torch.randn(4, 4))\n        self.hx = torch.zeros(1, 4)\n\n"
        "    def forward(self, x):\n        out = torch.tanh(x + torch.mm(self.hx, self.W))\n"
        "        self.hx = out.detach()\n        return out\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        facts = hazard_facts(self.ctx)
        reported: Set[int] = set()
        for stmt, name, fixable in [*self._loop_carries(facts), *self._module_state(facts)]:
            if id(stmt) in reported:
                continue
            reported.add(id(stmt))
            line = statement_of(facts, stmt)
            fix = detach_fix if fixable and line is not None else None
            self.report(line if fix else stmt,
                        f"`{name}` is carried into the next iteration with its graph: the next backward() runs "
                        "into this iteration's freed graph ('Trying to backward through the graph a second time')",
                        fix, unsafe=True,
                        hint=f"carry `{name}.detach()` (truncated BPTT) or repackage/re-initialise it each iteration")

    def _loop_carries(self, facts: Facts) -> Iterator[Tuple[cst.CSTNode, str, bool]]:
        for loop, chain in facts.loops:
            if not facts.runs_backward(loop.body) or facts.detaches_in_place(loop.body):
                continue
            assignments = carry_assignments(facts, loop if isinstance(loop, cst.For) else loop.body)
            carry = None
            region = [loop.test, loop.body] if isinstance(loop, cst.While) else [loop.body]
            for candidate in {n for _, names, _ in assignments for n in names if state_name(n)}:
                mine = [(stmt, value) for stmt, names, value in assignments if candidate in names]
                if any(value is None or facts.in_nograd(stmt, chain) for stmt, value in mine):
                    continue  # a fresh binding (a loop target) or one without graph: the state is not carried
                if read_first(facts, region, candidate):
                    if carry is None:
                        carry = Carry(facts, chain, param_names(facts, flow_of(self.ctx), chain))
                    yield from self._carried(facts, chain, carry, assignments, candidate, mine)

    @staticmethod
    def _carried(facts, chain, carry, assignments, name, mine) -> Iterator[Tuple[cst.CSTNode, str, bool]]:
        tainted = taint(carry, facts, chain, assignments, name)
        levels = [0 if value is None or facts.in_nograd(stmt, chain) else carry.level(value, tainted)
                  for stmt, value in mine]
        if mine and all(level == 2 for level in levels):
            for stmt, value in mine:
                single = isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and not isinstance(
                    stmt.targets[0].target, (cst.Tuple, cst.List))
                yield stmt, name, single and surely_tensor(facts, value, assignments)

    def _module_state(self, facts: Facts) -> Iterator[Tuple[cst.CSTNode, str, bool]]:
        """``self.x = f(self.x, ...)`` in a method of an nn.Module whose state nothing resets."""
        for (cls_name, attr), bindings in facts.self_attrs.items():
            if not facts.module_classes.get(cls_name):
                continue
            outside = [(value, method) for value, method in bindings if method.name.value != "__init__"]
            if not outside or resettable(facts, cls_name, bindings) or any(
                    not (isinstance(t.value, cst.Name) and facts.class_of.get(id(function_of(facts, t))) is not None
                         and t.value.value == self_name(function_of(facts, t)))
                    for t in facts.attr_stores.get(attr, ())):
                continue  # no state kept between calls, or a way to reset it, or set from outside the class
            results = []
            for value, method in outside:
                chain = facts.chain(method)
                key = f"{self_name(method)}.{attr}"
                if not read_first(facts, [method.body], key):
                    results = None
                    break
                assignments = carry_assignments(facts, method.body)
                carry = Carry(facts, chain, param_names(facts, flow_of(self.ctx), chain) - {key})
                tainted = taint(carry, facts, chain, assignments, key)
                for stmt, names, assigned in assignments:
                    if key not in names:
                        continue
                    level = 0 if assigned is None or facts.in_nograd(stmt, chain) else carry.level(assigned, tainted)
                    if level != 2 and not lazy_init(facts, stmt, key):
                        results = None
                        break
                    if level == 2:
                        results.append((stmt, key, surely_tensor(facts, assigned, assignments)))
                if results is None:
                    break
            if results:
                yield from results


RULE = RecurrentStateNotDetached
