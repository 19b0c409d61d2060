"""What the hazards family knows about a file: its scopes' bindings and uses in execution order, no-grad
regions, frozen modules, ``backward()`` calls (``Facts``), and the syntax helpers its analyses share."""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from codemods import torchapi
from codemods.base import FileContext
from codemods.model import BindingKind, GradMode, context_mode
from codemods.names import dotted
from codemods.syntax import argument, literal, method_name
from codemods.torchapi import (AUTOGRAD_CALLS, IDENTITY_METHODS, INPUT_GRADIENTS, MODULE_SELF_METHODS,
                               NOT_MODULE_CLASSES, OPTIMIZERS, PARAMETER, VARIABLE)
from codemods.walk import children, parent




# Builtins whose result carries no graph forward (values, sizes, printing).
PLAIN_BUILTINS = frozenset({"print", "len", "int", "float", "str", "repr", "bool", "isinstance", "type", "format",
                            "id", "hash", "range", "round", "abs", "min", "max", "sum"})
# Methods whose result carries no graph from the receiver (``zero_``/``fill_`` overwrite it).
SCALAR_METHODS = torchapi.VALUE_METHODS | {"zero_", "fill_"}
# Names of functions where autograd checks are deliberate.
DEBUG_WORDS = ("debug", "anomal", "detect", "check", "verify")
TYPOS = {"require_grad": "requires_grad", "require_grad_": "requires_grad_"}

Scope = cst.CSTNode  # Module, FunctionDef, Lambda or ClassDef
Chain = Tuple[cst.CSTNode, ...]  # enclosing scopes, innermost first
Binding = Tuple[str, Optional[cst.CSTNode], cst.CSTNode]  # (kind, value, statement or target)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# Nodes with nothing under them for an analysis to find (or whose bodies run later).
_INERT = frozenset({cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Lambda,
                    cst.FunctionDef, cst.ClassDef})


# ---------------------------------------------------------------------------
# Small syntax helpers
# ---------------------------------------------------------------------------



def last_name(name: Optional[str]) -> str:
    return (name or "").rpartition(".")[2]


def is_class_name(name: str) -> bool:
    """A class name (``Linear``, ``LSTM``): called, it constructs an object."""
    return name[:1].isupper()



def module_path(node: cst.CSTNode) -> str:
    """The dotted module path an expression reaches: ``model.features`` for ``model.features[0]``."""
    parts: List[str] = []
    while True:
        if isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        elif isinstance(node, cst.Subscript):
            parts = []
            node = node.value
        elif isinstance(node, cst.Name):
            parts.append(node.value)
            return ".".join(reversed(parts))
        else:
            return ""


def covers(paths: Iterable[str], path: str) -> bool:
    return any(p == path or path.startswith(p + ".") or p.startswith(path + ".") for p in paths)


def bound_targets(target: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The Name / Attribute nodes a target binds (tuple targets unpacked)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from bound_targets(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from bound_targets(target.value)
    elif isinstance(target, (cst.Name, cst.Attribute)):
        yield target


DEFERRED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})  # bodies that run later, if at all


