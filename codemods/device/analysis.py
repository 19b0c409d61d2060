"""The device family's plan: one per file, keyed by the id of the node each rule reports on (``actions``: an
``Act`` with its details, fix and safety; the rule that owns the act reports it with its own message).

Built on the semantic model (``ctx.model``): its calls and ``=`` statements are the sites and flags
(``_Facts``), its scopes and bindings (also of attribute targets, ``args.cuda = ...``) say what a name is
where, and its positions say what comes first (a flag set after a ``.cuda()`` call does not choose its
device). The family walks nothing itself.

The device is a decision of the whole file (which flag, which definition, where it is inserted, whether a
guard can go), so the four rules share it; a device is only defined when a selected rule's applied fix uses
it. What the plan decides is described in the family's docstring (``codemods/device/__init__.py``).
"""
from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

import libcst as cst

from codemods.base import SUPPRESSION
from codemods.syntax import expression
from codemods.names import CANONICAL, dotted
from codemods.syntax import TIGHT_EQUAL, code, keyword, string
from codemods.model import Binding, BindingKind, Scope, SemanticModel
from codemods.walk import parent
from codemods import torchapi
from codemods.torchapi import IN_PLACE_INITIALISERS

# Legacy tensor type -> the ``torch`` dtype it stands for, spelled as 0.4-era code spells it (``torch.long``).
TENSOR_TYPES: Dict[str, str] = {name: {"int64": "long"}.get(dtype, dtype)
                                for name, dtype in torchapi.TENSOR_TYPE_DTYPES.items()}
# ``torch.empty`` already makes these (unless the file changes the default dtype): no ``dtype=`` needed.
DEFAULT_DTYPE_TYPES = frozenset({"FloatTensor", "Tensor"})
DEFAULT_DTYPE_SETTERS = frozenset({"torch.set_default_dtype", "torch.set_default_tensor_type"})
# Single arguments whose kind is known: calls returning sizes / sequences, attributes that are sizes.
SIZE_FUNCTIONS = frozenset({"len", "int"})
DATA_FUNCTIONS = frozenset({"list", "range", "sorted"})
SIZE_METHODS = frozenset({"size", "numel", "dim"})
SIZE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
DATA_METHODS = frozenset({"tolist"})
# Statements that raise without CUDA (as does ``set_default_tensor_type(torch.cuda.X)``); TM205 guards them.
CUDA_ONLY_STATEMENTS = frozenset({"torch.cuda.set_device", "torch.cuda.synchronize"})
# The last names of the functions ``_Facts._call`` resolves (an attribute of another last name cannot resolve to
# one of them: ``qualname`` keeps it but for the aliases it canonicalises, whose last names are added).
SITE_NAMES = frozenset({*TENSOR_TYPES, "Tensor", *(q.rpartition(".")[2] for q in (
    *DEFAULT_DTYPE_SETTERS, *CUDA_ONLY_STATEMENTS, *CANONICAL))})
# ``.cuda(...)`` keywords naming the GPU (``device_id`` is the 0.1/0.2 spelling).
INDEX_KEYWORDS = frozenset({"device", "device_id"})
DEVICE_NAMES = ("device", "torch_device", "device_")  # the first one the file does not use names the device
# A guard's test that names the CUDA switch (``args.cuda``, ``use_gpu``, ``opt.with_cuda``, ``USE_CUDA``); a
# guard that only happens to contain ``.cuda()`` calls (``if args.resume:``) is not one.
CUDA_FLAG_NAME = re.compile(r"(?i)^(use_?|with_?|enable_?|on_?|has_?|run_on_?)?(cuda|gpu|gpus)(_?(available|enabled|on))?$")

_SCOPES = (cst.Module, cst.FunctionDef, cst.Lambda)
_BLOCKS = (cst.Module, cst.IndentedBlock)




def _condition(node: cst.CSTNode) -> str:
    """Comparable text of a test: no whitespace, no outer parentheses (the plan's own tests, a dotted name or
    ``torch.cuda.is_available()``, are written so: they are their conditions, without being parsed)."""
    if isinstance(node, cst.BaseExpression) and node.lpar:
        node = node.with_changes(lpar=(), rpar=())
    return "".join(code(node).split())




def _keyword(arg: cst.Arg) -> Optional[str]:
    return arg.keyword.value if arg.keyword is not None else None




@dataclass(frozen=True)
class _Where:
    """Where a node sits (from the model): its code scopes (innermost first: module, functions, lambdas),
    its position in source order, its statement line and the guards around it."""

    chain: Tuple[Scope, ...]
    order: int
    line: Optional[cst.SimpleStatementLine]
    guards: Tuple[Tuple[cst.CSTNode, bool], ...]  # (If or IfExp, inside its true branch), innermost first


class _Bound(NamedTuple):
    """What the plan asks of a model ``Binding``."""

    kind: str  # "assign" (``x = v``, one target), "add" (``+=``), "param" (without default), "other"
    value: Optional[cst.CSTNode]  # the assigned or added value
    node: cst.CSTNode  # the model binding's node
    line: Optional[cst.SimpleStatementLine]  # the statement line of an assignment
    start: int  # its position in source order
    top: bool  # the line runs whenever its scope runs (directly in its body or under ``if __name__ ...``)


@dataclass(frozen=True)
class _Device:
    """A device expression: where it is available and what it stands for."""

    expr: str  # "device", "args.device", "x.device"
    scope: Scope  # bound in this scope ...
    end: int  # ... after this position
    root: Optional[str] = None  # attribute mode: the object that carries it
    condition: Optional[str] = None  # the flag it was built from (guards with this test can go)
    index: Optional[int] = None  # the CUDA index of its string ("cuda:1"); None: the current device
    known: bool = True  # False for a parameter: nothing is known about its index
    definition: Optional[str] = None  # a device to create: the statement ...
    after: Optional[cst.CSTNode] = None  # ... inserted after this statement line (or into this module ...)
    at: Optional[int] = None  # ... at this index of its body)
    blank_line: bool = False


