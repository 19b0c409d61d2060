"""TM611's analysis: state dicts saved from one kind of model and loaded into the other in the same file.

A model is *wrapped* where the binding in force is ``nn.DataParallel(...)``/``DistributedDataParallel(...)``
(its ``state_dict()`` keys start with ``module.``) and *bare* where it is another module constructor or
``wrapped.module``; the binding in force is the last one before the use in the same scope (``model = Net()``
then ``model = nn.DataParallel(model)``), or, read from another scope, every binding when they agree.
``self.x`` is judged by every ``self.x = ...`` of the class. A save is ``torch.save(m.state_dict(), path)``
or ``torch.save({key: m.state_dict(), ...}, path)``; a load is ``n.load_state_dict(E)`` with ``E``
``torch.load(path)``, ``torch.load(path)[key]``, or a name bound to one of those. A save and a load match
when their paths are the same expression and their keys the same. Anything else is unknown.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from codemods import torchapi
from codemods.model import BindingKind, Kind, Scope, SemanticModel
from codemods.names import dotted
from codemods.syntax import argument, code, method_name, string
from codemods.walk import walk


class Wrapping(enum.Enum):
    WRAPPED = "wrapped"  # nn.DataParallel / DistributedDataParallel: keys start with ``module.``
    BARE = "bare"


@dataclass(frozen=True)
class Mismatch:
    save: cst.Call  # torch.save(...)
    load: cst.Call  # model.load_state_dict(...)
    saved: Wrapping  # what the saved state dict came from
    saver: str  # the saved model's text
    loader: str  # the loading model's text


_CHANGES = frozenset({"[]=", "pop", "popitem", "update", "clear", "setdefault"})  # uses that change a dict


def _key(subscript: cst.Subscript) -> Optional[str]:
    if len(subscript.slice) == 1 and type(subscript.slice[0].slice) is cst.Index:
        return string(subscript.slice[0].slice.value)
    return None


class Checkpoints:
    def __init__(self, model: SemanticModel, module: cst.Module):
        self.model = model
        self.order: Dict[int, int] = {id(node): index for index, node in enumerate(walk(module))}
        self.saves: List[Tuple[cst.Call, str, Optional[str], cst.CSTNode]] = []  # call, path, key, saved model
        self.loads: List[Tuple[cst.Call, str, Optional[str]]] = []
        for node in walk(module):
            if type(node) is cst.Call:
                self._save(node)
                self._load(node)

    def mismatches(self) -> List[Mismatch]:
        found = []
        for load, path, key in self.loads:
            target = self.wrapping(load.func.value, load)
            if target is None:
                continue
            for save, saved_path, saved_key, saver in self.saves:
                saved = self.wrapping(saver, save)
                if saved_path == path and saved_key == key and saved is not None and saved is not target:
                    found.append(Mismatch(save, load, saved, code(saver), code(load.func.value)))
                    break
        return found

    # -- saves and loads ----------------------------------------------------------------------------
    def _save(self, call: cst.Call) -> None:
        if self.model.qualname(call.func) != "torch.save":
            return
        obj, path = argument(call, "obj", 0), argument(call, "f", 1)
        if obj is None or path is None:
            return
        if _state_dict_of(obj.value) is not None:
            self.saves.append((call, code(path.value), None, _state_dict_of(obj.value)))
        elif type(obj.value) is cst.Dict:
            for element in obj.value.elements:
                if type(element) is cst.DictElement and _state_dict_of(element.value) is not None and \
                        string(element.key) is not None:
                    self.saves.append((call, code(path.value), string(element.key), _state_dict_of(element.value)))

    def _load(self, call: cst.Call) -> None:
        if method_name(call) != "load_state_dict" or not call.args:
            return
        source = self._loaded(call.args[0].value, self.model.scope_of(call), 0, call)
        if source is not None:
            self.loads.append((call, *source))

    def _loaded(self, expr: cst.CSTNode, scope: Scope, depth: int,
                load: cst.Call) -> Optional[Tuple[str, Optional[str]]]:
        """(path, key) of the ``torch.load`` that ``expr`` is (``key``: the item taken from it); ``None`` when a
        name on the way is changed or handed to another call (``consume_prefix_in_state_dict_if_present``)."""
        key = None
        if type(expr) is cst.Subscript:
            key = _key(expr)
            if key is None:
                return None
            expr = expr.value
        if type(expr) is cst.Name and depth < 2:
            found, bindings = self.model.lookup(expr.value, scope)
            if not bindings or len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
                return None
            if any(call is not load for call in found.passed.get(expr.value, ())) or \
                    found.uses.get(expr.value, set()) & _CHANGES:
                return None
            inner = self._loaded(bindings[0].value, found, depth + 1, load)
            if inner is None or (key is not None and inner[1] is not None):
                return None
            return inner[0], key if key is not None else inner[1]
        if type(expr) is cst.Call and self.model.qualname(expr.func) == "torch.load":
            path = argument(expr, "f", 0)
            return (code(path.value), key) if path is not None else None
        return None

    # -- wrapped or bare -----------------------------------------------------------------------------
    def wrapping(self, expr: cst.CSTNode, at: cst.CSTNode) -> Optional[Wrapping]:
        """Whether the model ``expr`` is wrapped where ``at`` runs."""
        scope = self.model.scope_of(at)
        if type(expr) is cst.Name:
            found, bindings = self.model.lookup(expr.value, scope)
            if not bindings:
                return None
            if found is scope:
                before = [b for b in bindings if self.order.get(id(b.node), 0) < self.order[id(at)]]
                bindings = before[-1:]
            values = [b.value if b.kind is BindingKind.ASSIGN else None for b in bindings]
        elif type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
            values = [value for _, value in self.model.self_attribute_values(expr.attr.value, scope)]
        else:
            return None
        kinds = {self._constructed(value) for value in values}
        return kinds.pop() if len(kinds) == 1 else None

    def _constructed(self, value: Optional[cst.CSTNode]) -> Optional[Wrapping]:
        while type(value) is cst.Call and method_name(value) in torchapi.MODULE_SELF_METHODS:
            value = value.func.value  # nn.DataParallel(net).cuda()
        if type(value) is cst.Attribute and value.attr.value == "module":
            return Wrapping.BARE
        if type(value) is not cst.Call:
            return None
        if self.model.qualname(value.func) in torchapi.DATA_PARALLEL:
            return Wrapping.WRAPPED
        if self.model.value(value).kind is Kind.MODULE:
            return Wrapping.BARE
        # ``Net()``: a class the file does not show, whose instance has a state dict: a module, unless an optimizer
        qualified = self.model.qualname(value.func) or dotted(value.func) or ""
        name = qualified.rpartition(".")[2]
        if name[:1].isupper() and name not in torchapi.OPTIMIZERS and not qualified.startswith(
                torchapi.NOT_MODULE_CLASSES) and "Scheduler" not in name and "LR" not in name:
            return Wrapping.BARE
        return None


def _state_dict_of(expr: cst.CSTNode) -> Optional[cst.CSTNode]:
    """``m`` for ``m.state_dict()``."""
    if type(expr) is cst.Call and method_name(expr) == "state_dict" and not expr.args:
        return expr.func.value
    return None


def checkpoints(ctx) -> Checkpoints:
    return Checkpoints(ctx.model, ctx.module)