def running_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` that runs with it (not the bodies of nested functions, classes, lambdas)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in reversed(children(current)) if type(child) not in DEFERRED)


def statements(body: cst.CSTNode) -> List[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    return []


def blocks(stmt: cst.CSTNode) -> List[cst.CSTNode]:
    """The blocks of a compound statement (bodies, else, handlers, finally), in order."""
    blocks: List[cst.CSTNode] = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if isinstance(part, cst.If):
            blocks.append(cst.IndentedBlock(body=[part]))
        elif isinstance(part, (cst.Else, cst.Finally)):
            blocks.append(part.body)
        elif isinstance(part, cst.BaseSuite):
            blocks.append(part)
    for handler in getattr(stmt, "handlers", ()):
        blocks.append(handler.body)
    return blocks


def grad_switch(qualname: Callable[[cst.CSTNode], Optional[str]], expr: cst.CSTNode) -> object:
    """``False`` for a context/decorator that turns grad off, ``True`` for one that turns it on, ``...`` for
    ``set_grad_enabled(<not a literal>)``, ``None`` for anything else (the model's ``context_mode``)."""
    return {GradMode.OFF: False, GradMode.ON: True, GradMode.SWITCHED: ...}.get(context_mode(qualname, expr))


# ---------------------------------------------------------------------------
# What the file says about its names (collected once, shared by every TM6xx rule)
# ---------------------------------------------------------------------------
class Facts:
    """Bindings and uses per scope, classes, no-grad regions, frozen modules, backward calls."""

    def __init__(self, ctx: FileContext):
        self.module = module = ctx.module
        self.qualname = ctx.qualname
        self.assignments: Dict[int, list] = {}  # id(region) -> ``carry.carry_assignments`` there
        self.calls: List[cst.Call] = []  # every call the walk meets (all those any node runs)
        self.flow_nodes: List[cst.CSTNode] = []  # where ``Flow`` records or binds: see ``_walk_flow_node``,
        # and the in-place writes it checks: augmented assignments, assignments to an item
        self._runners: Dict[str, Set[int]] = {}  # what a node runs -> ids of the nodes that run it
        self.param_names: Dict[int, Set[str]] = {}  # id(scope) -> ``param_names`` of that scope
        self.function_of: Dict[int, Optional[cst.FunctionDef]] = {}
        self.model = ctx.model
        self._chains: Dict[int, Chain] = {}
        self._resolved: Dict[Tuple[str, int, int], Scope] = {}  # (name, id(chain[0]), id(chain[-1])) -> scope
        self.scope_nodes: List[Scope] = [module]  # the module, classes, functions and lambdas
        self._loads: List[Tuple[cst.Name, Chain]] = []
        self._uses: Optional[Dict[Tuple[int, str], List[Tuple[cst.Name, Chain]]]] = None
        self.functions: List[cst.FunctionDef] = []
        self.classes: Dict[str, cst.ClassDef] = {}
        self.class_of: Dict[int, cst.ClassDef] = {}  # id(method) -> class
        self.self_attrs: Dict[Tuple[str, str], List[Tuple[cst.CSTNode, cst.FunctionDef]]] = {}
        self.attr_stores: Dict[str, List[cst.CSTNode]] = {}  # attr -> assigned Attribute targets
        self.nograd_functions: Set[int] = set()  # id(FunctionDef) whose body runs without grad
        self.nograd_names: Set[str] = set()  # names referenced inside no-grad blocks
        self.freeze_paths: Set[str] = set()
        self.class_freezes: Dict[str, Set[str]] = {}
        self.freeze_all = False
        self.backwards: List[Tuple[cst.Call, Chain]] = []
        self.input_gradients = False  # the file calls torch.autograd.grad / autograd.functional / torch.func
        self.loops: List[Tuple[cst.CSTNode, Chain]] = []
        self._stores: Set[int] = set()
        self.requires_grad_statements: List[Tuple[cst.CSTNode, str]] = []  # x.requires_grad_() / = True
        self.first_uses: Dict[Tuple[int, ...], Dict[str, bool]] = {}  # region -> name -> read before bound
        self.defines_typo = False  # the file has its own `require_grad` attribute, parameter or method
        self._freezes: List[Tuple[cst.CSTNode, Chain, Optional[cst.FunctionDef]]] = []
        self._walk(module, (module,), False, None)
        self.binds, self.bound, self.scopes = self._bindings()
        for tensor, chain, function in self._freezes:  # they need the parent links of the whole file
            self._freeze(tensor, chain, function)
        self.module_classes = self._module_classes()
        with_backward = {id(chain[0]) for _, chain in self.backwards}
        self.backward_functions = {fn.name.value for fn in self.functions if id(fn) in with_backward}

    # -- collection ---------------------------------------------------------------
    def _target(self, target: cst.CSTNode, kind: str, value, chain: Chain, where: cst.CSTNode, function) -> None:
        if type(target) is cst.Name:  # ``type(...) is``: node classes are final, their isinstance is slow
            self._stores.add(id(target))
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                self._target(element.value, kind if kind in ("for", "comp", "with") else "unpack",
                             value, chain, where, function)
        elif type(target) is cst.StarredElement:
            self._target(target.value, "unpack", value, chain, where, function)
        elif type(target) is cst.Attribute:
            self.attr_stores.setdefault(target.attr.value, []).append(target)
            self.defines_typo |= target.attr.value in TYPOS and dotted(target.value) == "self"
            owner = self.class_of.get(id(function)) if function is not None else None
            name = dotted(target)
            if owner is not None and name and name.count(".") == 1 and name.startswith(self_name(function) + "."):
                self.self_attrs.setdefault((owner.name.value, target.attr.value), []).append(
                    (value if kind == "value" else None, function))

    def _walk(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> None:
        """Record what ``node`` binds, reads and calls; ``chain``: its scopes; ``nograd``: inside no_grad."""
        handler = WALKERS.get(type(node))
        if handler is not None and handler(self, node, chain, nograd, function):
            return  # the handler walked what it needed
        for child in children(node):  # the commonest children are taken here, without a call of ``_walk``
            kind = type(child)
            if kind is cst.Arg:
                child = child.value  # as ``_walk_arg``: not the keyword
                kind = type(child)
            if kind is cst.Name:
                self._walk_name(child, chain, nograd, function)
            elif kind not in _LITERALS:
                self._walk(child, chain, nograd, function)

    def _walk_class(self, node: cst.ClassDef, chain: Chain, nograd: bool, function) -> bool:
        self.scope_nodes.append(node)
        self.classes.setdefault(node.name.value, node)
        for part in (*node.bases, *node.keywords, *node.decorators):
            self._walk(part, chain, nograd, function)
        self._walk(node.body, (node, *chain), nograd, function)
        return True

    def _walk_lambda(self, node: cst.Lambda, chain: Chain, nograd: bool, function) -> bool:
        inner = (node, *chain)
        self.scope_nodes.append(node)
        self._walk(node.body, inner, nograd, function)
        return True

    def _walk_import(self, node: Union[cst.Import, cst.ImportFrom], chain: Chain, nograd: bool, function) -> bool:
        for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
            local = alias.asname.name if alias.asname else alias.name
            while isinstance(local, cst.Attribute):
                local = local.value
            if isinstance(local, cst.Name):
                self._stores.add(id(local))
        return True

    def _walk_attribute(self, node: cst.Attribute, chain: Chain, nograd: bool, function) -> bool:
        if node.attr.value == "grad":
            self.flow_nodes.append(node)
        if nograd:
            self.nograd_names.add(node.attr.value)
        self._walk(node.value, chain, nograd, function)
        return True

    def _walk_arg(self, node: cst.Arg, chain: Chain, nograd: bool, function) -> bool:
        self._walk(node.value, chain, nograd, function)
        return True

    def _walk_name(self, node: cst.Name, chain: Chain, nograd: bool, function) -> bool:
        if id(node) not in self._stores:
            self._loads.append((node, chain))
            if nograd:
                self.nograd_names.add(node.value)
        return True

    def _walk_assign(self, node: cst.Assign, chain: Chain, nograd: bool, function) -> bool:
        for target in node.targets:
            self._target(target.target, "value", node.value, chain, node, function)
            if _writes_item(target.target):
                self.flow_nodes.append(node)
        self._freeze_assign(node, chain, function)
        target = node.targets[0].target
        if (len(node.targets) == 1 and literal(node.value) is True and isinstance(target, cst.Attribute)
                and target.attr.value == "requires_grad" and isinstance(target.value, cst.Name)):
            self.requires_grad_statements.append((node, target.value.value))
        return False

    def _walk_expr(self, node: cst.Expr, chain: Chain, nograd: bool, function) -> bool:
        if method_name(node.value) == "requires_grad_" and isinstance(node.value.func.value, cst.Name):
            flag = argument(node.value, "requires_grad", 0)
            if flag is None or literal(flag.value) is True:
                self.requires_grad_statements.append((node, node.value.func.value.value))
        return False

    def _walk_binding(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> bool:
        """Annotated/augmented assignments, loops, comprehensions, walrus, with and except targets."""
        kind = type(node)
        if kind is cst.AnnAssign and node.value is not None:
            self._target(node.target, "value", node.value, chain, node, function)
        elif kind is cst.AugAssign:
            self.flow_nodes.append(node)
            if type(node.target) is cst.Name:
                self._loads.append((node.target, chain))
            self._target(node.target, "aug", node, chain, node, function)
        elif kind is cst.For:
            self._target(node.target, "for", node.iter, chain, node, function)
            self.loops.append((node, chain))
        elif kind is cst.While:
            self.loops.append((node, chain))
        elif kind is cst.CompFor:
            self._target(node.target, "comp", node.iter, chain, node, function)
        elif kind is cst.NamedExpr:
            self._target(node.target, "value", node.value, chain, node, function)
        elif kind is cst.WithItem and node.asname is not None:
            self._target(node.asname.name, "with", node.item, chain, node, function)
        elif kind is cst.ExceptHandler and node.name is not None:
            self._target(node.name.name, "with", None, chain, node, function)
        return False

    def _walk_with(self, node: cst.With, chain: Chain, nograd: bool, function) -> bool:
        modes = [grad_switch(self.qualname, item.item) for item in node.items]
        for item in node.items:
            self._walk(item, chain, nograd, function)
        inner = nograd
        if False in modes or ... in modes:
            inner = True  # (maybe) no grad: nothing assigned inside counts as carrying a graph
        elif True in modes:
            inner = False
        self._walk(node.body, chain, inner, function)
        return True

    def _walk_flow_node(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> bool:
        """A starred element or a comprehension (with ``.grad`` reads and calls): ``Flow`` scans only what
        runs one of them."""
        self.flow_nodes.append(node)
        return False

    def _walk_skip(self, node: cst.CSTNode, chain: Chain, nograd: bool, function) -> bool:
        return True  # global / nonlocal

    def _function(self, node: cst.FunctionDef, chain: Chain, nograd: bool, function=None) -> bool:
        self.scope_nodes.append(node)
        self.functions.append(node)
        self.defines_typo |= node.name.value in TYPOS or any(p.name.value in TYPOS for p in parameters_of(node.params))
        if isinstance(chain[0], cst.ClassDef):
            self.class_of[id(node)] = chain[0]
        off = nograd or any(grad_switch(self.qualname, d.decorator) is False for d in node.decorators)
        if off:
            self.nograd_functions.add(id(node))
        for decorator in node.decorators:
            self._walk(decorator, chain, nograd, None)
        inner = (node, *chain)
        for param in parameters_of(node.params):
            if param.default is not None:
                self._walk(param.default, chain, nograd, None)
        self._walk(node.body, inner, off, node)
        return True

    def _call(self, node: cst.Call, chain: Chain, nograd: bool, function) -> bool:
        self.calls.append(node)
        method = method_name(node)
        qualified = self.qualname(node.func)
        if _backward(node, qualified):
            self.backwards.append((node, chain))
        if (qualified or "").startswith(INPUT_GRADIENTS):
            self.input_gradients = True
        if method == "requires_grad_":
            flag = argument(node, "requires_grad", 0)
            if flag is not None and literal(flag.value) is not True:
                self._freezes.append((node.func.value, chain, function))
        return False

    def _freeze_assign(self, node: cst.Assign, chain: Chain, function) -> None:
        for target in node.targets:
            target = target.target
            if (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                    and literal(node.value) is not True):
                self._freezes.append((target.value, chain, function))

    def _freeze(self, tensor: cst.CSTNode, chain: Chain, function) -> None:
        """Record which module paths ``tensor.requires_grad = False`` (or a flag) may freeze."""
        path = module_path(tensor)
        if isinstance(tensor, cst.Name):
            loop = self._enclosing_for(tensor.value, tensor)
            if loop is not None:  # for p in model.parameters() / zip(a.parameters(), b.parameters()): all of them
                sources = [module_path(n.func.value) for n in running_nodes(loop.iter)
                           if method_name(n) in ("parameters", "named_parameters")]
                if sources and all(sources):
                    for source in sources:
                        self._freeze_path(source, function)
                    return
                path = ""
            elif self._tensor_bindings(tensor.value, chain):
                return  # a plain tensor: Flow follows it
        self._freeze_path(path, function)

    def _freeze_path(self, path: str, function) -> None:
        if not path:
            self.freeze_all = True
        elif path == "self" or path.startswith("self."):
            owner = self.class_of.get(id(function)) if function is not None else None
            if owner is None:
                self.freeze_all = True
            else:
                self.class_freezes.setdefault(owner.name.value, set()).add(path)
        else:
            self.freeze_paths.add(path)

    def _enclosing_for(self, name: str, node: cst.CSTNode) -> Optional[cst.For]:
        current = parent(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, cst.For) and any(
                    isinstance(t, cst.Name) and t.value == name for t in bound_targets(current.target)):
                return current
            current = parent(current)
        return None

    def _tensor_bindings(self, name: str, chain: Chain) -> bool:
        binds = self.binds.get((id(chain[0]), name), [])
        return bool(binds) and all(kind == "value" and is_tensor_source(self.qualname, value)
                                   for kind, value, _ in binds)

    @property
    def uses(self) -> Dict[Tuple[int, str], List[Tuple[cst.Name, Chain]]]:
        """(id(scope), name) -> the reads of the name that refer to that scope's binding, in source order;
        resolved when first asked (most files never ask)."""
        if self._uses is None:
            self._uses = {}
            for name, chain in self._loads:
                scope = self.resolve(name.value, chain)
                self._uses.setdefault((id(scope), name.value), []).append((name, chain))
        return self._uses

    # -- scopes and bindings: the semantic model's, in the family's terms ---------------------------
    def _model_scope(self, node: Scope):
        return self.model.module_scope if type(node) is cst.Module else self.model.scope_of_definition(node)

    def _bindings(self):
        """(scope, name) -> [(kind, value, where)], scope -> names, id -> scope node, from the model's bindings
        (comprehensions' own targets stay in their comprehensions)."""
        binds: Dict[Tuple[int, str], List[Binding]] = {}
        bound: Dict[int, Set[str]] = {}
        scopes: Dict[int, Scope] = {}
        for node in self.scope_nodes:
            scopes[id(node)] = node
            for name, found in self._model_scope(node).bindings.items():
                converted = []
                for binding in found:
                    convert = _BINDING_KINDS.get(binding.kind)  # one hash of the enum: its __hash__ is Python's
                    if convert is not None:
                        converted.append(convert(binding))
                if converted:
                    binds[(id(node), name)] = converted
                    bound.setdefault(id(node), set()).add(name)
        return binds, bound, scopes

    def chain(self, node: cst.CSTNode) -> Chain:
        """The scopes ``node`` sees, innermost first (a method's class after it; comprehensions are their
        function's): the model's scopes as the family's chains."""
        key = id(node)
        if key not in self._chains:
            scope = self._model_scope(node) if type(node) in (cst.Module, cst.FunctionDef, cst.ClassDef,
                                                                cst.Lambda) else self.model.scope_of(node)
            nodes: List[Scope] = []
            while scope is not None:
                if type(scope.node) not in COMPREHENSIONS:
                    nodes.append(scope.node)
                if scope.cls is not None and type(scope.node) is cst.FunctionDef:
                    nodes.append(scope.cls)
                scope = scope.parent
            self._chains[key] = tuple(nodes)
        return self._chains[key]

    def resolve(self, name: str, chain: Chain) -> Scope:
        """The scope whose binding ``name`` refers to from ``chain`` (the module for globals and builtins);
        kept, as every read of the file asks."""
        key = (name, id(chain[0]), id(chain[-1]))
        scope = self._resolved.get(key)
        if scope is None:
            found, _ = self.model.lookup(name, self._model_scope(chain[0]))
            while found is not None and type(found.node) in COMPREHENSIONS:
                found = found.parent
            scope = self._resolved[key] = found.node if found is not None else chain[-1]
        return scope

    def bindings(self, name: str, chain: Chain) -> List[Binding]:
        return self.binds.get((id(self.resolve(name, chain)), name), [])

    # -- classes ------------------------------------------------------------------
    def _module_classes(self) -> Dict[str, bool]:
        """Local nn.Module subclasses -> whether every base is ``nn.Module`` or another such local class
        (then the file shows every method that can reset the module's state)."""
        result: Dict[str, bool] = {}
        changed = True
        while changed:
            changed = False
            for name, cls in self.classes.items():
                if name in result:
                    continue
                kinds = []
                for base in cls.bases:
                    qualified = self.qualname(base.value) or ""
                    if qualified == "torch.nn.Module" or qualified == "torch.nn.modules.module.Module":
                        kinds.append(True)
                    elif dotted(base.value) in result:
                        kinds.append(result[dotted(base.value)])
                    elif qualified.startswith("torch.nn."):
                        kinds.append(False)
                    else:
                        kinds.append(None)
                if any(k is not None for k in kinds):
                    result[name] = all(k is True for k in kinds)
                    changed = True
        return result

    def class_methods(self, cls_name: str) -> Set[str]:
        names: Set[str] = set()
        todo = [cls_name]
        while todo:
            cls = self.classes.get(todo.pop())
            if cls is None:
                continue
            names.update(s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef))
            todo.extend(dotted(b.value) for b in cls.bases if dotted(b.value) in self.classes)
        return names

    def _class_attr_bindings(self, cls_name: str, attr: str) -> Optional[List[Tuple[cst.CSTNode, cst.FunctionDef]]]:
        todo = [cls_name]
        while todo:
            name = todo.pop()
            if (name, attr) in self.self_attrs:
                return self.self_attrs[(name, attr)]
            cls = self.classes.get(name)
            if cls is not None:
                todo.extend(dotted(b.value) for b in cls.bases if dotted(b.value) in self.classes)
        return None

    def class_frozen(self, cls_name: str, path: str) -> bool:
        return covers(self.class_freezes.get(cls_name, ()), path)

    def frozen(self, expr: cst.CSTNode, owner: Optional[cst.ClassDef]) -> bool:
        """Whether the file may have frozen (``requires_grad = False``) the module reached by ``expr``."""
        if self.freeze_all:
            return True
        path = module_path(expr)
        if not path:
            return True
        if path == "self" or path.startswith("self."):
            return owner is None or self.class_frozen(owner.name.value, path)
        return covers(self.freeze_paths, path)

    # -- what a callee is -----------------------------------------------------------
    def callee(self, func: cst.CSTNode, chain: Chain) -> Optional[str]:
        """``"module"`` when ``func`` is a called object (a model, a layer, a passed-in callable),
        ``"function"`` for a def/lambda/method, ``None`` when the file does not tell."""
        if isinstance(func, cst.Name):
            binds = [b for b in self.bindings(func.value, chain) if b[0] != "import"]
            if not binds:
                return None
            if any(kind in ("def", "class") or isinstance(value, cst.Lambda) for kind, value, _ in binds):
                return "function"
            if any(kind == "param" for kind, _, _ in binds):
                return "module"
            if any(kind == "value" and self.constructs_module(value) for kind, value, _ in binds):
                return "module"
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = self._method_class(chain)
            if owner is not None and func.value.value == self_name(chain[0]):
                if func.attr.value in self.class_methods(owner.name.value):
                    return "function"
                if self._class_attr_bindings(owner.name.value, func.attr.value):
                    return "module"
        return None

    def _method_class(self, chain: Chain) -> Optional[cst.ClassDef]:
        for scope in chain:
            if isinstance(scope, cst.FunctionDef):
                return self.class_of.get(id(scope))
        return None

    def constructs_module(self, value: Optional[cst.CSTNode]) -> bool:
        while method_name(value) in MODULE_SELF_METHODS:
            value = value.func.value
        if not isinstance(value, cst.Call):
            return False
        qualified = self.qualname(value.func)
        if qualified is not None:
            if qualified.startswith(NOT_MODULE_CLASSES) or qualified.startswith("torch.nn.functional"):
                return False
            return is_class_name(last_name(qualified)) or qualified == "torch.load"
        name = dotted(value.func)
        return bool(name) and is_class_name(last_name(name))

    # -- backward -------------------------------------------------------------------
    def runs_backward(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` (a loop body, a call) calls backward, directly or through a local function."""
        return id(node) in self.running("backward", lambda: [*(call for call, _ in self.backwards), *(
            filter(self._calls_backward_function, self.calls) if self.backward_functions else ())])

    def detaches_in_place(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` calls ``.detach_()``."""
        return id(node) in self.running("detach_", lambda: (c for c in self.calls if method_name(c) == "detach_"))

    def running(self, what: str, nodes: Callable[[], Iterable[cst.CSTNode]]) -> Set[int]:
        """The ids of the nodes that run one of ``nodes()`` (have it among their ``running_nodes``): each of
        them and its ancestors up to the first def/class/lambda. Marked once per file (``what`` names the
        question) from what the walk met, instead of searching every region that is asked about."""
        found = self._runners.get(what)
        if found is None:
            found = self._runners[what] = set()
            for node in nodes():
                while node is not None and id(node) not in found:
                    found.add(id(node))
                    if type(node) in DEFERRED:
                        break  # what runs inside a def/class/lambda does not run with the code around it
                    node = parent(node)
        return found

    def _calls_backward_function(self, call: cst.Call) -> bool:
        func = call.func  # train_step(...) or self.train_step(...)
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            func = func.attr
        return type(func) is cst.Name and func.value in self.backward_functions

    def in_nograd(self, node: cst.CSTNode, chain: Chain) -> bool:
        if self.model.grad_mode(node) in (GradMode.OFF, GradMode.SWITCHED):  # a `with` that (maybe) turns it off
            return True
        return any(isinstance(s, cst.FunctionDef) and self.function_nograd(s) for s in chain)

    def function_nograd(self, function: cst.FunctionDef) -> bool:
        return id(function) in self.nograd_functions or function.name.value in self.nograd_names


