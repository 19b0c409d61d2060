"""TM705: NVIDIA apex's ``amp`` (opt level O1) becomes ``torch.amp.autocast`` + ``GradScaler``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import libcst as cst

from codemods.base import Example, Rule
from codemods.syntax import argument, code, release_import, spelled, string
from codemods.walk import walk

IMPORT = "import torch\nfrom apex import amp\n\n"
SETUP = "model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
LOOP = ("for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
        "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n        scaled_loss.backward()\n"
        "    optimizer.step()\n")
MIGRATED = ("import torch\n\nscaler = torch.amp.GradScaler(\"cuda\")\n"
            "for x, y in loader:\n    optimizer.zero_grad()\n    with torch.amp.autocast(\"cuda\"):\n"
            "        loss = criterion(model(x), y)\n    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n    scaler.update()\n")
O1_ONLY = ("apex O{level} (fp16 master weights{cast}) has no torch.amp counterpart with the same numbers; "
           "torch.amp.autocast + GradScaler is O1: decide by hand, and verify")


@dataclass
class _Plan:
    """apex's uses in one file, and whether they form the O1 pattern the fix knows."""

    initialize: Optional[cst.SimpleStatementLine] = None
    scale_losses: List[cst.With] = field(default_factory=list)
    optimizers: set = field(default_factory=set)
    blocker: str = ""  # why the file is reported instead of fixed
    scaler: str = "scaler"
    forward: Dict[int, List[cst.CSTNode]] = field(default_factory=dict)  # with -> statements of its forward
    stash: List[cst.CSTNode] = field(default_factory=list)