class _Facts:
    """The family's sites, flags and existing devices, read from the semantic model (its calls, ``=``
    statements, scopes, bindings and positions): the family walks nothing itself."""

    def __init__(self, model: SemanticModel):
        self.model = model
        self.qualname = model.qualname
        self.cuda_calls: List[Tuple[cst.Call, _Where]] = []
        self.constructors: List[Tuple[cst.Call, str, bool, bool, _Where]] = []  # call, type, cuda?, filled?, where
        self.type_calls: List[Tuple[cst.Call, _Where]] = []
        self.storages: Set[int] = set()  # ``.cuda()`` calls on storages (``map_location=lambda storage, loc: ...``)
        self.cuda_only: List[Tuple[cst.SimpleStatementLine, _Where]] = []
        self.flags: List[Tuple[str, _Bound, Scope]] = []  # ``x = ... torch.cuda.is_available() ...``
        self.devices: List[Tuple[str, _Bound, Scope]] = []  # ``x = torch.device(...)``
        self.selections: List[Tuple[str, str, Optional[cst.CSTNode], cst.SimpleStatementLine, _Where]] = []
        self.options: Set[str] = set()  # argparse dests ...
        self.int_options: Set[str] = set()  # ... and those with type=int
        self.sets_default_dtype = False
        self.sets_device = False
        self._bound: Dict[Tuple[int, str], List[_Bound]] = {}
        self._homes: Dict[int, Scope] = {}
        scopes = model.scopes()
        self.defines_cuda = any(b.kind is BindingKind.FUNCTION for s in scopes for b in s.bindings.get("cuda", ()))
        self.device_params = [s for s in scopes if type(s.node) is cst.FunctionDef
                              and any(self._kind(b) == "param" for b in s.bindings.get("device", ()))]
        for call in model.calls():
            self._call(call)
        for node in model.assign_statements():
            self._assign(node)

    # -- positions, scopes and bindings (the model's, seen as the plan needs them) --------------------
    def chain(self, node: cst.CSTNode) -> Tuple[Scope, ...]:
        """The scopes whose code ``node`` runs in, innermost first (class bodies and comprehensions run as
        part of theirs)."""
        found, scope = [], self.model.scope_of(node)
        while scope is not None:
            if type(scope.node) in _SCOPES:
                found.append(scope)
            scope = scope.parent
        return tuple(found)

    def where(self, node: cst.CSTNode) -> _Where:
        guards, line = [], None
        child, current = node, parent(node)
        while current is not None:
            current_type = type(current)
            if (current_type is cst.If or current_type is cst.IfExp) and child is not current.test:
                guards.append((current, child is current.body))
            elif line is None and current_type is cst.SimpleStatementLine:
                line = current
            child, current = current, parent(current)
        return _Where(self.chain(node), self.model.position(node), line, tuple(guards))

    def home(self, binding: Binding) -> Scope:
        """The scope whose code binds (``global x`` in ``main()``: ``main``, though the model binds ``x`` in
        the module)."""
        key = id(binding.node)
        if key not in self._homes:
            self._homes[key] = self.chain(binding.node)[0]
        return self._homes[key]

    @staticmethod
    def _kind(binding: Binding) -> str:
        kind, node = binding.kind, binding.node
        if kind is BindingKind.ASSIGN and type(node) is cst.Assign and len(node.targets) == 1:
            return "assign"
        if kind is BindingKind.AUGMENTED and type(node.operator) is cst.AddAssign:
            return "add"
        if kind is BindingKind.PARAMETER and binding.value is None:
            params = parent(node)
            return "other" if node is params.star_arg or node is params.star_kwarg else "param"
        return "other"

    def view(self, binding: Binding, home: Scope) -> _Bound:
        kind = self._kind(binding)
        line = parent(binding.node)
        if kind != "assign" or type(line) is not cst.SimpleStatementLine:  # (``if c: x = v`` has no line)
            value = binding.value.value if kind == "add" else binding.value
            return _Bound(kind, value, binding.node, None, binding.order, False)
        top, current = True, parent(line)
        while current is not None and current is not home.node:
            if not (type(current) is cst.IndentedBlock
                    or (type(current) is cst.If and "__name__" in code(current.test))):
                top = False
                break
            current = parent(current)
        return _Bound(kind, binding.value, binding.node, line, self.model.span(line)[0], top)

    def bound(self, scope: Scope, name: str) -> List[_Bound]:
        """The bindings of ``name`` (or of the attribute target ``"a.b"``) that the code of ``scope`` makes."""
        key = (id(scope), name)
        if key not in self._bound:
            if "." in name:
                found = scope.attributes.get(name, [])
            else:
                found = [b for b in self.model.lookup(name, scope)[1] or ()
                         if b.kind is not BindingKind.DELETE and self.home(b) is scope]
            self._bound[key] = [self.view(b, scope) for b in found]
        return self._bound[key]

    def homes(self, name: str) -> Dict[int, Tuple[Scope, List[_Bound]]]:
        """Every scope whose code binds ``name``, with those bindings."""
        found: Dict[int, Tuple[Scope, List[_Bound]]] = {}
        for scope in self.model.scopes():
            for binding in scope.bindings.get(name, ()):
                if binding.kind is not BindingKind.DELETE:
                    home = self.home(binding)
                    found.setdefault(id(home), (home, []))[1].append(self.view(binding, home))
        return found

    @staticmethod
    def declares_global(scope: Scope, name: str) -> bool:
        return scope.declared.get(name) == "global"

    # -- sites --------------------------------------------------------------------------------
    def _call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method == "cuda" and self.qualname(func) is None:
                self.cuda_calls.append((node, self.where(node)))
                if "storage" in (dotted(func.value) or "") or any(
                        type(n) is cst.Arg and _keyword(n) == "map_location" for n in self.model.ancestors(node)):
                    self.storages.add(id(node))  # ``Storage.to`` takes the device as a keyword only
                return
            if method == "type" and len(node.args) == 1 and node.args[0].keyword is None:
                self.type_calls.append((node, self.where(node)))
            elif method == "add_argument":
                self._option(node)
            if method not in SITE_NAMES:
                return
        qualified = self.qualname(func)
        if qualified is None:
            return
        module, _, last = qualified.rpartition(".")
        if (last in TENSOR_TYPES and module in ("torch", "torch.cuda")) or qualified == "torch.Tensor":
            up = parent(node)
            filled = (type(up) is cst.Attribute and up.attr.value in IN_PLACE_INITIALISERS
                      and type(parent(up)) is cst.Call and parent(up).func is up)
            self.constructors.append((node, last, module == "torch.cuda", filled, self.where(node)))
        elif qualified in DEFAULT_DTYPE_SETTERS:
            self.sets_default_dtype = True
            arg = node.args[0].value if node.args else None
            spelled = (string(arg) or self.qualname(arg) or "") if arg is not None else ""
            if spelled.startswith("torch.cuda."):
                self._cuda_only(node)  # set_default_tensor_type(torch.cuda.FloatTensor)
        elif qualified in CUDA_ONLY_STATEMENTS:
            self.sets_device = self.sets_device or qualified == "torch.cuda.set_device"
            self._cuda_only(node)

    def _cuda_only(self, node: cst.Call) -> None:
        """``node`` raises without CUDA: remember its statement if it is one."""
        expr = parent(node)
        line = parent(expr) if expr is not None else None
        if (type(expr) is cst.Expr and type(line) is cst.SimpleStatementLine and len(line.body) == 1
                and type(parent(line)) in _BLOCKS):
            self.cuda_only.append((line, self.where(line)))

    def _option(self, node: cst.Call) -> None:
        """argparse ``add_argument``: remember dests, and those declared ``type=int``."""
        flags = [string(a.value) for a in node.args if a.keyword is None]
        dest = next((string(a.value) for a in node.args if _keyword(a) == "dest"), None)
        longs = [f for f in flags if f and f.startswith("--")]
        name = dest or (longs[0][2:].replace("-", "_") if longs else None)
        if name is None:
            return
        self.options.add(name)
        if any(_keyword(a) == "type" and dotted(a.value) == "int" for a in node.args):
            self.int_options.add(name)

    # -- what an assignment is ------------------------------------------------------
    def _assign(self, node: cst.Assign) -> None:
        """A device, a flag or a type selection: told from the value first, as most assignments are none of
        them; only those get their scope and binding looked up."""
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        name = dotted(target)
        if name is None:
            return
        value, selected = node.value, None
        if self._is_device_value(value):
            found = self.devices
        elif self.is_flag_value(value):
            found = self.flags
        elif type(target) is cst.Name and (selected := self._selected_type(value)) is not None:
            found = self.selections
        else:
            return
        scope = self.chain(node)[0]
        binding = next((b for b in reversed(self.bound(scope, name)) if b.node is node), None)
        if binding is None:
            return  # a class body's attribute
        if selected is not None:
            test = value.test if isinstance(value, cst.IfExp) else None
            found.append((name, selected, test, binding.line, self.where(value)))
        else:
            found.append((name, binding, scope))

    def _is_device_value(self, value: cst.CSTNode) -> bool:
        if isinstance(value, cst.Call):
            return self.qualname(value.func) == "torch.device"
        if isinstance(value, cst.IfExp):  # "cuda" if use_cuda else "cpu"
            strings = (string(value.body), string(value.orelse))
            return None not in strings and "cpu" in strings and any(s.startswith("cuda") for s in strings)
        return False

    def is_flag_value(self, value: cst.CSTNode) -> bool:
        """A boolean built from ``torch.cuda.is_available()`` (``not args.no_cuda and ...``)."""
        if isinstance(value, cst.Call):
            return self.qualname(value.func) == "torch.cuda.is_available"
        if isinstance(value, cst.BooleanOperation):
            return self.is_flag_value(value.left) or self.is_flag_value(value.right)
        if isinstance(value, cst.UnaryOperation):
            return self.is_flag_value(value.expression)
        if isinstance(value, cst.Comparison):
            return self.is_flag_value(value.left) or any(self.is_flag_value(c.comparator)
                                                          for c in value.comparisons)
        return False

    def _selected_type(self, value: cst.CSTNode) -> Optional[str]:
        """``X`` for ``torch.cuda.FloatTensor if args.cuda else torch.FloatTensor`` or ``torch.cuda.X``."""
        test, chosen = (value.test, value.body) if isinstance(value, cst.IfExp) else (None, value)
        module, _, last = (self.qualname(chosen) or "").rpartition(".")
        if module != "torch.cuda" or last not in TENSOR_TYPES:
            return None
        if test is not None and self.qualname(value.orelse) != f"torch.{last}":
            return None
        return last


