"""Scopes and bindings of one file, collected in one read-only walk.

Flow-insensitive, as the rules need it: a name's bindings are every place its
scope binds it, in source order, and a value is the join of what they bind.
Python's scoping rules are followed where they matter for that: class bodies
do not enclose their methods, comprehensions and lambdas have their own
bindings, ``global``/``nonlocal`` send a name to the scope that owns it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import libcst as cst

from codemods.names import dotted
from codemods.walk import children

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
SCOPE_NODES = (cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda, *COMPREHENSIONS)
STATEMENTS = frozenset({cst.SimpleStatementLine, cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar,
                        cst.FunctionDef, cst.ClassDef, cst.Match})


class BindingKind(enum.Enum):
    ASSIGN = "assign"  # ``x = v`` / ``x: T = v`` (value: ``v``)
    UNPACK = "unpack"  # ``a, b = v`` (value: ``v``, index: the element; ``None`` after a starred one)
    AUGMENTED = "augmented"  # ``x += v`` (value: the AugAssign)
    FOR = "for"  # a ``for`` or comprehension target (value: the iterable; index as for UNPACK)
    WITH = "with"  # ``with e as x`` (value: ``e``)
    PARAMETER = "parameter"  # (value: the default, or ``None``; node: the Param)
    IMPORT = "import"  # (node: the ImportAlias)
    FUNCTION = "function"  # ``def`` (node: the FunctionDef)
    CLASS = "class"  # (node: the ClassDef)
    EXCEPT = "except"  # ``except E as x``
    WALRUS = "walrus"  # ``(x := v)`` (value: ``v``)
    DELETE = "delete"  # ``del x``


class Binding(NamedTuple):
    """One place a scope binds a name (a named tuple, not a frozen dataclass: a file makes thousands, and a
    frozen dataclass's ``__init__`` costs three times as much)."""

    name: str
    kind: BindingKind
    value: Optional[cst.CSTNode]  # what the binding binds from (see BindingKind)
    node: cst.CSTNode  # the statement, Param, alias or definition that binds
    index: Optional[int] = None  # UNPACK/FOR: the target's position in the unpacked value
    order: int = 0  # its position in the walk, which visits statements in source order (``SemanticModel.span``)


@dataclass(eq=False)
class Scope:
    """One module, function, lambda, class body or comprehension."""

    node: cst.CSTNode
    parent: Optional["Scope"]  # the enclosing scope whose names this one sees (never a class body)
    cls: Optional[cst.ClassDef] = None  # a method's class
    bindings: Dict[str, List[Binding]] = field(default_factory=dict)
    declared: Dict[str, str] = field(default_factory=dict)  # name -> "global" / "nonlocal"
    # Uses of a name in this function (its comprehensions and lambdas count as the function):
    # attributes read on it, "[0]"/"[]" for subscripts, "[]=" for item assignments, "()" when called.
    uses: Dict[str, Set[str]] = field(default_factory=dict)
    passed: Dict[str, List[cst.Call]] = field(default_factory=dict)  # name -> calls it is a plain argument of
    returns: List[cst.BaseExpression] = field(default_factory=list)  # a function's ``return`` values
    backward: Set[str] = field(default_factory=set)  # ``name.backward()`` without a gradient: one value
    # ``a.b = v`` / ``a.b += v`` (also inside an unpacked target), by dotted target (``"args.cuda"``):
    attributes: Dict[str, List[Binding]] = field(default_factory=dict)

    @property
    def is_function(self) -> bool:
        return type(self.node) in (cst.FunctionDef, cst.Lambda)


class CallSite(NamedTuple):  # a named tuple, as ``Binding``
    call: cst.Call
    scope: Scope


def target_names(target: cst.CSTNode) -> Iterator[Tuple[cst.Name, Optional[int], bool]]:
    """(name, index in the unpacked value or ``None``, whether the name is the whole target) of a target."""
    if type(target) is cst.Name:
        yield target, None, True
    elif type(target) in (cst.Tuple, cst.List):
        starred = False
        for index, element in enumerate(target.elements):
            value = element.value
            starred = starred or type(element) is cst.StarredElement
            if type(value) is cst.Name:
                yield value, None if starred else index, False
            else:
                for name, _, _ in target_names(value):
                    yield name, None, False
    elif type(target) is cst.StarredElement:
        for name, _, _ in target_names(target.value):
            yield name, None, False


class Collector:
    """The walk: fills scopes, bindings, uses, class attributes and call sites of a ``SemanticModel``."""

    def __init__(self, module: cst.Module):
        self.module_scope = Scope(module, None)
        self.scopes: Dict[int, Scope] = {id(module): self.module_scope}  # id(scope node) -> Scope
        self.assigned: Dict[str, List[Tuple[Scope, cst.CSTNode]]] = {}  # name -> every value assigned to it
        self.self_attributes: Dict[Tuple[int, str], List[Tuple[Scope, cst.CSTNode]]] = {}  # (id(class), attr)
        self.calls: Dict[str, List[CallSite]] = {}  # function name -> calls ``name(...)``
        self.escapes: Set[str] = set()  # names used as values (passed, assigned, returned): calls not all seen
        self.has: Set[str] = set()  # attribute names read anywhere (``has_attribute``)
        self.creates_graph = False  # some call passes ``create_graph=``: a ``.grad`` may carry a graph
        self.names: Dict[str, int] = {}  # name -> how many ``Name`` nodes read or store it as a variable
        self.all_calls: List[cst.Call] = []  # every call, in the walk's order
        self.assign_nodes: List[cst.Assign] = []  # every ``=`` statement, in source order
        self.spans: Dict[int, Tuple[int, int]] = {}  # id(statement) -> (its first, its last position)
        self.statement_scopes: Dict[int, Scope] = {}  # id(statement) -> the scope it stands in (``scope_of``)
        self.count = 0  # the walk's position: one more for each node it enters
        self._stack: List[Scope] = [self.module_scope]
        self._run(module)

    # -- the walk -------------------------------------------------------------------------------
    def _run(self, node: cst.CSTNode) -> None:
        self.count += 1
        start = self.count
        handler = _HANDLERS.get(type(node))
        if handler is None or handler(self, node) is not False:
            for child in children(node):
                self._run(child)
        if type(node) in STATEMENTS:
            self.spans[id(node)] = (start, self.count)
            self.statement_scopes[id(node)] = self._stack[-1]

    @property
    def scope(self) -> Scope:
        return self._stack[-1]

    def _uses_scope(self) -> Scope:
        scope = self.scope
        while type(scope.node) in COMPREHENSIONS or type(scope.node) is cst.Lambda:
            scope = scope.parent
        return scope

    def _open(self, node: cst.CSTNode, cls: Optional[cst.ClassDef] = None) -> Scope:
        parent = self.scope
        while type(parent.node) is cst.ClassDef:  # a class body's names are not seen by its methods
            parent = parent.parent
        scope = Scope(node, parent, cls)
        self.scopes[id(node)] = scope
        self._stack.append(scope)
        return scope

    def bind(self, name: str, kind: BindingKind, value: Optional[cst.CSTNode], node: cst.CSTNode,
             index: Optional[int] = None, scope: Optional[Scope] = None) -> None:
        scope = scope or self.scope
        declared = scope.declared.get(name)
        if declared == "global":
            scope = self.module_scope
        elif declared == "nonlocal":
            outer = scope.parent
            while outer is not None and name not in outer.bindings and outer is not self.module_scope:
                outer = outer.parent
            scope = outer or scope
        scope.bindings.setdefault(name, []).append(Binding(name, kind, value, node, index, self.count))
        self.names.setdefault(name, 0)
        if kind is BindingKind.ASSIGN:
            self.assigned.setdefault(name, []).append((scope, value))

    def bind_target(self, target: cst.CSTNode, kind: BindingKind, value: Optional[cst.CSTNode],
                    node: cst.CSTNode, scope: Optional[Scope] = None) -> None:
        for name, index, whole in target_names(target):
            if whole:
                self.bind(name.value, kind, value, node, scope=scope)
            else:
                unpack = BindingKind.UNPACK if kind is BindingKind.ASSIGN else kind
                self.bind(name.value, unpack, value, node, index, scope=scope)
        self._bind_attributes(target, kind, value, node, scope or self.scope)
        if (kind is BindingKind.ASSIGN and type(target) is cst.Attribute and type(target.value) is cst.Name
                and target.value.value == "self"):
            cls = self._uses_scope().cls
            if cls is not None:
                self.self_attributes.setdefault((id(cls), target.attr.value), []).append((self.scope, value))

    def _bind_attributes(self, target: cst.CSTNode, kind: BindingKind, value: Optional[cst.CSTNode],
                         node: cst.CSTNode, scope: Scope) -> None:
        """``a.b = v``: a binding of ``"a.b"`` in ``scope.attributes`` (an element of an unpacked target: UNPACK)."""
        if type(target) is cst.Attribute:
            name = dotted(target)
            if name is not None:
                scope.attributes.setdefault(name, []).append(Binding(name, kind, value, node, None, self.count))
        elif type(target) in (cst.Tuple, cst.List, cst.StarredElement):
            unpack = BindingKind.UNPACK if kind is BindingKind.ASSIGN else kind
            for element in (target.elements if type(target) is not cst.StarredElement else (target,)):
                self._bind_attributes(element.value, unpack, value, node, scope)

    def _use(self, name: str, what: str) -> None:
        self._uses_scope().uses.setdefault(name, set()).add(what)

    # -- handlers (returning False skips the children) ------------------------------------------------
    def _function(self, node: cst.FunctionDef) -> None:
        self.bind(node.name.value, BindingKind.FUNCTION, None, node)
        for decorator in node.decorators:
            self._run(decorator)
        enclosing = self.scope
        for param in _parameters(node.params):
            if param.default is not None:
                self._run(param.default)
        cls = enclosing.node if type(enclosing.node) is cst.ClassDef else None
        scope = self._open(node, cls)
        for param in _parameters(node.params):
            self.bind(param.name.value, BindingKind.PARAMETER, param.default, param, scope=scope)
        self._run(node.body)
        self._stack.pop()
        return False

    def _lambda(self, node: cst.Lambda) -> bool:
        for param in _parameters(node.params):
            if param.default is not None:
                self._run(param.default)
        scope = self._open(node)
        for param in _parameters(node.params):
            self.bind(param.name.value, BindingKind.PARAMETER, param.default, param, scope=scope)
        self._run(node.body)
        self._stack.pop()
        return False

    def _class(self, node: cst.ClassDef) -> bool:
        self.bind(node.name.value, BindingKind.CLASS, None, node)
        for part in (*node.decorators, *node.bases, *node.keywords):
            self._run(part)
        self._open(node)
        self._run(node.body)
        self._stack.pop()
        return False

    def _comprehension(self, node: cst.CSTNode) -> bool:
        # The first iterable is evaluated outside; everything else inside the comprehension's scope.
        first = node.for_in
        self._run(first.iter)
        scope = self._open(node)
        inner = first
        while inner is not None:
            if inner is not first:
                self._run(inner.iter)
            self.bind_target(inner.target, BindingKind.FOR, inner.iter, inner, scope=scope)
            for condition in inner.ifs:
                self._run(condition)
            inner = inner.inner_for_in
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                self._run(getattr(node, part))
        self._stack.pop()
        return False

    def _assign(self, node: cst.Assign) -> None:
        self.assign_nodes.append(node)
        for target in node.targets:
            self.bind_target(target.target, BindingKind.ASSIGN, node.value, node)
            self._item_write(target.target)
        if type(node.value) is cst.Name:
            self.escapes.add(node.value.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind_target(node.target, BindingKind.ASSIGN, node.value, node)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self._item_write(node.target)
        if type(node.target) is cst.Name:
            self.bind(node.target.value, BindingKind.AUGMENTED, node, node)
        else:
            self._bind_attributes(node.target, BindingKind.AUGMENTED, node, node, self.scope)

    def _for(self, node: cst.For) -> None:
        self.bind_target(node.target, BindingKind.FOR, node.iter, node)

    def _with_item(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind_target(node.asname.name, BindingKind.WITH, node.item, node)

    def _except(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.bind_target(node.name.name, BindingKind.EXCEPT, None, node)

    def _walrus(self, node: cst.NamedExpr) -> None:
        self.bind_target(node.target, BindingKind.WALRUS, node.value, node, scope=self._uses_scope())

    def _delete(self, node: cst.Del) -> None:
        self.bind_target(node.target, BindingKind.DELETE, None, node)

    def _import(self, node: cst.CSTNode) -> bool:
        if type(node.names) is cst.ImportStar:
            return False
        for alias in node.names:
            if alias.asname is not None:
                local = alias.asname.name.value
            elif type(node) is cst.Import:
                local = (dotted(alias.name) or "").split(".")[0]
            else:
                local = alias.name.value
            self.bind(local, BindingKind.IMPORT, None, alias)
        return False

    def _declare(self, node: cst.CSTNode) -> None:
        word = "global" if type(node) is cst.Global else "nonlocal"
        for item in node.names:
            self.scope.declared[item.name.value] = word

    def _return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._uses_scope().returns.append(node.value)
            if type(node.value) is cst.Name:
                self.escapes.add(node.value.value)

    def _call(self, node: cst.Call) -> None:
        self.all_calls.append(node)
        func = node.func
        if type(func) is cst.Name:
            self.calls.setdefault(func.value, []).append(CallSite(node, self.scope))
            self._use(func.value, "()")
        elif (type(func) is cst.Attribute and func.attr.value == "backward" and type(func.value) is cst.Name
              and not any(a.keyword is None or a.keyword.value == "gradient" for a in node.args)):
            self._uses_scope().backward.add(func.value.value)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "create_graph":
                self.creates_graph = True
            if type(arg.value) is cst.Name:
                self._uses_scope().passed.setdefault(arg.value.value, []).append(node)
                self.escapes.add(arg.value.value)

    def _element(self, node: cst.CSTNode) -> None:
        """A name stored in a list, tuple, set or dict (``helpers = [to_var]``) may be called from anywhere."""
        if type(node.value) is cst.Name:
            self.escapes.add(node.value.value)

    def _attribute(self, node: cst.Attribute) -> bool:
        self.has.add(node.attr.value)
        if type(node.value) is cst.Name:
            self._use(node.value.value, node.attr.value)
        self._run(node.value)  # ``attr`` is no variable
        return False

    def _arg(self, node: cst.Arg) -> bool:
        self._run(node.value)  # nor is a keyword
        return False

    def _name(self, node: cst.Name) -> None:
        self.names[node.value] = self.names.get(node.value, 0) + 1

    def _subscript(self, node: cst.Subscript) -> None:
        if type(node.value) is cst.Name:
            self._use(node.value.value, "[0]" if index_value(node) == 0 else "[]")

    def _item_write(self, target: cst.CSTNode) -> None:
        if type(target) is cst.Subscript and type(target.value) is cst.Name:
            self._use(target.value.value, "[]=")


_HANDLERS = {
    cst.FunctionDef: Collector._function, cst.Lambda: Collector._lambda, cst.ClassDef: Collector._class,
    **{node_type: Collector._comprehension for node_type in COMPREHENSIONS},
    cst.Assign: Collector._assign, cst.AnnAssign: Collector._ann_assign, cst.AugAssign: Collector._aug_assign,
    cst.For: Collector._for, cst.WithItem: Collector._with_item, cst.ExceptHandler: Collector._except,
    cst.NamedExpr: Collector._walrus, cst.Del: Collector._delete, cst.Import: Collector._import,
    cst.ImportFrom: Collector._import, cst.Global: Collector._declare, cst.Nonlocal: Collector._declare,
    cst.Return: Collector._return, cst.Call: Collector._call, cst.Attribute: Collector._attribute,
    cst.Subscript: Collector._subscript, cst.Arg: Collector._arg, cst.Name: Collector._name,
    cst.Element: Collector._element, cst.DictElement: Collector._element,
}


def _parameters(params: cst.Parameters) -> List[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [star for star in (params.star_arg, params.star_kwarg) if type(star) is cst.Param]
    return found


def index_value(subscript: cst.Subscript) -> Optional[int]:
    """``n`` for ``x[n]`` (a single non-negative integer index), else ``None``."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
        return None
    value = subscript.slice[0].slice.value
    return int(value.value) if type(value) is cst.Integer and value.value.isdigit() else None
