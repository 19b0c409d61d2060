"""TM610's analysis: a ``backward()`` whose graph holds a forward of parameters that an ``optimizer.step()``
between the two updated in place.

Within each block, statement by statement: what each statement binds and reads (reads under ``.detach()``,
``.data``, ``.item()`` carry no graph), which modules it calls (by dotted path: ``D``, ``self.netD``), which
optimizers it steps and what it back-propagates. For every backward the statements its loss depends on are
followed back through the block; a forward among them that ran before a step of an optimizer over that
module's parameters is a ``StaleStep``. An optimizer's modules are the ``X`` of ``X.parameters()`` in its
constructor (through one assignment: ``params = list(G.parameters()) + ...``); an optimizer the file does not
show is unknown and never matched. Forwards under ``no_grad`` build no graph.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from codemods import torchapi
from codemods.hazards.analysis import DEFERRED, covers, is_backward, is_optimizer_call, running_nodes
from codemods.model import BindingKind, GradMode, Scope, SemanticModel
from codemods.names import dotted
from codemods.syntax import method_name
from codemods.walk import children, parent, walk

# Reads through these carry no graph.
_CUT = torchapi.NO_GRAPH_ATTRIBUTES | torchapi.VALUE_METHODS | {"detach"}


# Module methods that run no forward.
_MODULE_API = torchapi.MODULE_METHODS - {"forward"} | torchapi.MODULE_SELF_METHODS | {
    "zero_grad", "state_dict", "load_state_dict", "requires_grad_", "buffers", "named_buffers", "apply",
    "share_memory", "register_parameter", "add_module", "step"}


@dataclass
class _Statement:
    scope: Scope
    binds: Set[str] = field(default_factory=set)
    calls: List[cst.Call] = field(default_factory=list)  # the other calls: forwards among them
    # what it reads and its forwards: only asked of the statements a backward's loss depends on (``Steps.read``)
    reads: Optional[Set[str]] = None
    forwards: List[Tuple[str, cst.Call]] = field(default_factory=list)
    steps: List[Tuple[cst.Call, FrozenSet[str]]] = field(default_factory=list)
    backwards: List[Tuple[cst.Call, Set[str]]] = field(default_factory=list)


@dataclass(frozen=True)
class StaleStep:
    forward: cst.Call  # the module call whose graph the backward goes through
    step: cst.Call  # the optimizer step that updated that module's parameters in between
    backward: cst.Call


class Steps:
    def __init__(self, model: SemanticModel):
        self.model = model
        self._optimizers: Dict[Tuple[int, Optional[str]], Optional[FrozenSet[str]]] = {}
        self._statements: Dict[int, _Statement] = {}

    def stale(self, blocks: Sequence[cst.CSTNode], calls: Sequence[cst.Call]) -> List[StaleStep]:
        """``blocks``: the file's module and indented blocks, ``calls``: its calls, both in source order (the
        rule collects them in the engine's walk). Only the blocks where a statement steps (``x.step()``)
        before a later one back-propagates are analysed, each up to its last backward: no other statement
        can take part in a ``StaleStep``."""
        first_step: Dict[int, int] = {}  # id(block) -> index of its first statement that runs a step
        last_backward: Dict[int, int] = {}  # id(block) -> index of its last statement that runs a backward
        step_calls = []
        for node in calls:
            if method_name(node) == "step" and not node.args:
                step_calls.append(node)
                for block, index in _running_in(node):
                    first_step[id(block)] = min(index, first_step.get(id(block), index))
            elif is_backward(self.model.qualname, node):
                for block, index in _running_in(node):
                    last_backward[id(block)] = max(index, last_backward.get(id(block), index))
        found: List[StaleStep] = []
        for node in blocks:
            end = last_backward.get(id(node), -1)
            if first_step.get(id(node), len(node.body)) < end and self._steps_before(node, end, step_calls):
                body = node.body[:end + 1]
                found.extend(self._block(body, [self._statement(stmt) for stmt in body]))
        return found

    def _steps_before(self, block: cst.CSTNode, end: int, step_calls: Sequence[cst.Call]) -> bool:
        """Whether a statement of ``block`` before the ``end``-th holds a step of an optimizer the file shows
        (its ``_Statement.steps`` are among these: the steps under it, resolved in its scope). Most blocks
        have none, and then no backward there can be stale: their statements need no walk."""
        for call in step_calls:
            child, up = call, parent(call)
            while up is not None and up is not block:
                child, up = up, parent(up)
            if up is not None and any(stmt is child for stmt in block.body[:end]) and self.optimizer_modules(
                    call.func.value, self.model.scope_of(child)):
                return True
        return False

    def _block(self, body: Sequence[cst.CSTNode], infos: List[_Statement]) -> List[StaleStep]:
        found = []
        for k, info in enumerate(infos):
            for backward, needed in info.backwards:
                # names the backward's own statement binds (a loop or ``with`` around it) come from inside it
                forwards = self._dependencies(body, infos, k, set(needed) - info.binds)
                for j in range(k - 1, -1, -1):
                    for step, modules in infos[j].steps:
                        stale = next((call for i, path, call in forwards if i < j and covers(modules, path)), None)
                        if stale is not None:
                            found.append(StaleStep(stale, step, backward))
        return found

    def _dependencies(self, body: Sequence[cst.CSTNode], infos: List[_Statement], k: int,
                      needed: Set[str]) -> List[Tuple[int, str, cst.Call]]:
        """The module calls (statement index, path, call) the values in ``needed`` at statement ``k`` come from."""
        forwards = []
        for i in range(k - 1, -1, -1):
            info = infos[i]
            if not info.binds & needed:
                continue
            self._read(body[i], info)
            needed = (needed - info.binds) | info.reads
            forwards.extend((i, path, call) for path, call in info.forwards)
        return forwards

    # -- one statement ----------------------------------------------------------------------------
    def _statement(self, stmt: cst.CSTNode) -> _Statement:
        """What ``stmt`` binds, steps and back-propagates (what it reads and runs forward: ``_read``). Kept:
        a compound statement takes its inner statements' (the same scope's) from there."""
        info = self._statements.get(id(stmt))
        if info is None:
            info = self._statements[id(stmt)] = _Statement(self.model.scope_of(stmt))
            self._collect(stmt, info, type(stmt) not in DEFERRED)
        return info

    def _collect(self, node: cst.CSTNode, info: _Statement, same_scope: bool) -> None:
        """Add what ``node`` and its ``running_nodes`` bind, step and back-propagate, in order; ``same_scope``:
        the statements of the blocks under it are in ``info``'s scope (not a def's or a class's body)."""
        kind = type(node)
        if kind is cst.AssignTarget or kind in (cst.AugAssign, cst.AnnAssign):
            info.binds |= _names(node.target)
        elif kind in (cst.For, cst.CompFor):
            info.binds |= _names(node.target)
        elif kind is cst.WithItem and node.asname is not None:
            info.binds |= _names(node.asname.name)
        elif kind is cst.Call:
            self._call(node, info)
        for child in children(node):
            if type(child) is cst.IndentedBlock and same_scope:
                for stmt in child.body:
                    inner = self._statement(stmt)
                    info.binds |= inner.binds
                    info.calls.extend(inner.calls)
                    info.steps.extend(inner.steps)
                    info.backwards.extend(inner.backwards)
            elif type(child) not in DEFERRED:
                self._collect(child, info, same_scope)

    def _read(self, stmt: cst.CSTNode, info: _Statement) -> None:
        """Fill in what ``stmt`` reads and the module calls it runs (once)."""
        if info.reads is not None:
            return
        info.reads = _reads(stmt)
        for call in info.calls:
            path = dotted(call.func)
            if path and path.rpartition(".")[2] not in _MODULE_API and self.model.qualname(call.func) is None \
                    and self.model.grad_mode(call) is not GradMode.OFF and not _detached(call):
                info.forwards.append((path, call))

    def _call(self, call: cst.Call, info: _Statement) -> None:
        if is_backward(self.model.qualname, call):
            receiver = call.func.value if method_name(call) == "backward" else (
                call.args[0].value if call.args else None)
            if receiver is not None:
                info.backwards.append((call, _reads(receiver)))
            return
        if method_name(call) == "step" and not call.args:
            modules = self.optimizer_modules(call.func.value, info.scope)
            if modules:
                info.steps.append((call, modules))
            return
        info.calls.append(call)

    def optimizer_modules(self, expr: cst.CSTNode, scope: Scope) -> Optional[FrozenSet[str]]:
        """The modules whose parameters the optimizer ``expr`` (a name or ``self.x``) updates; kept per scope
        and spelling."""
        key = (id(scope), dotted(expr))
        if key not in self._optimizers:
            self._optimizers[key] = self._optimizer_modules(expr, scope)
        return self._optimizers[key]

    def _optimizer_modules(self, expr: cst.CSTNode, scope: Scope) -> Optional[FrozenSet[str]]:
        if type(expr) is cst.Name:
            _, bindings = self.model.lookup(expr.value, scope)
            values = [(b.value, scope) for b in bindings or () if b.kind is BindingKind.ASSIGN]
            if not bindings or len(values) != len(bindings):
                return None
        elif type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
            values = [(value, where) for where, value in self.model.self_attribute_values(expr.attr.value, scope)]
        else:
            return None
        modules: Set[str] = set()
        for value, where in values:
            if type(value) is not cst.Call or not is_optimizer_call(self.model, value):
                return None
            found = self._parameter_sources(value, where, 0)
            if not found:
                return None
            modules |= found
        return frozenset(modules) or None

    def _parameter_sources(self, node: cst.CSTNode, scope: Scope, depth: int) -> Set[str]:
        found = set()
        for inner in walk(node):
            if method_name(inner) in ("parameters", "named_parameters"):
                path = dotted(inner.func.value)
                if path:
                    found.add(path)
            elif type(inner) is cst.Name and depth < 1 and inner is not node:
                _, bindings = self.model.lookup(inner.value, scope)
                for binding in bindings or ():
                    if binding.kind is BindingKind.ASSIGN:
                        found |= self._parameter_sources(binding.value, scope, depth + 1)
        return found