def _is_plain(node: cst.CSTNode) -> bool:
    """A name, attribute chain or constant subscript of one: reading it twice has no side effect."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _is_plain(node.value)
    if isinstance(node, cst.Subscript):
        return _is_plain(node.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.SimpleString, cst.Name))
            for e in node.slice)
    return False


def _transfers(target: Optional[cst.CSTNode], value: cst.CSTNode, method: str) -> Optional[List[str]]:
    """``x = x.cuda()``, ``a, b = a.cuda(), b.cuda()``, ``model.cuda()`` (target None) only move existing
    values: the receivers moved, or None for anything else. With ``method="cpu"`` (an ``else`` branch)
    ``x.cpu()`` and ``x`` itself count: there the device is the CPU, where ``.to(device)`` returns ``x``."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return None
        moved = [_transfers(t.value, v.value, method) for t, v in zip(target.elements, value.elements)]
        return None if None in moved else [name for names in moved for name in names]
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == method:
        receiver = value.func.value
    elif method == "cpu":
        receiver = value
    else:
        return None
    if not _is_plain(receiver) or (target is not None and code(target) != code(receiver)):
        return None
    return [code(receiver)]


def _block_transfers(body: cst.BaseSuite, method: str) -> Optional[List[Tuple[str, str]]]:
    """What a block of transfers does: ("move" | "return", receiver) each; None if it does anything else."""
    smalls: List[cst.BaseSmallStatement] = []
    if isinstance(body, cst.SimpleStatementSuite):
        smalls = list(body.body)
    else:
        for statement in body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                return None
            smalls.extend(statement.body)
    moved: List[Tuple[str, str]] = []
    for small in smalls:
        kind, names = "move", None
        if isinstance(small, cst.Expr):
            names = _transfers(None, small.value, method)
        elif isinstance(small, cst.Assign) and len(small.targets) == 1:
            names = _transfers(small.targets[0].target, small.value, method)
        elif isinstance(small, cst.Return) and small.value is not None:
            kind, names = "return", _transfers(None, small.value, method)
        if names is None:
            return None
        moved += [(kind, name) for name in names]
    return moved or None


def _unwrap_if(node: cst.If) -> cst.FlattenSentinel:
    """The body of an ``if`` statement in its place, keeping the comments of its header."""
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):
        smalls = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body]
        statements = [cst.SimpleStatementLine(body=smalls, trailing_whitespace=body.trailing_whitespace)]
    else:
        statements = list(body.body)
        header = [cst.EmptyLine(comment=body.header.comment)] if body.header.comment is not None else []
        statements[0] = statements[0].with_changes(leading_lines=[*header, *statements[0].leading_lines])
    statements[0] = statements[0].with_changes(leading_lines=[*node.leading_lines, *statements[0].leading_lines])
    return cst.FlattenSentinel(statements)


