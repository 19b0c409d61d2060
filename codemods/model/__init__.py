"""The semantic model of one file: what every rule family asks about names, scopes and values.

**What it answers** (``ctx.model``, a ``SemanticModel``):

- *parents*: ``parent(node)``, ``ancestors(node)``, ``chain(node)`` (memoized), from the engine's one index of
  the tree;
- *scopes and bindings*: ``scope_of(node)``, ``lookup(name, scope)`` -> the scope that binds the name and
  its bindings (``Binding``: assignment, unpacking with the element's index, augmented assignment, ``for``
  and comprehension targets, ``with ... as``, parameters with their defaults, imports, ``def``/``class``,
  ``except ... as``, walrus, ``del``; ``global``/``nonlocal`` followed), each scope's uses of a name
  (attributes read on it, subscripts, item writes, calls), the calls it is passed to, a function's returns;
  bindings of attribute targets (``args.cuda = v``: ``scope.attributes["args.cuda"]``); ``uses_name``,
  ``reads_attribute``; every call and ``=`` statement in source order (``calls()``, ``assign_statements()``);
- *source order*: ``span(statement)``, ``position(node)``, ``Binding.order``: positions of the one walk, in
  which a later statement starts after an earlier one ends (what a flow-sensitive plan compares);
- *qualified names*: ``qualname(node)`` (``F.relu`` -> ``torch.nn.functional.relu``, through the file's
  imports; a name rebound by anything else resolves to nothing), ``local_name("torch.no_grad")``;
- *grad mode*: ``grad_mode(node)`` -> ``GradMode.OFF`` inside ``no_grad``/``inference_mode``/
  ``set_grad_enabled(False)`` (``with`` or decorator), ``ON`` inside ``enable_grad``/``set_grad_enabled(True)``,
  ``SWITCHED`` for a non-literal switch, ``DEFAULT`` elsewhere;
- *values*: ``value(expr)`` -> ``Value``: kind (tensor, Python number, ``torch.Size``, module, reducing loss,
  distribution, argparse namespace, other, unknown), rank, may-carry-a-graph, dtype, device, class; with
  ``is_number`` (one number: a 0-dim tensor or a Python scalar). Values flow through bindings, arithmetic,
  tensor methods and torch functions (``codemods.torchapi``), ``.size()``/``.shape`` unpacking, tuples and
  lists that functions of the file return, and a helper's parameters from what its call sites pass.
- *functions*: ``call_sites(fdef)``, ``parameter_value``, ``changes_in_place(fdef, param)``,
  ``self_attribute_values(attr, scope)``, ``is_module_class(cls)``, ``iterates_parameters(expr)``.

What is *not* here: a family's own decisions (which ``.data`` a rule owns, the device plan, hazards' flow
through statements). Those live in the family's ``analysis.py`` and read the model.

**How it is built**: lazily, on the first ``ctx.model`` of a file, by one read-only walk over the tree's
children index (``codemods.walk``, computed once per file by the engine together with every node's parent):
the walk fills scopes, bindings, uses and call sites; nothing else walks the whole file. Values, grad modes and
call sites are computed on demand and memoized per node, so a rule pays only for what it asks.

**Cost**: the walk is linear in the tree (about a tenth of a parse). Each ``value`` is computed once per
(expression, scope); a value that depends on itself (``total = total + x``) sees "pending" inside the cycle
(and the join ignores it); following stops at a depth of 12, answering unknown. Nothing is quadratic in the
file's size: per-name lists are only scanned for that name.

Flow-insensitive by design: a name's value is the join of all its bindings in its scope. An answer is never
a guess presented as a fact, except the documented naming conventions in ``values`` (``model(x)`` of an
unknown ``model`` is a tensor, a parameter named ``args`` is a namespace), which the rules have always used.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from codemods import torchapi
from codemods.model.grad import GradMode, GradRegions, context_mode
from codemods.model.scopes import (COMPREHENSIONS, STATEMENTS, Binding, BindingKind, CallSite, Collector, Scope,
                                   index_value, target_names)
from codemods.model.values import (NAMESPACE_NAME, UNKNOWN, Kind, Value, Values, full_reduction, is_minus_one,
                                   join, keywords, positional, reduces, single_dim)
from codemods.names import ImportMap
from codemods.walk import chain, parent, walk

__all__ = ["SemanticModel", "Scope", "Binding", "BindingKind", "CallSite", "GradMode", "Kind", "Value", "join",
           "index_value", "positional", "keywords", "full_reduction", "single_dim", "reduces", "is_minus_one",
           "target_names", "context_mode", "is_inplace_method"]


def is_inplace_method(name: str) -> bool:
    """``add_``, ``zero_``: an in-place method that changes values (not ``resize_``, ``requires_grad_``)."""
    return name.endswith("_") and not name.startswith("_") and name not in torchapi.NOT_VALUE_UPDATES


# Builtins that read a list without changing it.
READING_BUILTINS = frozenset({"zip", "enumerate", "len", "reversed", "sorted", "sum", "list", "tuple", "iter",
                              "print", "min", "max", "any", "all"})


class SemanticModel:
    """Built by ``ctx.model``; see the module docstring."""

    def __init__(self, ctx) -> None:
        self.module: cst.Module = ctx.module
        self.imports: ImportMap = ctx.imports
        collected = Collector(ctx.module)
        self.module_scope = collected.module_scope
        self._collected = collected
        self.creates_graph = collected.creates_graph
        self._grad = GradRegions(self.qualname)
        self._values = Values(self)
        self._sites: Dict[int, List[CallSite]] = {}
        self._parameters: Dict[int, Value] = {}
        self._module_classes: Dict[int, bool] = {}
        self._lists: Dict[tuple, Optional[list]] = {}
        self._appended: Dict[Tuple[int, str], Optional[list]] = {}
        self._changed: Dict[Tuple[int, str], bool] = {}

    # -- the tree ----------------------------------------------------------------------------------
    @staticmethod
    def parent(node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return parent(node)

    @staticmethod
    def ancestors(node: cst.CSTNode) -> List[cst.CSTNode]:
        """``node``'s ancestors, innermost first."""
        found, current = [], parent(node)
        while current is not None:
            found.append(current)
            current = parent(current)
        return found

    chain = staticmethod(chain)  # ``walk.chain``: the nodes from the module down to ``node``, itself last

    # -- names ---------------------------------------------------------------------------------------
    def qualname(self, node: cst.CSTNode) -> Optional[str]:
        return self.imports.qualname(node)

    def local_name(self, qualified: str) -> Optional[str]:
        return self.imports.local_name(qualified)

    def uses_name(self, name: str) -> bool:
        """Some ``Name`` of the file reads or binds ``name`` as a variable (not ``x.name``, ``f(name=...)``)."""
        return name in self._collected.names

    def name_count(self, name: str) -> int:
        """How many ``Name`` nodes read or store ``name`` as a variable (a ``def``, parameter or import binding
        it has no such node)."""
        return self._collected.names.get(name, 0)

    def reads_attribute(self, name: str, attr: str) -> bool:
        """Some ``name.<attr>`` is read or assigned in the file (any scope)."""
        return any(attr in scope.uses.get(name, ()) for scope in self._collected.scopes.values())

    def has_attribute(self, name: str) -> bool:
        """Some ``x.<name>`` is read in the file (a cheap test before a family's analysis runs)."""
        return name in self._collected.has

    # -- scopes ---------------------------------------------------------------------------------------
    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The scope whose names ``node`` sees (a function's decorators and defaults are outside it); a
        statement's from the walk's table, without the walk up its ancestors."""
        found = self._collected.statement_scopes.get(id(node))
        if found is not None:
            return found
        scopes = self._collected.scopes
        child, current = node, parent(node)
        while current is not None:
            kind = type(current)
            if id(current) in scopes and kind is not cst.Module:
                if kind in COMPREHENSIONS:  # its first iterable is evaluated outside
                    first = current.for_in.iter
                    inside = not (child is current.for_in and (node is first or _within(node, first)))
                else:
                    inside = child is current.body or (kind is not cst.ClassDef and child is current.params)
                if inside:
                    return scopes[id(current)]
            child, current = current, parent(current)
        return self.module_scope

    def scopes(self) -> List[Scope]:
        """Every scope of the file, in source order (the module first)."""
        return list(self._collected.scopes.values())

    # -- source order ---------------------------------------------------------------------------------
    def span(self, statement: cst.CSTNode) -> Tuple[int, int]:
        """(first, last) position of a statement in the walk: a statement that comes later in the source
        starts after every position of an earlier one ends; ``Binding.order`` is a position too."""
        return self._collected.spans[id(statement)]

    @staticmethod
    def statement_of(node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The innermost statement that holds ``node`` (``node`` itself when it is one)."""
        current = node
        while current is not None and type(current) not in STATEMENTS:
            current = parent(current)
        return current

    def position(self, node: cst.CSTNode) -> int:
        """Where ``node`` comes in source order, to the statement: the first position of its innermost
        statement (0 outside every statement)."""
        statement = self.statement_of(node)
        return self._collected.spans[id(statement)][0] if statement is not None else 0

    # -- calls and assignments, in source order ------------------------------------------------------
    def calls(self) -> List[cst.Call]:
        """Every call of the file, in source order (except inside a comprehension, whose iterable comes first)."""
        return self._collected.all_calls

    def calls_named(self, name: str) -> List[CallSite]:
        """Every call ``name(...)`` of the file, wherever ``name`` is bound."""
        return self._collected.calls.get(name, [])

    def passed(self, name: str) -> List[cst.Call]:
        """Every call, in any scope, that ``name`` is a plain argument of."""
        return [call for scope in self._collected.scopes.values() for call in scope.passed.get(name, ())]

    def assign_statements(self) -> List[cst.Assign]:
        """Every ``=`` assignment of the file, in source order."""
        return self._collected.assign_nodes

    def scope_of_definition(self, node: cst.CSTNode) -> Scope:
        """The scope a ``def``/``class``/lambda/comprehension opens."""
        return self._collected.scopes[id(node)]

    def lookup(self, name: str, scope: Scope) -> Tuple[Optional[Scope], Optional[List[Binding]]]:
        """(the scope that binds ``name`` as seen from ``scope``, its bindings), or (None, None)."""
        declared = scope.declared.get(name)
        if declared == "global":
            scope = self.module_scope
        while scope is not None:
            bindings = scope.bindings.get(name)
            if bindings is not None:
                return scope, bindings
            scope = scope.parent
        return None, None

    def assignments(self, name: str) -> List[Tuple[Scope, cst.CSTNode]]:
        """Every value assigned to ``name`` in any scope of the file."""
        return self._collected.assigned.get(name, [])

    def self_attribute_values(self, attr: str, scope: Scope) -> List[Tuple[Scope, cst.CSTNode]]:
        """The values the methods of ``scope``'s class assign to ``self.<attr>``."""
        while scope is not None and scope.cls is None:
            scope = scope.parent
        return self._collected.self_attributes.get((id(scope.cls), attr), []) if scope is not None else []

    # -- grad mode, values ------------------------------------------------------------------------------
    def grad_mode(self, node: cst.CSTNode) -> GradMode:
        return self._grad.mode(node)

    def value(self, node: cst.CSTNode, scope: Optional[Scope] = None) -> Value:
        """What ``node`` holds (``scope``: where it is evaluated; by default, where it stands)."""
        found = self._values.value(node, scope if scope is not None else self.scope_of(node))
        return UNKNOWN if found.kind is Kind.PENDING else found

    def value_of_binding(self, binding: Binding, scope: Scope) -> Value:
        found = self._values.binding(binding, scope)
        return UNKNOWN if found.kind is Kind.PENDING else found

    def element(self, expr: cst.CSTNode, index: int, scope: Scope) -> Value:
        """Element ``index`` of ``expr`` (as ``a, b = expr`` unpacks it)."""
        found = self._values.element(expr, index, scope)
        return UNKNOWN if found.kind is Kind.PENDING else found

    def integer_index(self, subscript: cst.Subscript, scope: Optional[Scope] = None) -> bool:
        """``x[i]`` takes one element along the first dimension: ``i`` is an int literal or a Python int."""
        return self._values.integer_index(subscript, scope if scope is not None else self.scope_of(subscript))

    def element_sources(self, expr: cst.CSTNode, index: int, scope: Scope,
                        depth: int = 0) -> Optional[List[Tuple[cst.CSTNode, Scope]]]:
        """The expressions (with their scopes) element ``index`` of ``expr`` can come from, or ``None``:
        ``expr`` is a tuple/list literal, or a call of a function of this file whose every ``return`` is such a
        literal or a local list only filled by ``append``."""
        if type(expr) in (cst.Tuple, cst.List):
            elements = expr.elements
            if any(type(e) is cst.StarredElement for e in elements) or index >= len(elements):
                return None
            return [(elements[index].value, scope)]
        if depth > 2 or not (type(expr) is cst.Call and type(expr.func) is cst.Name):
            return None
        _, bindings = self.lookup(expr.func.value, scope)
        if not bindings or len(bindings) != 1 or bindings[0].kind is not BindingKind.FUNCTION:
            return None
        fdef = bindings[0].node
        body = self.scope_of_definition(fdef)
        sources = []
        for value in body.returns or [None]:
            found = (self.element_sources(value, index, body, depth + 1) if type(value) in (cst.Tuple, cst.List)
                     else self.appended(fdef, value))
            if not found:
                return None
            sources.extend(found)
        return sources

    def appended(self, fdef: cst.FunctionDef, value: Optional[cst.CSTNode]):
        """The values a local list ``value`` (a name) of ``fdef`` is built from: its literal elements and the
        arguments of its ``append`` calls (``None`` when it is used any other way)."""
        if type(value) is not cst.Name:
            return None
        key = (id(fdef), value.value)
        if key not in self._appended:
            self._appended[key] = self._compute_appended(fdef, value.value)
        return self._appended[key]

    def _compute_appended(self, fdef: cst.FunctionDef, name: str):
        return self.list_sources(name, self.scope_of_definition(fdef))

    def list_sources(self, name: str, scope: Scope, consumer: Optional[cst.Call] = None):
        """The values the list ``name`` of the function or module ``scope`` is built from: its literal elements
        and the arguments of its ``append`` calls there, with their scope; ``None`` when it is used any other
        way. ``consumer``: the one call it may be passed to (the call that asks)."""
        key = (id(scope), name, id(consumer))
        if key not in self._lists:
            self._lists[key] = self._compute_list(name, scope, consumer)
        return self._lists[key]

    def _compute_list(self, name: str, scope: Scope, consumer: Optional[cst.Call]):
        """One ordered pass over the scope's uses of ``name``: while it holds a list it may only be appended
        to, returned, iterated, read by a builtin (``zip``, ``len``) or passed to ``consumer``; the statement around ``consumer`` may rebind it to something
        else (``loss = torch.cat(loss).sum()``), after which its uses are not the list's."""
        if not all(b.kind in (BindingKind.ASSIGN, BindingKind.UNPACK) for b in scope.bindings.get(name, ())):
            return None
        sources, holds_list = [], False
        for node in walk(scope.node.body if type(scope.node) is cst.FunctionDef else scope.node):
            if type(node) is not cst.Name or node.value != name:
                continue
            up = self.parent(node)
            if type(up) is cst.Attribute and up.attr is node or type(up) is cst.Arg and up.keyword is node:
                continue
            target = _assigned(node)
            if target is not None:
                value = target
                if type(value) is cst.List and not any(type(e) is cst.StarredElement for e in value.elements):
                    holds_list = True
                    sources.extend((e.value, scope) for e in value.elements)
                elif consumer is None or not _within(consumer, value):
                    return None
                continue
            if self.lookup(name, self.scope_of(node))[0] is not scope:
                continue  # another function's name
            call = self.parent(up)
            if type(up) is cst.Attribute and up.attr.value == "append" and type(call) is cst.Call and \
                    call.func is up and holds_list:
                if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                    return None
                sources.append((call.args[0].value, self.scope_of(call)))
            elif type(up) is cst.Arg and call is consumer and holds_list:
                holds_list = False
            elif holds_list and (type(up) in (cst.Return, cst.For, cst.CompFor) or type(up) is cst.Arg and type(
                    call.func) is cst.Name and call.func.value in READING_BUILTINS):
                continue  # read, not changed
            elif holds_list:
                return None
        return sources or None

    # -- functions and classes ---------------------------------------------------------------------------
    def call_sites(self, fdef: cst.FunctionDef) -> List[CallSite]:
        """Every call of the plain function ``fdef`` in the file; empty when it may be called from elsewhere
        too (a method, a name rebound, passed or stored as a value)."""
        key = id(fdef)
        if key not in self._sites:
            self._sites[key] = self._compute_sites(fdef)
        return self._sites[key]

    def _compute_sites(self, fdef: cst.FunctionDef) -> List[CallSite]:
        name = fdef.name.value
        home = self.scope_of(fdef)
        bindings = home.bindings.get(name, [])
        if type(home.node) is cst.ClassDef or name in self._collected.escapes or len(bindings) != 1:
            return []
        return [site for site in self._collected.calls.get(name, ())
                if self.lookup(name, site.scope)[1] is bindings]

    def parameter_value(self, binding: Binding, scope: Scope, depth: int = 0) -> Value:
        """A parameter's value: the join of what every call site of its function passes (the default where a
        site passes nothing); unknown when the function's calls are not all in the file. A parameter named
        like an options object (``args``, ``opt``, ``config``) with no known caller is a namespace."""
        key = id(binding.node)
        if key not in self._parameters:
            self._parameters[key] = UNKNOWN  # while computing: a recursive helper sees unknown
            self._parameters[key] = self._compute_parameter(binding, scope, depth)
        return self._parameters[key]

    def _compute_parameter(self, binding: Binding, scope: Scope, depth: int) -> Value:
        fdef = scope.node
        sites = self.call_sites(fdef) if type(fdef) is cst.FunctionDef else []
        if not sites:
            return Value(Kind.NAMESPACE, graph=False) if NAMESPACE_NAME.match(binding.name) else UNKNOWN
        params = fdef.params
        ordered = [*params.posonly_params, *params.params]
        position = next((i for i, p in enumerate(ordered) if p is binding.node), None)
        values = []
        for site in sites:
            argument = _argument(site.call, binding.name, position)
            if argument is ...:
                return UNKNOWN
            if argument is None:
                if binding.value is None:
                    return UNKNOWN
                values.append(self._values.value(binding.value, scope.parent or self.module_scope, depth))
            else:
                values.append(self._values.value(argument, site.scope, depth))
        return join(values)

    def is_module_class(self, node: cst.ClassDef) -> bool:
        """A class of the file that subclasses ``torch.nn.*`` (directly or through classes of the file)."""
        key = id(node)
        if key not in self._module_classes:
            self._module_classes[key] = False
            found = False
            for base in node.bases:
                if (self.qualname(base.value) or "").startswith("torch.nn."):
                    found = True
                elif type(base.value) is cst.Name:
                    _, bindings = self.lookup(base.value.value, self.scope_of(node))
                    found = bool(bindings) and len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS \
                        and self.is_module_class(bindings[0].node)
                if found:
                    break
            self._module_classes[key] = found
        return self._module_classes[key]

    def loss_name(self, name: str) -> bool:
        """``name`` is assigned, wherever it is, only reducing losses (``criterion = nn.MSELoss()``): a
        parameter of that name is such a loss too."""
        values = self.assignments(name)
        return bool(values) and all(self._values.value(v, s).kind is Kind.LOSS for s, v in values)

    def iterates_parameters(self, expr: cst.CSTNode, scope: Scope, depth: int = 0) -> bool:
        """``expr`` iterates over parameters (``model.parameters()``, ``group['params']``, a name bound to one)."""
        for node in walk(expr):
            if type(node) is cst.Attribute and node.attr.value in torchapi.PARAMETER_ITERATORS:
                return True
            if type(node) is cst.SimpleString and node.evaluated_value == "params":
                return True
            if type(node) is cst.Name and depth < 2:
                found, bindings = self.lookup(node.value, scope)
                for binding in bindings or ():
                    if binding.kind is BindingKind.ASSIGN and self.iterates_parameters(binding.value, found,
                                                                                        depth + 1):
                        return True
        return False

    def changes_in_place(self, fdef: cst.FunctionDef, name: str) -> bool:
        """``fdef``'s body changes ``name`` in place (``name.add_()``, ``name[i] = v``, ``name += v``,
        ``name.attr = v``)."""
        key = (id(fdef), name)
        if key not in self._changed:
            self._changed[key] = any(_writes_name(node, name) for node in walk(fdef.body))
        return self._changed[key]


def _assigned(name: cst.Name):
    """What ``name = value`` or ``a, name = x, value`` assigns to ``name`` (``None``: not such a target;
    an unmatched unpacking: the whole ``value``)."""
    up = parent(name)
    if type(up) is cst.AssignTarget:
        return parent(up).value
    if type(up) is not cst.Element or type(parent(up)) not in (cst.Tuple, cst.List) or \
            type(parent(parent(up))) is not cst.AssignTarget:
        return None
    elements, value = parent(up).elements, parent(parent(parent(up))).value
    if type(value) in (cst.Tuple, cst.List) and len(value.elements) == len(elements):
        return value.elements[list(elements).index(up)].value
    return value


def _within(node: cst.CSTNode, root: cst.CSTNode) -> bool:
    current = parent(node)
    while current is not None:
        if current is root:
            return True
        current = parent(current)
    return False


def _argument(call: cst.Call, name: str, position: Optional[int]):
    """The expression ``call`` passes for parameter ``name`` (at ``position``): ``None`` when it passes none,
    ``...`` when it cannot be told (``*args``, ``**kwargs``)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    if any(arg.star for arg in call.args):
        return ...
    plain = [arg for arg in call.args if arg.keyword is None]
    if position is not None and position < len(plain):
        return plain[position].value
    return None


def _writes_name(node: cst.CSTNode, name: str) -> bool:
    def is_name(n):
        return type(n) is cst.Name and n.value == name
    if type(node) is cst.Call and type(node.func) is cst.Attribute and is_inplace_method(node.func.attr.value):
        receiver = node.func.value
        while type(receiver) in (cst.Subscript, cst.Attribute) and not is_name(receiver):
            receiver = receiver.value
        return is_name(receiver)
    if type(node) is cst.AugAssign:
        return is_name(node.target) or (type(node.target) in (cst.Subscript, cst.Attribute)
                                        and is_name(node.target.value))
    if type(node) is cst.AssignTarget:
        return type(node.target) in (cst.Subscript, cst.Attribute) and is_name(node.target.value)
    return False
