"""Fix builders the hazard rules share (all unsafe: each changes what the program computes)."""
from __future__ import annotations

from typing import Callable

import libcst as cst

from codemods.base import Rule




# ---------------------------------------------------------------------------
# Fix builders (all unsafe: each changes what the program computes)
# ---------------------------------------------------------------------------
def _no_grad_call(rule: Rule) -> cst.BaseExpression:
    spelled = rule.ctx.imports.local_name("torch.no_grad")
    if spelled is None:
        rule.ctx.add_import("torch")
        spelled = "torch.no_grad"
    return cst.parse_expression(f"{spelled}()")


def wrap_no_grad(rule: Rule) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def fix(updated: cst.CSTNode) -> cst.CSTNode:
        if not isinstance(updated, cst.SimpleStatementLine):
            return updated  # already wrapped by an earlier fix on this line
        return cst.With(items=[cst.WithItem(_no_grad_call(rule))],
                        body=cst.IndentedBlock(body=[updated.with_changes(leading_lines=())]),
                        leading_lines=updated.leading_lines)
    return fix


def detach_fix(updated: cst.CSTNode) -> cst.CSTNode:
    """``x = e`` -> ``x = e.detach()``."""
    small = updated.body[0]
    value = small.value
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    detached = cst.Call(cst.Attribute(value, cst.Name("detach")))
    return updated.with_changes(body=[small.with_changes(value=detached), *updated.body[1:]])


def without_argument(call: cst.Call, keyword: str) -> cst.Call:
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == keyword)]
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT and len(args) < len(call.args):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