class Act(enum.Enum):
    """What the plan decided for one node (detail: the strings its message needs)."""

    MOVE = "move"  # ``.cuda()`` -> ``.to(device)`` (device)
    MOVE_UNREACHABLE = "move-unreachable"  # ``.cuda()`` that no device (nor flag) reaches
    MOVE_OTHER_INDEX = "move-other-index"  # ``.cuda(k)`` with an index the one device does not have
    GUARD = "guard"  # ``if flag:`` around transfers only goes (device)
    GUARD_EXPRESSION = "guard-expression"  # ``x.cuda() if flag else x`` (device)
    CUDA_CONSTRUCTOR = "cuda-constructor"  # ``torch.cuda.X(...)`` -> ``torch.empty/tensor`` (type, form, initialised)
    CUDA_CONSTRUCTOR_UNKNOWN = "cuda-constructor-unknown"  # one argument: a size or data? (type)
    CUDA_CONSTRUCTOR_UNREACHABLE = "cuda-constructor-unreachable"  # no device in scope (type)
    CONSTRUCTOR = "constructor"  # ``torch.X(...)`` -> ``torch.empty/tensor`` (type, form, initialised)
    CONSTRUCTOR_UNKNOWN = "constructor-unknown"  # (type)
    TYPE_CALL = "type-call"  # ``.type(torch.cuda.X)`` -> ``.to(device, dtype)`` (type, device, dtype)
    TYPE_CALL_UNREACHABLE = "type-call-unreachable"  # (type)
    SELECTION = "selection"  # ``T = torch.cuda.X if flag else torch.X`` goes (name, device)
    SELECTION_KEPT = "selection-kept"  # (name, type, problem)
    CUDA_ONLY = "cuda-only"  # ``torch.cuda.set_device(...)`` gets an ``is_available()`` guard
    DEFINITION = "definition"  # the device's definition (definition; for: the code whose fixes use it)


class Action(NamedTuple):
    act: Act
    detail: Dict[str, str]
    fix: Optional[Callable]
    unsafe: bool


