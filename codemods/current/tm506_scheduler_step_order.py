"""TM506: ``scheduler.step()`` before ``optimizer.step()`` moves to the end of the loop body (unsafe)."""
from __future__ import annotations

from typing import Iterable

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.analysis import Evaluator
from codemods.model import Scope
from codemods.names import dotted
from codemods.syntax import code, method_name
from codemods.walk import children, walk

LOOPS = (cst.For, cst.While)


def exits_loop(node: cst.CSTNode, loops: int = 0) -> bool:
    """``continue``/``break`` of this loop, or ``return``/``yield`` anywhere: the end of the body may not run."""
    kind = type(node)
    if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
        return False
    if kind in (cst.Continue, cst.Break) and loops == 0 or kind in (cst.Return, cst.Yield):
        return True
    inner = loops + 1 if kind in LOOPS else loops
    return any(exits_loop(child, inner) for child in children(node))


class SchedulerOrder(Rule):
    """Since PyTorch 1.1 an ``lr_scheduler`` sets the first learning rate in its constructor and ``step()``
    belongs after ``optimizer.step()``. Legacy scripts call ``scheduler.step()`` at the top of each epoch: on
    0.4 that made epoch ``e`` train with ``lr(e)``; now it trains with ``lr(e + 1)`` (the whole schedule one
    epoch early, and PyTorch warns). Moving the call to the end of the same loop body restores ``lr(e)`` for
    every epoch (code after the loop then sees one more step). It is an unsafe fix: a
    ``continue``/``break``/``return`` in the body, or the call inside an ``if``, leaves it as a report.
    ``scheduler.step(epoch)`` (closed form) and ``ReduceLROnPlateau.step(metric)`` are unaffected."""

    code = "TM506"
    min_torch = "0.4"
    name = "scheduler-step-order"
    summary = "`scheduler.step()` before `optimizer.step()` shifts the schedule since 1.1 (unsafe fix: step last)"
    triggers = (".step()",)
    changes = (
        Example(
            "from torch.optim import lr_scheduler\nscheduler = lr_scheduler.StepLR(optimizer, 30)\n"
            "for epoch in range(90):\n    scheduler.step()\n    train(epoch)\n    validate()\n",
            "from torch.optim import lr_scheduler\nscheduler = lr_scheduler.StepLR(optimizer, 30)\n"
            "for epoch in range(90):\n    train(epoch)\n    validate()\n    scheduler.step()\n",
            unsafe=True,
        ),
        Example(
            "import torch\nsched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)\nfor epoch in range(3):\n"
            "    sched.step()\n    for x, y in loader:\n        opt.zero_grad()\n        loss_fn(net(x), y).backward()\n"
            "        opt.step()\n",
            "import torch\nsched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)\nfor epoch in range(3):\n"
            "    for x, y in loader:\n        opt.zero_grad()\n        loss_fn(net(x), y).backward()\n"
            "        opt.step()\n    sched.step()\n",
            unsafe=True,
        ),
        Example(
            "for epoch in range(9):\n    for phase in ['train', 'val']:\n        if phase == 'train':\n"
            "            scheduler.step()\n        run_epoch(model, optimizer)\n",
        ),
    )
    keeps = (
        "for epoch in range(9):\n    train(epoch)\n    scheduler.step()\n",
        "for epoch in range(9):\n    scheduler.step(epoch)\n    train(epoch)\n",
        "for x in loader:\n    optimizer.step()\n    scheduler.step()\n",
        "import torch\nplateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)\nfor e in range(3):\n"
        "    plateau.step()\n    train()\n",
        "for i in range(3):\n    env.step()\n    train(i)\n",
        "for epoch in range(3):\n    scheduler.step()\n    model.train()\n    evaluate(model)\n",
        "while scheduler.step():\n    train()\nfor e in range(2):\n    pass\nelse:\n    scheduler.step()\n    train()\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        model = self.ctx.model
        if node.args or method_name(node) != "step":
            return
        evaluator, scope = Evaluator(self.ctx), model.scope_of(node)
        if not self.is_scheduler(evaluator, node.func.value, scope):
            return
        child, loop = node, model.parent(node)
        while loop is not None and type(loop) not in LOOPS:
            child, loop = loop, model.parent(loop)
        if loop is None or child is not loop.body or type(loop.body) is not cst.IndentedBlock:
            return  # not in a loop body (a loop header, an `else:` block, a one-line loop)
        statement = node
        while model.parent(statement) is not loop.body:
            statement = model.parent(statement)
        body = list(loop.body.body)
        position = body.index(statement)
        if self._steps(evaluator, body[:position], scope) or not self._steps(evaluator, body[position + 1:], scope):
            return
        message = (f"`{code(node)}` runs before the optimizer steps in this loop: since PyTorch 1.1 this shifts "
                   f"the schedule one step early")
        simple = (type(statement) is cst.SimpleStatementLine and len(statement.body) == 1
                  and type(statement.body[0]) is cst.Expr and statement.body[0].value is node)
        if not simple or exits_loop(loop.body):
            self.report(node, message, hint="call it after the optimizer steps (end of the epoch/iteration)")
            return

        def fix(updated: cst.CSTNode) -> cst.CSTNode:
            if type(updated) not in LOOPS:
                return updated
            stmts = list(updated.body.body)
            matches = [i for i, s in enumerate(stmts) if s.deep_equals(statement)]
            if len(matches) != 1:
                return updated
            moved = stmts.pop(matches[0]).with_changes(leading_lines=[])
            return updated.with_changes(body=updated.body.with_changes(body=[*stmts, moved]))

        self.report(loop, message + "; moved to the end of the loop body", fix, unsafe=True)

    @staticmethod
    def is_scheduler(evaluator: Evaluator, node: cst.CSTNode, scope: Scope) -> bool:
        constructor = evaluator.constructor(node, scope)
        if constructor:
            return constructor.startswith(torchapi.SCHEDULER_PREFIX) and not constructor.endswith("ReduceLROnPlateau")
        return "sched" in (dotted(node) or "").lower()

    @staticmethod
    def is_optimizer(evaluator: Evaluator, node: cst.CSTNode, scope: Scope) -> bool:
        constructor = evaluator.constructor(node, scope)
        if constructor:
            return constructor.startswith("torch.optim.") and not constructor.startswith(torchapi.SCHEDULER_PREFIX)
        name = (dotted(node) or "").rpartition(".")[2].lower()
        return "optim" in name or name in ("opt", "optg", "optd") or name.startswith("opt_")

    def _steps(self, evaluator: Evaluator, statements: Iterable[cst.CSTNode], scope: Scope, depth: int = 0) -> bool:
        """A statement steps an optimizer: directly, through a function of this file, or a training call."""
        for statement in statements:
            for call in walk(statement):
                if type(call) is not cst.Call:
                    continue
                if method_name(call) == "step" and self.is_optimizer(evaluator, call.func.value, scope):
                    return True
                callee = dotted(call.func) or ""
                receiver, _, last = callee.rpartition(".")
                training = "train" in last.lower() and not (last == "train" and
                                                            receiver in evaluator.facts.module_names)
                if training or any(self.is_optimizer(evaluator, a.value, scope) for a in call.args):
                    return True
                function = evaluator.function(call, scope)
                if function is not None and depth < 2 and self._steps(
                        evaluator, [function.body], evaluator.model.scope_of_definition(function), depth + 1):
                    return True
        return False


RULE = SchedulerOrder
