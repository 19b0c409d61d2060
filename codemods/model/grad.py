"""Grad-mode regions: where ``torch.no_grad()``, ``inference_mode()``, ``set_grad_enabled(...)`` and
``enable_grad()`` are in force, as ``with`` blocks and as decorators."""
from __future__ import annotations

import enum
from typing import Callable, Dict, Optional

import libcst as cst

from codemods import torchapi
from codemods.walk import parent


class GradMode(enum.Enum):
    OFF = "off"  # no_grad, inference_mode, set_grad_enabled(False): nothing records a graph
    ON = "on"  # enable_grad, set_grad_enabled(True)
    SWITCHED = "switched"  # set_grad_enabled(<not a literal>): either
    DEFAULT = "default"  # no grad-mode context: whatever the caller's mode is (on, at module level)


def context_mode(qualname: Callable[[cst.CSTNode], Optional[str]], expr: cst.CSTNode) -> Optional[GradMode]:
    """The mode a ``with`` item or a decorator sets (``None``: it is not a grad-mode context)."""
    call = expr.func if type(expr) is cst.Call else expr
    qualified = qualname(call)
    if qualified in torchapi.GRAD_OFF:
        if qualified in torchapi.GRAD_OFF_WITH_MODE and type(expr) is cst.Call and expr.args:
            value = expr.args[0].value  # inference_mode(False) / inference_mode(mode=False)
            if type(value) is cst.Name and value.value == "False":
                return GradMode.DEFAULT
        return GradMode.OFF
    if qualified in torchapi.GRAD_ON:
        return GradMode.ON
    if qualified in torchapi.GRAD_SWITCH and type(expr) is cst.Call and expr.args:
        value = expr.args[0].value
        if type(value) is cst.Name and value.value in ("True", "False"):
            return GradMode.ON if value.value == "True" else GradMode.OFF
        return GradMode.SWITCHED
    return None


class GradRegions:
    """The grad mode in force at a node: the innermost grad-mode ``with`` around it, else the decorators of
    the function it is in. A function body runs when it is called, not where it is defined, so a ``def``
    inside ``with torch.no_grad():`` does not inherit it (a caller's mode is DEFAULT)."""

    def __init__(self, qualname: Callable[[cst.CSTNode], Optional[str]]):
        self._qualname = qualname
        self._at: Dict[int, GradMode] = {}  # id(With or FunctionDef or Lambda) -> mode inside it

    def mode(self, node: cst.CSTNode) -> GradMode:
        """The mode at ``node`` (a node of the tree being processed)."""
        child, current = node, parent(node)
        while current is not None:
            kind = type(current)
            if kind is cst.With and child is current.body:
                found = self._with_mode(current)
                if found is not None:
                    return found
            elif kind is cst.FunctionDef and child is current.body or kind is cst.Lambda and child is current.body:
                return self._function_mode(current)
            child, current = current, parent(current)
        return GradMode.DEFAULT

    def _with_mode(self, node: cst.With) -> Optional[GradMode]:
        key = id(node)
        if key not in self._at:
            modes = [context_mode(self._qualname, item.item) for item in node.items]
            modes = [m for m in modes if m is not None]
            found = modes[-1] if modes else None
            self._at[key] = found if found is not None else self.mode(node)
        return self._at[key]

    def _function_mode(self, node: cst.CSTNode) -> GradMode:
        key = id(node)
        if key not in self._at:
            found = GradMode.DEFAULT
            for decorator in reversed(getattr(node, "decorators", ())):
                mode = context_mode(self._qualname, decorator.decorator)
                if mode is not None:
                    found = mode
                    break  # the decorator nearest the ``def`` is entered last: its mode is the body's
            self._at[key] = found
        return self._at[key]