class DevicePlan:
    """Every decision of the family for one file, keyed by the id of the node each rule reports on."""

    def __init__(self, ctx, codes: Set[str], owners: Dict["Act", str]):
        self.ctx = ctx
        self.codes = codes
        self.owners = owners
        self.facts = _Facts(ctx.model)
        self.torch = ctx.imports.local_name("torch") or "torch"
        self.actions: Dict[int, List[Action]] = {}
        self.users: Set[str] = set()  # codes whose applied fixes use a created device
        self.uses: Dict[str, Optional[List[Tuple[cst.Call, _Where]]]] = {}  # type selection -> its uses
        self.module_torch = True  # a top-level import binds ``torch`` (known once a default device is planned)
        self.existing = self._existing_devices()  # ``x = torch.device(...)``: no other is created
        self.params = [_Device("device", function, 0, known=False) for function in self.facts.device_params]
        self.device: Optional[_Device] = None
        if not self.existing:
            wanted = [w for w in self._wanted() if not any(self._reaches(p, w) for p in self.params)]
            if wanted:
                self.device = self._create(wanted)
        self._plan_cuda_calls()
        self._plan_constructors()
        self._plan_type_calls()
        self._plan_selections()
        self._plan_cuda_only()
        self._plan_definition()

    # -- helpers ----------------------------------------------------------------------
    def _add(self, node: cst.CSTNode, act: "Act", detail: Dict[str, str], fix: Optional[Callable] = None, *,
             unsafe: bool = False, where: Optional[_Where] = None, device: Optional[_Device] = None) -> None:
        self.actions.setdefault(id(node), []).append(Action(act, detail, fix, unsafe))
        if device is not None and device is self.device and fix is not None and self._applies(act, where, unsafe):
            self.users.add(self.owners[act])

    def _applies(self, act: "Act", where: Optional[_Where], unsafe: bool = False) -> bool:
        """Would a fix of ``act`` at ``where`` be applied (its rule selected, not suppressed, safe enough)?"""
        code = self.owners.get(act)
        if code not in self.codes or (unsafe and not self.ctx.unsafe_fixes):
            return False
        comment = where.line.trailing_whitespace.comment if where is not None and where.line is not None else None
        match = SUPPRESSION.search(comment.value) if comment is not None else None
        if match is None:
            return True
        codes = match.group("codes")
        return codes is not None and not any(code.startswith(c.strip()) for c in codes.split(",") if c.strip())

    def _bound(self, scope: Scope, name: str) -> List[_Bound]:
        return self.facts.bound(scope, name)

    def _need_torch(self) -> None:
        """Call from a fix that writes ``torch.``: import it where the file does not."""
        if self.ctx.imports.local_name("torch") is None:
            self.ctx.add_import("torch")

    def _dtype(self, type_name: str, empty: bool) -> Optional[str]:
        """``torch.<dtype>`` for a legacy type; None where ``torch.empty`` already has it (the default dtype)."""
        default = type_name in DEFAULT_DTYPE_TYPES and (empty or type_name == "Tensor")
        if default and not self.facts.sets_default_dtype:
            return None
        return f"{self.torch}.{TENSOR_TYPES[type_name]}" if type_name in TENSOR_TYPES else None

    # -- the device -----------------------------------------------------------------------
    def _existing_devices(self) -> List[_Device]:
        found = []
        for target, binding, scope in self.facts.devices:
            root, _, attr = target.partition(".")
            if "." in attr:
                continue
            value = binding.value
            choice = value.args[0].value if isinstance(value, cst.Call) and value.args else value
            strings = [string(n) for n in (choice.body, choice.orelse)] if isinstance(choice, cst.IfExp) else [
                string(choice)]
            cuda = next((s for s in strings if s and s.startswith("cuda")), "")
            index = int(cuda[5:]) if cuda[5:].isdigit() else None
            if isinstance(value, cst.Call) and len(value.args) == 2 and isinstance(value.args[1].value, cst.Integer):
                index = int(value.args[1].value.evaluated_value)  # torch.device("cuda", 1)
            condition = _condition(choice.test) if isinstance(choice, cst.IfExp) else None
            found.append(_Device(target, scope, self._end(binding.line), root if attr else None, condition, index))
        return found

    def _reaches(self, device: _Device, where: _Where) -> bool:
        """Can the code at ``where`` read ``device.expr`` (bound, in scope, not shadowed)?"""
        name = device.root or device.expr
        declared_global = self.facts.declares_global(device.scope, name)
        for position, scope in enumerate(where.chain):
            if scope is device.scope:
                return position > 0 or where.order > device.end
            bindings = self._bound(scope, name)
            if type(scope.node) is cst.Module:
                # attribute mode: a module-level object, or one that ``main()`` declared global
                return device.root is not None and (bool(bindings) or declared_global)
            if bindings and not self.facts.declares_global(scope, name):
                # the object that carries the flag, passed in (``def train(args)``); ``self`` of the same class
                owner = device.scope.cls
                return device.root is not None and all(b.kind == "param" for b in bindings) and (
                    owner is None or scope.cls is owner)
        return False

    def _find(self, where: _Where) -> Optional[_Device]:
        candidates = self.existing + self.params + ([self.device] if self.device else [])

        def nearness(device: _Device):
            chain = where.chain
            return (chain.index(device.scope) if device.scope in chain else len(chain), -device.end)

        return next((d for d in sorted(candidates, key=nearness) if self._reaches(d, where)), None)

    def _wanted(self) -> Iterator[_Where]:
        """Where the file's device is needed (before knowing it)."""
        facts = self.facts
        for call, where in facts.cuda_calls:
            if self._is_cuda_guard(where) is None and self._applies(Act.MOVE, where, facts.defines_cuda):
                yield where
        for _, _, cuda, _, where in facts.constructors:
            if cuda and self._applies(Act.CUDA_CONSTRUCTOR, where):
                yield where
        for call, where in facts.type_calls:
            if self._cuda_type(call.args[0].value) and self._applies(Act.TYPE_CALL, where):
                yield where
        for target, _, _, _, _ in facts.selections:
            for _, where in self._selection_uses(target) or ():
                if self._applies(Act.SELECTION, where):
                    yield where

    def _create(self, sites: Sequence[_Where]) -> _Device:
        """The device to define: from the best flag, else from ``torch.cuda.is_available()``."""
        candidates = [(0, name, binding, scope) for name, binding, scope in self.facts.flags if binding.top]
        tests: Dict[str, _Where] = {}
        for where in sites:
            guard, in_body = where.guards[0] if where.guards else (None, False)
            test = dotted(guard.test) if in_body else None
            if test and not test.endswith(".is_cuda"):
                tests.setdefault(test, where)
        for _, _, test, _, where in self.facts.selections:
            if test is not None and dotted(test):
                tests.setdefault(dotted(test), where)
        for test, where in tests.items():
            found = self._flag_binding(test, where)
            if found is not None and self._is_cuda_flag(test, found[0]):
                candidates.append((1, test) + found)
        best, best_score = None, None
        for rank, flag, binding, scope in candidates:
            for device in self._modes(flag, binding, scope):
                score = (-rank, sum(self._reaches(device, where) for where in sites))
                if score[1] and (best_score is None or score > best_score):
                    best, best_score = device, score
        return best or self._default()

    def _is_cuda_flag(self, test: str, binding: _Bound) -> bool:
        """Only a test that is provably about CUDA may choose the device: named as a CUDA switch (``args.cuda``,
        ``use_gpu``), not an integer option (``if args.gpu:`` is false for GPU 0), or bound to
        ``torch.cuda.is_available()``. Any other test that guards ``.cuda()`` calls (``if args.resume:``) would
        leave the model on the CPU on a GPU machine, so the device comes from ``is_available()`` instead."""
        last = test.rpartition(".")[2]
        if CUDA_FLAG_NAME.match(last) and last not in self.facts.int_options:
            return True
        return binding.value is not None and binding.kind == "assign" and self.facts.is_flag_value(binding.value)

    def _flag_binding(self, test: str, where: _Where) -> Optional[Tuple[_Bound, Scope]]:
        """The statement that sets ``test`` (or the object it is read from) as seen from ``where``."""
        root = test.split(".")[0]
        for name in dict.fromkeys((test, root)):
            for scope in where.chain:
                bindings = self._bound(scope, name)
                if not bindings:
                    continue
                if name == root != test and all(b.kind == "param" for b in bindings):
                    return self._passed_in(root)
                if not all(b.kind == "assign" and b.top for b in bindings):
                    return None
                before = [b for b in bindings if scope is not where.chain[0] or b.start <= where.order]
                return (before or bindings)[-1], scope
        return None

    def _passed_in(self, root: str) -> Optional[Tuple[_Bound, Scope]]:
        """``def train(args): if args.cuda: ...``: the one function that builds ``args`` and passes it on."""
        found = [(bindings, scope) for scope, bindings in self.facts.homes(root).values()
                 if all(b.kind == "assign" and b.top for b in bindings)]
        if len(found) != 1 or len(found[0][0]) != 1:
            return None
        return found[0][0][0], found[0][1]

    @functools.cached_property
    def _cudastring(self) -> Tuple[Optional[int], str]:
        """The created device's index and string (one per file: each flag's candidates and the definition ask)."""
        index = self._index_policy()
        return index, ("cuda" if index is None else f"cuda:{index}")

    def _definition(self, target: str, condition: str, cuda: str) -> str:
        """The statement that creates a device (``_plan_definition`` builds the same one as a tree)."""
        return f'{target} = {self.torch}.device("{cuda}" if {condition} else "cpu")'

    def _modes(self, flag: str, binding: _Bound, scope: Scope) -> List[_Device]:
        """A plain name after the flag; for ``obj.flag`` in a function also ``obj.device``."""
        index, cuda = self._cudastring
        name = next(n for n in DEVICE_NAMES if not self.ctx.model.uses_name(n))
        end = self._end(binding.line)
        modes = [_Device(name, scope, end, None, flag, index,
                         definition=self._definition(name, flag, cuda), after=binding.line)]
        root = flag.split(".")[0]
        if "." in flag and type(scope.node) is not cst.Module:
            attr = next(n for n in DEVICE_NAMES if not self.ctx.model.reads_attribute(root, n)
                        and n not in self.facts.options)
            modes.append(_Device(f"{root}.{attr}", scope, end, root, flag, index,
                                 definition=self._definition(f"{root}.{attr}", flag, cuda), after=binding.line))
        return modes

    def _default(self) -> _Device:
        """``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`` after the imports."""
        body = self.ctx.module.body
        torch_root = self.torch.split(".")[0]

        def imports(statement) -> List[cst.CSTNode]:
            if isinstance(statement, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
                return list(statement.body)
            return []

        def binds_torch(statement) -> bool:
            return any(isinstance(s, cst.Import) and any(
                dotted(a.asname.name if a.asname else a.name).split(".")[0] == torch_root for a in s.names)
                for s in imports(statement))

        start = next((i for i, s in enumerate(body) if binds_torch(s)), None)
        self.module_torch = start is not None
        if start is None:  # ``torch`` gets imported: after the leading imports
            start = next((i for i, s in enumerate(body) if imports(s)), None)
        at, end = None, 0
        if start is None:  # no imports: into the module, after its docstring
            docstring = isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and (
                isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
            anchor, at = self.ctx.module, int(docstring)
            end = self._end(body[0]) if docstring else 0
        else:
            while start + 1 < len(body) and imports(body[start + 1]):
                start += 1
            anchor = body[start]
            end = self._end(anchor)
        index, cuda = self._cudastring
        available = f"{self.torch}.cuda.is_available()"
        name = next(n for n in DEVICE_NAMES if not self.ctx.model.uses_name(n))
        return _Device(name, self.ctx.model.module_scope, end, None, available, index,
                       definition=self._definition(name, available, cuda),
                       after=anchor, at=at, blank_line=at != 0)

    def _end(self, statement: cst.CSTNode) -> int:
        """The last position inside ``statement``: a site whose position is greater comes after it."""
        return self.ctx.model.span(statement)[1]

    def _index_policy(self) -> Optional[int]:
        """The index the created device keeps: the file's one literal ``.cuda(k)`` index, if that is exact."""
        indices, plain = set(), False
        for call, where in self.facts.cuda_calls:
            kind, index = self._index(call, where)
            indices.update([index] if kind == "literal" else [])
            plain = plain or kind == "none"
        if len(indices) == 1 and not self.facts.sets_device:
            index = indices.pop()
            if index == 0 or not plain:
                return index
        return None

    def _gpu_arg(self, call: cst.Call) -> Optional[cst.Arg]:
        return next((a for a in call.args if (a.keyword is None and not a.star) or _keyword(a) in INDEX_KEYWORDS),
                    None)

    def _index(self, call: cst.Call, where: _Where) -> Tuple[str, Optional[int]]:
        """("none" | "literal" | "name" | "other", index) for the GPU argument of ``.cuda(...)``
        (a name bound only to one integer, ``gpu_id = 0``, is that literal)."""
        if any(a.star for a in call.args):
            return "other", None
        arg = self._gpu_arg(call)
        if arg is None:
            return "none", None
        value = arg.value
        if isinstance(value, cst.Call) and self.ctx.qualname(value.func) == "torch.cuda.current_device":
            return "none", None
        if isinstance(value, cst.Name):
            bindings = next((b for b in (self._bound(s, value.value) for s in where.chain) if b), [])
            values = {code(b.value) if b.kind == "assign" and isinstance(b.value, cst.Integer) else "" for b in bindings}
            if len(values) == 1 and "" not in values:
                value = bindings[0].value
        if isinstance(value, cst.Integer):
            return "literal", int(value.evaluated_value)
        return ("name", None) if dotted(value) else ("other", None)

    def _index_ok(self, device: _Device, call: cst.Call, where: _Where) -> bool:
        kind, index = self._index(call, where)
        if kind == "none":
            return True
        if kind == "name":  # ``.cuda(device)`` with the device itself
            return dotted(self._gpu_arg(call).value) == device.expr
        return kind == "literal" and device.known and (
            device.index == index or (device.index is None and index == 0 and not self.facts.sets_device))

    @staticmethod
    def _is_cuda_guard(where: _Where) -> Optional[str]:
        """``if x.is_cuda: y = y.cuda()``: ``x.device``."""
        for guard, in_body in where.guards:
            name = dotted(guard.test)
            if in_body and name and name.endswith(".is_cuda"):
                return name[: -len("is_cuda")] + "device"
        return None

    # -- .cuda() -----------------------------------------------------------------------------
    def _plan_cuda_calls(self) -> None:
        unsafe = self.facts.defines_cuda  # the file has its own ``cuda()`` methods: receivers may not be torch
        fixed: Dict[int, Tuple[str, Optional[str]]] = {}  # id(call) -> (device expression, its condition)
        for call, where in self.facts.cuda_calls:
            local = self._is_cuda_guard(where)
            if local is not None:
                device = _Device(local, where.chain[0], 0, condition=local[:-6] + "is_cuda",
                                 known=False)
            else:
                device = self._find(where)
            if device is None:
                self._add(call, Act.MOVE_UNREACHABLE, {})
            elif not self._index_ok(device, call, where):
                self._add(call, Act.MOVE_OTHER_INDEX, {})
            else:
                fix = self._to_fix(device.expr, by_keyword=id(call) in self.facts.storages)
                self._add(call, Act.MOVE, {"device": device.expr}, fix, unsafe=unsafe, where=where, device=device)
                if self._applies(Act.MOVE, where, unsafe):
                    fixed[id(call)] = (device.expr, device.condition)
        self._plan_guards(fixed)

    def _to_fix(self, device: str, dtype: Optional[str] = None, by_keyword: bool = False) -> Callable:
        """``x.cuda(0, non_blocking=True)`` / ``x.type(T)`` -> ``x.to(device[, dtype], non_blocking=True)``,
        in the layout of the original arguments."""
        def fix(node: cst.Call) -> cst.Call:
            value = expression(device)
            new = keyword("device", value) if by_keyword else cst.Arg(value)
            args = list(node.args)
            if dtype:  # .type(T): T is replaced by the device and the dtype
                self._need_torch()
                args = [new, cst.Arg(expression(dtype))]
            else:
                gpu = self._gpu_arg(node)
                if gpu is None:
                    comma = cst.MaybeSentinel.DEFAULT if not args else cst.Comma(
                        whitespace_after=cst.SimpleWhitespace(" "))
                    args.insert(0, new.with_changes(comma=comma))
                else:
                    at = args.index(gpu)
                    args[at] = new.with_changes(comma=gpu.comma, whitespace_after_arg=gpu.whitespace_after_arg)
                positional = [a for a in args[1:] if a.keyword is None and not a.star]
                if positional:  # cuda(device, async)
                    at = args.index(positional[0])
                    args[at] = args[at].with_changes(keyword=cst.Name("non_blocking"), equal=TIGHT_EQUAL)
            return node.with_changes(func=node.func.with_changes(attr=cst.Name("to")), args=args)
        return fix

    def _plan_guards(self, fixed: Dict[int, Tuple[str, Optional[str]]]) -> None:
        """``if <flag>:`` around transfers only (``x.cuda() if <flag> else x``) goes when the flag is the device's."""
        inside: Dict[int, List[Tuple[str, Optional[str]]]] = {}
        guards: Dict[int, cst.CSTNode] = {}
        for call, where in self.facts.cuda_calls:
            if where.guards and where.guards[0][1]:
                guard = where.guards[0][0]
                guards[id(guard)] = guard
                inside.setdefault(id(guard), []).append(fixed.get(id(call), ("", None)))
        for key, guard in guards.items():
            if len(set(inside[key])) != 1:
                continue
            expr, condition = inside[key][0]
            if not expr or condition is None or _condition(guard.test) != condition:
                continue
            if isinstance(guard, cst.If):
                moved = _block_transfers(guard.body, "cuda")
                orelse = guard.orelse
                if moved and isinstance(parent(guard), _BLOCKS) and (
                        (orelse is None and all(kind == "move" for kind, _ in moved))
                        or (isinstance(orelse, cst.Else) and _block_transfers(orelse.body, "cpu") == moved)):
                    self._add(guard, Act.GUARD, {"device": expr}, _unwrap_if)
            elif _transfers(None, guard.body, "cuda") and (
                    _transfers(None, guard.body, "cuda") == _transfers(None, guard.orelse, "cpu")):
                self._add(guard, Act.GUARD_EXPRESSION, {"device": expr},
                          lambda node: node.body.with_changes(lpar=node.lpar, rpar=node.rpar))

    # -- constructors ----------------------------------------------------------------------
    def _arg_kind(self, node: cst.CSTNode, where: _Where, depth: int = 0) -> Optional[str]:
        """"size" or "data" for the single argument of a legacy constructor; None when it cannot be told."""
        if depth > 3:
            return None
        if isinstance(node, cst.Integer):
            return "size"
        if isinstance(node, (cst.List, cst.Tuple, cst.ListComp)):
            return "data"
        if isinstance(node, cst.BinaryOperation):
            kinds = {self._arg_kind(node.left, where, depth + 1), self._arg_kind(node.right, where, depth + 1)}
            if kinds == {"data", "size"} and isinstance(node.operator, cst.Multiply):
                return "data"  # [0] * n
            if kinds == {"size"} and isinstance(node.operator, SIZE_OPERATORS):
                return "size"
            return "data" if kinds == {"data"} and isinstance(node.operator, cst.Add) else None
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and not self._rebound(func.value, where):
                return "size" if func.value in SIZE_FUNCTIONS else "data" if func.value in DATA_FUNCTIONS else None
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in SIZE_METHODS or self.ctx.qualname(func) == "torch.Size":
                    return "size"
                return "data" if method in DATA_METHODS else None
            return None
        if isinstance(node, cst.Subscript):
            inner = node.value
            sized = (isinstance(inner, cst.Attribute) and inner.attr.value == "shape") or (
                isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
                and inner.func.attr.value == "size")
            if sized:
                return "size"
            sliced = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)
            return "data" if sliced and self._arg_kind(inner, where, depth + 1) == "data" else None
        if isinstance(node, cst.Attribute):
            # ``x.shape``; ``args.batch_size`` declared ``type=int``
            return "size" if node.attr.value == "shape" or (
                isinstance(node.value, cst.Name) and node.attr.value in self.facts.int_options) else None
        if isinstance(node, cst.Name):
            for scope in where.chain:
                bindings = self._bound(scope, node.value)
                if bindings:
                    if not all(b.kind in ("assign", "add") for b in bindings):
                        return None
                    kinds = {self._arg_kind(b.value, where, depth + 1) for b in bindings}
                    return kinds.pop() if len(kinds) == 1 else None
        return None

    def _rebound(self, name: str, where: _Where) -> bool:
        return any(self._bound(scope, name) for scope in where.chain)

    def _form(self, call: cst.Call, where: _Where, filled: bool) -> Tuple[Optional[str], bool]:
        """("empty" | "tensor" | None, unsafe) for a legacy constructor call."""
        if any(a.keyword is not None or a.star == "**" for a in call.args):
            return None, False
        if len(call.args) != 1 or call.args[0].star:
            return "empty", False  # no argument, several sizes, or ``*shape``
        kind = self._arg_kind(call.args[0].value, where)
        if kind is not None:
            return ("empty" if kind == "size" else "tensor"), False
        return ("empty", True) if filled else (None, False)

    def _constructor_fix(self, type_name: str, form: str, device: Optional[str]) -> Callable:
        def fix(node: cst.Call) -> cst.Call:
            args = list(node.args) or [cst.Arg(cst.Integer("0"))]
            dtype = self._dtype(type_name, empty=form == "empty")
            args += [keyword("dtype", expression(dtype))] if dtype else []
            args += [keyword("device", expression(device))] if device else []
            self._need_torch()
            self._forget(node.func)
            return node.with_changes(func=expression(f"{self.torch}.{form}"), args=args)
        return fix

    def _forget(self, type_node: cst.CSTNode) -> None:
        """``from torch.cuda import FloatTensor`` goes when nothing uses it any more."""
        qualified = self.ctx.qualname(type_node) if isinstance(type_node, cst.Name) else None
        if qualified:
            module, _, name = qualified.rpartition(".")
            self.ctx.remove_import_if_unused(module, name)

    def _plan_constructors(self) -> None:
        for call, type_name, cuda, filled, where in self.facts.constructors:
            spelled = f"torch.cuda.{type_name}" if cuda else f"torch.{type_name}"
            form, unsafe = self._form(call, where, filled)
            if type_name == "Tensor" and form != "empty":
                continue  # ``torch.Tensor(data)`` is still current API
            if form is None:
                if not any(a.keyword is not None or a.star == "**" for a in call.args):
                    self._add(call, Act.CUDA_CONSTRUCTOR_UNKNOWN if cuda else Act.CONSTRUCTOR_UNKNOWN,
                              {"type": spelled})
                continue
            device = self._find(where) if cuda else None
            if cuda and device is None:
                self._add(call, Act.CUDA_CONSTRUCTOR_UNREACHABLE, {"type": spelled})
                continue
            self._add(call, Act.CUDA_CONSTRUCTOR if cuda else Act.CONSTRUCTOR,
                      {"type": spelled, "form": form, "initialised": "yes" if unsafe else ""},
                      self._constructor_fix(type_name, form, device and device.expr), unsafe=unsafe, where=where,
                      device=device)

    # -- .type(torch.cuda.X) and type selections ----------------------------------------------
    def _cuda_type(self, node: cst.CSTNode) -> Optional[str]:
        qualified = string(node) or self.ctx.qualname(node) or ""
        module, _, last = qualified.rpartition(".")
        return last if module == "torch.cuda" and last in TENSOR_TYPES else None

    def _plan_type_calls(self) -> None:
        for call, where in self.facts.type_calls:
            type_name = self._cuda_type(call.args[0].value)
            if type_name is None:
                continue
            device = self._find(where)
            if device is None:
                self._add(call, Act.TYPE_CALL_UNREACHABLE, {"type": f"torch.cuda.{type_name}"})
                continue
            dtype = f"{self.torch}.{TENSOR_TYPES[type_name]}"
            to = self._to_fix(device.expr, dtype)
            type_node = call.args[0].value

            def fix(node: cst.Call, to=to, type_node=type_node) -> cst.Call:
                self._forget(type_node)
                return to(node)

            self._add(call, Act.TYPE_CALL, {"type": f"torch.cuda.{type_name}", "device": device.expr, "dtype": dtype},
                      fix, where=where, device=device)

    def _plan_selections(self) -> None:
        """Replace a type selection by dtype + device at every use, or say why it stays."""
        removable: Dict[int, int] = {}  # block -> statements left when its selections go
        for _, _, _, line, _ in self.facts.selections:
            block = parent(line)
            removable[id(block)] = removable.get(id(block), len(getattr(block, "body", ()))) - 1
        for target, type_name, test, line, where in self.facts.selections:
            uses = self._selection_uses(target)
            device = self._find(where) or (self._find(uses[0][1]) if uses else None)
            problem = None
            block = parent(line)
            if len(self.facts.homes(target)) != 1 or len(
                    self._bound(where.chain[0], target)) != 1:
                problem = f"`{target}` is bound more than once"
            elif uses is None:
                problem = f"`{target}` is used other than as a constructor or a `.type()` argument"
            elif device is None:
                problem = "no `torch.device` is in scope"
            elif test is not None and _condition(test) != device.condition:
                problem = f"its condition is not the one `{device.expr}` is built from"
            elif not isinstance(block, _BLOCKS) or removable[id(block)] < 1 or len(line.body) != 1:
                problem = "the statement cannot be removed"
            elif not all(self._applies(Act.SELECTION, w) for w in [where] + [w for _, w in uses]):
                problem = "a use is suppressed"
            else:
                forms = []
                for use, use_where in uses:
                    form = self._form(use, use_where, False)[0] if use.func is not None and dotted(
                        use.func) == target else "to"
                    if self._find(use_where) is not device or form is None:
                        problem = f"a use of `{target}` cannot see `{device.expr}` or has an argument of unknown kind"
                        break
                    forms.append(form)
            spelled = f"torch.cuda.{type_name}"
            if problem is not None:
                self._add(line, Act.SELECTION_KEPT, {"name": target, "type": spelled, "problem": problem})
                continue
            self._add(line, Act.SELECTION, {"name": target, "device": device.expr},
                      lambda node: cst.RemoveFromParent(), where=where, device=device)
            for (use, use_where), form in zip(uses, forms):
                if form == "to":
                    dtype = f"{self.torch}.{TENSOR_TYPES[type_name]}"
                    self._add(use, Act.TYPE_CALL, {"type": target, "device": device.expr, "dtype": dtype},
                              self._to_fix(device.expr, dtype), where=use_where, device=device)
                else:
                    self._add(use, Act.CUDA_CONSTRUCTOR, {"type": target, "form": form, "initialised": ""},
                              self._constructor_fix(type_name, form, device.expr), where=use_where, device=device)

    def _selection_uses(self, name: str) -> Optional[List[Tuple[cst.Call, _Where]]]:
        """Every use of a selected type: ``name(...)`` or ``x.type(name)``; None if it is used otherwise."""
        if name not in self.uses:
            model = self.ctx.model
            calls = [site.call for site in model.calls_named(name)]
            calls += [call for call in model.passed(name) if len(call.args) == 1 and type(
                call.func) is cst.Attribute and call.func.attr.value == "type"]
            # every other ``Name`` of it must be the whole target of an ``=``, and nothing else may bind it
            bindings = [b for scope in model.scopes() for b in scope.bindings.get(name, ())]
            targets = sum(b.kind is BindingKind.ASSIGN and type(b.node) is cst.Assign for b in bindings)
            if targets != len(bindings) or model.name_count(name) != len(calls) + targets:
                self.uses[name] = None
            else:
                calls.sort(key=model.position)
                self.uses[name] = [(call, self.facts.where(call)) for call in calls]
        return self.uses[name]

    # -- calls that need CUDA ------------------------------------------------------------------
    def _plan_cuda_only(self) -> None:
        for line, where in self.facts.cuda_only:
            if any("cuda" in code(guard.test).lower() or "gpu" in code(guard.test).lower()
                   for guard, _ in where.guards):
                continue
            self._add(line, Act.CUDA_ONLY, {}, self._guard_fix)

    def _guard_fix(self, node: cst.SimpleStatementLine) -> cst.If:
        self._need_torch()
        body = cst.IndentedBlock(body=[node.with_changes(leading_lines=())])
        test = expression(f"{self.torch}.cuda.is_available()")
        return cst.If(test=test, body=body, leading_lines=node.leading_lines)

    # -- the definition ----------------------------------------------------------------------
    def _plan_definition(self) -> None:
        device = self.device
        if device is None or not self.users:
            return
        # ``device.definition`` built, not parsed (the parser cost a fifth of the plan); its condition is a
        # dotted flag or ``torch.cuda.is_available()``
        condition = device.condition
        test = cst.Call(expression(condition[:-2])) if condition.endswith("()") else expression(condition)
        choice = cst.IfExp(test, cst.SimpleString(f'"{self._cudastring[1]}"'), cst.SimpleString('"cpu"'))
        value = cst.Call(expression(f"{self.torch}.device"), [cst.Arg(choice)])
        statement = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(expression(device.expr))], value)])
        if device.blank_line:
            statement = statement.with_changes(leading_lines=[cst.EmptyLine()])

        def fix(node: cst.CSTNode) -> cst.CSTNode:
            if device.scope is self.ctx.model.module_scope and not self.module_torch:
                self.ctx.add_import("torch")
            if device.at is not None:  # into the module's body, a blank line before what follows
                following = node.body[device.at]
                if not following.leading_lines:
                    following = following.with_changes(leading_lines=[cst.EmptyLine()])
                return node.with_changes(body=[*node.body[:device.at], statement, following,
                                               *node.body[device.at + 1:]])
            self._need_torch()
            return cst.FlattenSentinel([node, statement])

        self._add(device.after, Act.DEFINITION, {"definition": device.definition, "for": min(self.users)}, fix)


@functools.lru_cache(maxsize=None)
def _family() -> Tuple[frozenset, Dict["Act", str]]:
    """The family's codes, and which of them owns each ``Act`` (from its rules' ``kinds``): found once, not for
    every file (finding the rules lists the package)."""
    import codemods

    rules = codemods.family_rules("device")
    owners = {act: rule.code for rule in rules for act in getattr(rule, "kinds", ())}
    return frozenset(rule.code for rule in rules), owners


def device_plan(ctx) -> "DevicePlan":
    """The plan for the file (``ctx.analysis(device_plan)``): which rule owns each ``Act`` comes from the
    family's rules (their ``kinds``), which of them run from ``ctx.codes``."""
    codes, owners = _family()
    return DevicePlan(ctx, set(codes & ctx.codes), owners)