WALKERS: Dict[type, Callable[..., bool]] = {
    cst.FunctionDef: Facts._function, cst.ClassDef: Facts._walk_class, cst.Lambda: Facts._walk_lambda,
    cst.Import: Facts._walk_import, cst.ImportFrom: Facts._walk_import, cst.Global: Facts._walk_skip,
    cst.Nonlocal: Facts._walk_skip, cst.Attribute: Facts._walk_attribute, cst.Arg: Facts._walk_arg,
    cst.Name: Facts._walk_name, cst.Assign: Facts._walk_assign, cst.Expr: Facts._walk_expr,
    cst.Call: Facts._call, cst.With: Facts._walk_with,
    **{kind: Facts._walk_flow_node for kind in (cst.StarredElement, *COMPREHENSIONS)},
    **{kind: Facts._walk_binding for kind in (cst.AnnAssign, cst.AugAssign, cst.For, cst.While, cst.CompFor,
                                              cst.NamedExpr, cst.WithItem, cst.ExceptHandler)},
}
# The model's binding kinds as the family's (kind, value, where).
_BINDING_KINDS = {
    BindingKind.ASSIGN: lambda b: ("value", b.value, b.node), BindingKind.WALRUS: lambda b: ("value", b.value, b.node),
    BindingKind.UNPACK: lambda b: ("unpack", b.value, b.node),
    BindingKind.AUGMENTED: lambda b: ("aug", b.value, b.node),
    BindingKind.FOR: lambda b: ("for", b.value, b.node), BindingKind.WITH: lambda b: ("with", b.value, b.node),
    BindingKind.EXCEPT: lambda b: ("with", None, b.node), BindingKind.PARAMETER: lambda b: ("param", None, b.node),
    BindingKind.IMPORT: lambda b: ("import", None, b.node), BindingKind.FUNCTION: lambda b: ("def", b.node, b.node),
    BindingKind.CLASS: lambda b: ("class", b.node, b.node),
}
_LITERALS = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString})  # nothing in them to record


