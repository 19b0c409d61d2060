"""What the data family's rules share: reporting the ``.data`` sites the analysis assigns them, and
taking ``.data`` off an expression."""
from __future__ import annotations

from typing import Callable, ClassVar, Dict, Tuple

import libcst as cst

from codemods.base import Rule
from codemods.data.analysis import DataAnalysis, Site, SiteKind, TO_NUMBER_CHAIN, is_data
from codemods.model import index_value
from codemods.syntax import code

SiteReport = Tuple[Callable[[str], str], Callable[[cst.CSTNode], cst.CSTNode], bool]  # message, fix, unsafe


def unwrap_data(node: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` for ``x.data`` (keeping parentheses around the attribute), else ``node``."""
    if is_data(node):
        value = node.value
        return value.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar and not value.lpar else value
    return node


def data_receiver(node: cst.BaseExpression) -> cst.BaseExpression:
    """``loss`` for ``loss.data``, ``loss.data.cpu().numpy()`` and ``loss.data[0].data`` (a chain of reads of
    the one value)."""
    while (type(node) is cst.Call and type(node.func) is cst.Attribute
           and node.func.attr.value in TO_NUMBER_CHAIN and not node.args):
        node = node.func.value
    node = unwrap_data(node)
    while type(node) is cst.Subscript and index_value(node) == 0 and is_data(node.value):
        node = unwrap_data(node.value)
    return node


class DataSiteRule(Rule):
    """A rule that reports the ``.data`` sites of the kinds in ``sites``: kind -> (message from the receiver's
    text, fix, unsafe)."""

    sites: ClassVar[Dict[SiteKind, SiteReport]] = {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        site: Site = self.ctx.analysis(DataAnalysis).site(node, self.ctx.ancestors)
        if site is not None and site.kind in self.sites:
            message, fix, unsafe = self.sites[site.kind]
            self.report(site.node, message(code(site.receiver)), fix, unsafe=unsafe)