_BLOCKS = (cst.Module, cst.IndentedBlock)


def _running_in(node: cst.CSTNode) -> List[Tuple[cst.CSTNode, int]]:
    """(block, index of its statement) for every statement ``node`` runs with (is among the
    ``running_nodes`` of), innermost first: up to the first function, class or lambda boundary."""
    found = []
    child, up = node, parent(node)
    while up is not None:
        if type(up) in _BLOCKS:
            found.append((up, next(i for i, stmt in enumerate(up.body) if stmt is child)))
        if type(child) in DEFERRED:
            break  # its body runs later: not with the statements around it
        child, up = up, parent(up)
    return found


def steps(ctx) -> Steps:
    return Steps(ctx.model)


def _names(target: cst.CSTNode) -> Set[str]:
    if type(target) in (cst.Tuple, cst.List):
        return set().union(*(_names(e.value) for e in target.elements)) if target.elements else set()
    if type(target) is cst.StarredElement:
        return _names(target.value)
    path = dotted(target) if type(target) in (cst.Name, cst.Attribute) else None
    return {path} if path else set()


def _reads(node: cst.CSTNode) -> Set[str]:
    """The names (and ``self.x`` paths) whose values ``node`` reads with their graph: not callees, not
    assignment targets, not reads through ``.detach()``/``.data``/``.item()``."""
    found = set()
    for name in running_nodes(node):
        if type(name) is not cst.Name or _bound_here(name) or _detached(name):
            continue
        up, chain = parent(name), name
        if type(up) is cst.Call and up.func is name:
            continue  # a function or module called
        paths = [name.value]
        while type(up) is cst.Attribute and up.value is chain:
            if up.attr.value in _CUT:
                paths = []
                break
            chain, up = up, parent(up)
            paths.append(dotted(chain) or "")
        found.update(p for p in paths if p)
    return found


def _detached(node: cst.CSTNode) -> bool:
    """``node``'s value reaches its statement only through ``.detach()``, ``.data``, ``.item()``."""
    child, up = node, parent(node)
    while up is not None and not isinstance(up, cst.BaseStatement):
        if type(up) is cst.Attribute and up.value is child and up.attr.value in _CUT:
            return True
        child, up = up, parent(up)
    return False


def _bound_here(name: cst.Name) -> bool:
    """``name`` is (part of) an assignment, loop or ``with`` target."""
    child, up = name, parent(name)
    while type(up) in (cst.Tuple, cst.List, cst.Element, cst.StarredElement):
        child, up = up, parent(up)
    return (type(up) is cst.AssignTarget or type(up) is cst.AsName or
            type(up) in (cst.For, cst.CompFor, cst.AnnAssign) and up.target is child)