def _writes_item(target: cst.CSTNode) -> bool:
    """An assignment target that is, or unpacks to, an item (``x[i] = ...``, ``a, x[i] = ...``)."""
    if type(target) in (cst.Tuple, cst.List):
        return any(_writes_item(element.value) for element in target.elements)
    if type(target) is cst.StarredElement:
        return _writes_item(target.value)
    return type(target) is cst.Subscript


def is_backward(qualname, call: cst.Call) -> bool:
    """``t.backward(...)`` (not a module function named backward), ``torch.autograd.backward/grad``."""
    return _backward(call, qualname(call.func))


def _backward(call: cst.Call, qualified: Optional[str]) -> bool:
    """``is_backward`` of a call whose callee's qualified name is known."""
    return (method_name(call) == "backward" and qualified is None) or qualified in AUTOGRAD_CALLS


def parameters_of(params: cst.Parameters) -> List[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


def self_name(function: Optional[cst.CSTNode]) -> str:
    if isinstance(function, cst.FunctionDef):
        params = function.params.posonly_params or function.params.params
        if params and not any(dotted(d.decorator) in ("staticmethod", "classmethod") for d in function.decorators):
            return params[0].name.value
    return "\0"


def is_tensor_source(qualname, value: Optional[cst.CSTNode]) -> bool:
    """A torch factory, ``Variable(...)`` or ``nn.Parameter(...)``, possibly moved or converted."""
    while method_name(value) in IDENTITY_METHODS or method_name(value) == "requires_grad_":
        value = value.func.value
    if not isinstance(value, cst.Call):
        return False
    qualified = qualname(value.func) or ""
    return qualified in VARIABLE or qualified in PARAMETER or is_factory(qualified)


def is_factory(qualified: str) -> bool:
    """``torch.zeros``, ``torch.FloatTensor``, ``torch.cuda.FloatTensor`` ...: a new tensor without history."""
    return qualified in torchapi.FACTORIES


def hazard_facts(ctx: FileContext) -> "Facts":
    """The file's facts, built once per file and shared by every TM6xx rule."""
    return ctx.analysis(Facts)


def sole_in_block(facts: Facts, stmt: cst.CSTNode) -> bool:
    block = parent(stmt)
    return isinstance(block, (cst.IndentedBlock, cst.Module)) and len(block.body) == 1


def statement_of(facts: Facts, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    current = node
    while current is not None and not isinstance(current, cst.BaseStatement):
        current = parent(current)
    return current if isinstance(current, cst.SimpleStatementLine) and len(current.body) == 1 else None


def requires_grad_source(facts: Facts, value: cst.CSTNode) -> bool:
    while method_name(value) in IDENTITY_METHODS:
        value = value.func.value
    if method_name(value) == "requires_grad_":
        flag = argument(value, "requires_grad", 0)
        return flag is None or literal(flag.value) is True
    if not isinstance(value, cst.Call):
        return False
    qualified = facts.qualname(value.func) or ""
    flag = argument(value, "requires_grad", 1 if qualified in PARAMETER else None)
    if qualified in PARAMETER:
        return flag is None or literal(flag.value) is True
    return flag is not None and literal(flag.value) is True


def is_optimizer_call(facts: Facts, call: cst.Call) -> bool:
    qualified = facts.qualname(call.func) or dotted(call.func) or ""
    last = last_name(qualified)
    return (qualified.startswith("torch.optim.") and is_class_name(last) and "lr_scheduler" not in qualified) or (
        last in OPTIMIZERS) or method_name(call) == "add_param_group"


def enclosing_loop(facts: Facts, node: cst.CSTNode, scope: Scope) -> Optional[Union[cst.For, cst.While]]:
    """The innermost loop around ``node`` within its scope."""
    current = parent(node)
    while current is not None and current is not scope:
        if isinstance(current, (cst.For, cst.While)):
            return current
        current = parent(current)
    return None


def test_or_debug(function: cst.FunctionDef) -> bool:
    """A test function, or one named for debugging: autograd checks there are deliberate."""
    name = function.name.value.lower().lstrip("_")
    return name.startswith("test") or any(word in name for word in DEBUG_WORDS)


