"""What the device family's rules share: reporting the plan's actions for their own code."""
from __future__ import annotations

import libcst as cst

from codemods.base import Rule
from codemods.device.analysis import device_plan


class DeviceRule(Rule):
    """Reports the plan's actions for its own code; the family's rules share one plan per file, built at
    their first handler call for the device codes selected for the file."""

    def _emit(self, node: cst.CSTNode) -> None:
        for code, message, fix, unsafe in self.ctx.analysis(device_plan).actions.get(id(node), ()):
            if code == self.code:
                self.report(node, message, fix, unsafe=unsafe)


class DefinesDevice(DeviceRule):
    """A rule whose fixes may need the file's device: it may also report its definition."""

    def visit_Module(self, node: cst.Module) -> None:
        self._emit(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._emit(node)
