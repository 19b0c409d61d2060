"""What the device family's rules share: reporting the plan's actions for their own code."""
from __future__ import annotations

import functools
from typing import Callable, ClassVar, Dict, List

import libcst as cst

from codemods.base import Rule
from codemods.device.analysis import Act, Action, device_plan


def constructor_message(detail: Dict[str, str]) -> str:
    return f"`{detail['type']}(...)` becomes `torch.{detail['form']}(...)`" + (
        " (unsafe: the argument is taken for a size since an in-place initialiser follows)"
        if detail["initialised"] else "")


def unknown_argument_message(detail: Dict[str, str]) -> str:
    return (f"`{detail['type']}(x)`: `x` may be a size or data (a numpy array shares memory with it): write "
            "`torch.empty(size, ...)` or `torch.tensor(data, dtype=...)`")


DEFINITION_MESSAGE = {Act.DEFINITION: lambda d: f"one device for the file: `{d['definition']}`"}


class DeviceRule(Rule):
    """Reports the plan's actions of the kinds it owns (``kinds``: act -> message from the details); the
    family's rules share one plan per file, built at their first handler call for the codes selected for the
    file. The device's definition is reported by the first rule whose applied fixes use it."""

    kinds: ClassVar[Dict[Act, Callable[[Dict[str, str]], str]]] = {}

    @functools.cached_property
    def _actions(self) -> Dict[int, List[Action]]:
        """The plan's actions, kept on the rule: its handlers ask for every statement and call of the file."""
        return self.ctx.analysis(device_plan).actions

    def _emit(self, node: cst.CSTNode) -> None:
        for act, detail, fix, unsafe in self._actions.get(id(node), ()):
            if act is Act.DEFINITION:
                if detail["for"] == self.code:
                    self.report(node, DEFINITION_MESSAGE[act](detail), fix, unsafe=unsafe)
            elif act in self.kinds:
                self.report(node, self.kinds[act](detail), fix, unsafe=unsafe)


class DefinesDevice(DeviceRule):
    """A rule whose fixes may need the file's device: it may also report its definition."""

    def visit_Module(self, node: cst.Module) -> None:
        self._emit(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._emit(node)