class ApexAmp(Rule):
    """apex's ``amp`` is deprecated for ``torch.amp``, and does not build against current torch.
    ``amp.initialize(model, optimizer, opt_level='O1')`` patched torch functions to cast to float16 and
    scaled the loss dynamically; the torch equivalent is ``torch.amp.autocast("cuda")`` around the
    forward pass and a ``GradScaler``: the initialize becomes ``scaler = torch.amp.GradScaler("cuda")``,
    each ``with amp.scale_loss(loss, optimizer) as s: s.backward()`` becomes
    ``scaler.scale(loss).backward()`` with the statements that computed the loss since the last update
    wrapped in ``autocast``, and ``optimizer.step()`` becomes ``scaler.step(optimizer)``;
    ``scaler.update()``. Unsafe: the casts autocast picks are not apex's, so the numbers move (within
    mixed-precision noise). O2/O3 (float16 master weights, pure float16), ``amp.master_params``, amp
    state dicts, several models or optimizers, or a loss scale that is not dynamic are reported."""

    code = "TM705"
    min_torch = "2.4"
    name = "apex-amp"
    summary = "apex `amp.initialize`/`amp.scale_loss` (O1) become `torch.amp.autocast` + `GradScaler` (unsafe; O2/O3 reported)"
    triggers = ("amp",)
    imports = ("apex",)
    changes = (
        Example(IMPORT + SETUP + LOOP, MIGRATED, unsafe=True),
        Example(IMPORT + SETUP.replace("O1", "O2") + LOOP, None),
        Example(IMPORT + SETUP + LOOP + "torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)\n", None),
    )
    keeps = (
        "import torch\n\nscaler = torch.amp.GradScaler('cuda')\nscaler.scale(loss).backward()\n",
        "from torch.cuda import amp\nwith amp.autocast():\n    y = model(x)\n",  # TM701's
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = self._plan(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        plan = self.plan
        if node is plan.initialize:
            level = string(argument(node.body[0].value, "opt_level").value)
            if plan.blocker:
                self.report(node, f"apex amp ({plan.blocker})")
            else:
                self.report(node, f"apex `amp.initialize` (opt level {level}): torch.amp.autocast + GradScaler",
                            lambda old: self._scaler_line(old), unsafe=True)
        elif not plan.blocker and self._step_of(node, plan.optimizers):
            self.report(node, "with a GradScaler the optimizer steps through it: `scaler.step(opt)`; `scaler.update()`",
                        self._step_lines, unsafe=True)
        elif not plan.blocker and any(node in forward for forward in plan.forward.values()):
            self.report(node, "part of the forward pass that apex O1 ran in mixed precision: under `autocast`",
                        self._stash, unsafe=True)

    def visit_With(self, node: cst.With) -> None:
        if node in self.plan.scale_losses and not self.plan.blocker:
            self.report(node, "`amp.scale_loss`: `scaler.scale(loss).backward()`, the forward under `autocast`",
                        lambda old: self._backward(node, old), unsafe=True)

    # -- the plan -----------------------------------------------------------------------------------------------
    def _plan(self, module: cst.Module) -> _Plan:
        model, plan = self.ctx.model, _Plan()
        for node in walk(module):
            qualified = model.qualname(node) if type(node) in (cst.Attribute, cst.Name) else None
            if qualified is None or not qualified.startswith("apex.amp."):
                continue
            statement = model.parent(model.parent(model.parent(node)))
            if qualified == "apex.amp.initialize" and type(statement) is cst.SimpleStatementLine and not plan.initialize:
                plan.initialize = statement
                plan.blocker = plan.blocker or self._initialize_blocker(statement.body[0])
            elif qualified == "apex.amp.scale_loss" and type(model.parent(model.parent(model.parent(node)))) is cst.With:
                self._scale_loss(model.parent(model.parent(model.parent(node))), plan)
            else:
                plan.blocker = plan.blocker or f"`{code(node)}` has no automatic torch.amp counterpart"
        if plan.initialize is None:
            plan.blocker = plan.blocker or "no `amp.initialize` in this file"
        elif model.scope_of(plan.initialize) is not model.module_scope and any(
                model.scope_of(w) is not model.scope_of(plan.initialize) for w in plan.scale_losses):
            plan.blocker = "`amp.initialize` and `amp.scale_loss` are in different functions"
        if model.lookup("scaler", model.module_scope)[1]:
            plan.scaler = "grad_scaler"
        return plan

    def _initialize_blocker(self, statement: cst.CSTNode) -> str:
        call = statement.value if type(statement) is cst.Assign else None
        level = argument(call, "opt_level") if type(call) is cst.Call else None
        level = string(level.value) if level is not None else None
        if level not in ("O1", "O2", "O3"):
            return "the opt level is not a literal 'O1'" if call is not None else "`amp.initialize` not assigned"
        if level != "O1":
            return O1_ONLY.format(level=level[1], cast=", batchnorm in float32" if level == "O2" else ", pure float16")
        scale = argument(call, "loss_scale")
        if scale is not None and string(scale.value) != "dynamic":
            return "a static loss scale: GradScaler is dynamic (GradScaler(init_scale=..., growth_interval=...))"
        others = [a for a in call.args if a.keyword is not None and a.keyword.value not in ("opt_level", "loss_scale")]
        if others or len([a for a in call.args if a.keyword is None]) != 2 or any(
                type(a.value) is not cst.Name for a in call.args if a.keyword is None):
            return "`amp.initialize` with more than one model and one optimizer, or other options"
        targets = statement.targets[0].target
        if type(targets) is not cst.Tuple or [code(e.value) for e in targets.elements] != [
                code(a.value) for a in call.args if a.keyword is None]:
            return "`amp.initialize`'s results are not assigned back to the model and optimizer"
        return ""

    def _scale_loss(self, with_node: cst.With, plan: _Plan) -> None:
        item = with_node.items[0]
        call, body = item.item, with_node.body.body
        alias = item.asname.name.value if item.asname and type(item.asname.name) is cst.Name else None
        backward = f"{alias}.backward()"
        if len(with_node.items) != 1 or len(call.args) != 2 or len(body) != 1 or code(body[0]).strip() != backward:
            plan.blocker = plan.blocker or "an `amp.scale_loss` block that does more than `.backward()`"
            return
        plan.scale_losses.append(with_node)
        plan.optimizers.add(code(call.args[1].value))
        block = self.ctx.model.parent(with_node)
        statements = list(block.body) if type(block) in (cst.IndentedBlock, cst.Module) else []
        index = statements.index(with_node) if with_node in statements else 0
        start = max([i + 1 for i, s in enumerate(statements[:index])
                     if s in plan.scale_losses or self._step_of(s, plan.optimizers)], default=0)
        forward = [s for s in statements[start:index] if s is not plan.initialize]
        while forward and type(forward[0]) is cst.SimpleStatementLine and code(forward[0]).strip().endswith(
                ".zero_grad()"):
            forward.pop(0)  # clearing gradients is not part of the forward pass
        plan.forward[id(with_node)] = forward

    @staticmethod
    def _step_of(node: cst.CSTNode, optimizers: set) -> bool:
        return type(node) is cst.SimpleStatementLine and len(node.body) == 1 and type(node.body[0]) is cst.Expr and \
            code(node.body[0].value) in {f"{name}.step()" for name in optimizers}

    # -- the fixes ------------------------------------------------------------------------------------------------
    def _scaler_line(self, old: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        release_import(self.ctx, old.body[0].value.func)
        value = cst.Call(spelled(self.ctx, "torch.amp.GradScaler"), [cst.Arg(cst.SimpleString('"cuda"'))])
        return old.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(self.plan.scaler))], value)])

    def _step_lines(self, old: cst.SimpleStatementLine) -> cst.FlattenSentinel:
        optimizer = old.body[0].value.func.value
        step = cst.parse_statement(f"{self.plan.scaler}.step({code(optimizer)})")
        return cst.FlattenSentinel([old.with_changes(body=step.body),
                                    cst.parse_statement(f"{self.plan.scaler}.update()")])

    def _stash(self, old: cst.CSTNode):
        self.plan.stash.append(old)
        return cst.RemoveFromParent()

    def _backward(self, original: cst.With, old: cst.With):
        release_import(self.ctx, original.items[0].item.func)
        loss = code(old.items[0].item.args[0].value)
        backward = cst.parse_statement(f"{self.plan.scaler}.scale({loss}).backward()")
        forward, self.plan.stash[:] = list(self.plan.stash), []
        if not forward:
            return backward.with_changes(leading_lines=old.leading_lines)
        autocast = cst.Call(spelled(self.ctx, "torch.amp.autocast"), [cst.Arg(cst.SimpleString('"cuda"'))])
        wrapped = cst.With([cst.WithItem(autocast)], cst.IndentedBlock(
            [forward[0].with_changes(leading_lines=()), *forward[1:]]), leading_lines=forward[0].leading_lines)
        return cst.FlattenSentinel([wrapped, backward])


RULE = ApexAmp
