"""What the family's rules share: feeding the one analysis per file from the engine's traversal, and
reporting the facts whose kinds a rule owns."""
from __future__ import annotations

from typing import Callable, ClassVar, Dict, Tuple

import libcst as cst

from codemods.base import Rule
from codemods.variable.analysis import VARIABLE, FactKind, VariableFacts

HINT = "`Variable(t)` is `t.detach()` on current PyTorch"


class VariableFamilyRule(Rule):
    """A rule of the family: the first one in a file feeds the one ``VariableFacts`` (``Variable`` calls and
    references, calls, ``backward()`` and ``yield`` sites; scopes and bindings are the model's) during the
    engine's traversal; at the end of the module each reports the facts of the kinds in ``kinds`` (kind -> message from
    the fact's detail, hint)."""

    kinds: ClassVar[Dict[FactKind, Tuple[Callable[[Dict[str, str]], str], str]]] = {}

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.facts = ctx.analysis(VariableFacts)
        if self.facts.feeder is None:
            self.facts.feeder = self
        self.listens = self.facts.feeder is self  # one rule of the family collects for all of them

    def visit_Call(self, node: cst.Call) -> None:
        self.facts.collect_call(node)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.ctx.imports.aliases and self.ctx.qualname(node) == VARIABLE:
            self.facts.variable_refs.append((node, tuple(self.ctx.ancestors)))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "Variable" and self.ctx.qualname(node) == VARIABLE:
            self.facts.variable_refs.append((node, tuple(self.ctx.ancestors)))

    def visit_Yield(self, node: cst.Yield) -> None:
        function = next((n for n in reversed(self.ctx.ancestors) if type(n) in (cst.FunctionDef, cst.Lambda)), None)
        self.facts.yields.append(tuple(self.ctx.ancestors))
        if function is not None:
            self.facts.generators.add(id(function))

    def leave_Module(self, original_node: cst.Module) -> None:
        for fact in self.facts.items():
            if fact.kind in self.kinds:
                message, hint = self.kinds[fact.kind]
                self.report(fact.node, message(fact.detail), fact.fix, unsafe=fact.unsafe, hint=hint)
