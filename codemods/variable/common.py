"""What the family's rules share: feeding the one analysis per file from the engine's traversal, and
reporting the facts whose kinds a rule owns."""
from __future__ import annotations

from typing import Callable, ClassVar, Dict, Tuple

import libcst as cst

from codemods.base import Rule
from codemods.model.scopes import COMPREHENSIONS
from codemods.variable.analysis import VARIABLE, FactKind, VariableFacts

HINT = "`Variable(t)` is `t.detach()` on current PyTorch"


class VariableFamilyRule(Rule):
    """A rule of the family: the first one in a file feeds the one ``VariableFacts`` during the engine's
    traversal; at the end of the module each reports the facts of the kinds in ``kinds`` (kind -> message from
    the fact's detail, hint)."""

    kinds: ClassVar[Dict[FactKind, Tuple[Callable[[Dict[str, str]], str], str]]] = {}

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.facts = ctx.analysis(VariableFacts)
        if self.facts.feeder is None:
            self.facts.feeder = self
        self.feeds = self.facts.feeder is self  # one rule of the family collects for all of them

    def _scope_here(self, functions_only: bool = False):
        return self.facts.scope(self.ctx.ancestors, functions_only)

    def visit_Call(self, node: cst.Call) -> None:
        if self.feeds:
            self.facts.collect_call(node, tuple(self.ctx.ancestors))

    def visit_Name(self, node: cst.Name) -> None:
        if self.feeds and node.value in self.ctx.imports.aliases and self.ctx.qualname(node) == VARIABLE:
            self.facts.variable_refs.append((node, tuple(self.ctx.ancestors)))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.feeds and node.attr.value == "Variable" and self.ctx.qualname(node) == VARIABLE:
            self.facts.variable_refs.append((node, tuple(self.ctx.ancestors)))

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.feeds:
            scope = self._scope_here()
            for target in node.targets:
                self.facts.bind_target(scope, target.target, "value", node.value, self.ctx.ancestors, killing=True)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.feeds:
            self.facts.bind_target(self._scope_here(), node.target, "value", node.value, self.ctx.ancestors)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.feeds and node.value is not None:
            self.facts.bind_target(self._scope_here(), node.target, "value", node.value, self.ctx.ancestors,
                                   killing=True)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self.feeds:
            self.facts.bind_target(self._scope_here(functions_only=True), node.target, "value", node.value,
                                   self.ctx.ancestors)

    def visit_For(self, node: cst.For) -> None:
        if self.feeds:
            self.facts.bind_target(self._scope_here(), node.target, "iter", node.iter, self.ctx.ancestors)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if self.feeds:
            anc = self.ctx.ancestors
            comp = next(n for n in reversed(anc) if isinstance(n, COMPREHENSIONS))
            scope = self.facts.scope([*anc[:anc.index(comp) + 1], comp.elt if hasattr(comp, "elt") else comp.key])
            self.facts.bind_target(scope, node.target, "iter", node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if self.feeds and node.asname is not None:
            self.facts.bind_target(self._scope_here(), node.asname.name, "unknown", None, self.ctx.ancestors)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if self.feeds and node.name is not None:
            self.facts.bind_target(self._scope_here(), node.name.name, "unknown", None, self.ctx.ancestors)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if self.feeds:
            name = node.asname.name if node.asname is not None else node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                self.facts.bind_target(self._scope_here(), name, "unknown", None, self.ctx.ancestors)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.feeds:
            scope = self._scope_here()
            scope.bind(node.name.value, "def", node, scope.position(self.ctx.ancestors))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.feeds:
            self.facts.bind_target(self._scope_here(), node.name, "unknown", None, self.ctx.ancestors)

    def visit_Param(self, node: cst.Param) -> None:
        if self.feeds:
            anc = self.ctx.ancestors
            owner = next(n for n in reversed(anc) if isinstance(n, (cst.FunctionDef, cst.Lambda)))
            scope = self.facts.scope([*anc[:anc.index(owner) + 1], owner.body])
            scope.bind(node.name.value, "unknown", None, index=-1)

    def visit_Global(self, node: cst.Global) -> None:
        if self.feeds:
            names = {n.name.value for n in node.names}
            self._scope_here().opaque.update(names)
            self.facts.scope(self.ctx.ancestors[:1]).opaque.update(names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if self.feeds:
            self._scope_here().opaque.update(n.name.value for n in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        if self.feeds and node.value is not None:
            anc = self.ctx.ancestors
            scope = self._scope_here(functions_only=True)
            self.facts.returns.setdefault(id(scope.node), []).append((node.value, scope.position(anc)))

    def visit_Yield(self, node: cst.Yield) -> None:
        if self.feeds:
            self.facts.yields.append(tuple(self.ctx.ancestors))
            self.facts.generators.add(id(self._scope_here(functions_only=True).node))

    def leave_Module(self, original_node: cst.Module) -> None:
        for fact in self.facts.items():
            if fact.kind in self.kinds:
                message, hint = self.kinds[fact.kind]
                self.report(fact.node, message(fact.detail), fact.fix, unsafe=fact.unsafe, hint=hint)
