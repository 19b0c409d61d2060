"""What the TM4xx rules share: reading a call's arguments by parameter, rebuilding argument lists, and
spelling a replacement name the way the file imports it."""
from __future__ import annotations

from typing import ClassVar, FrozenSet, List, Optional, Sequence

import libcst as cst

from codemods.base import Rule
from codemods.names import CANONICAL, dotted
from codemods.syntax import expression, keyword


def with_args(call: cst.Call, args: List[cst.Arg]) -> cst.Call:
    """``call`` with ``args``; the original last argument's trailing comma (or none) ends the new list."""
    last_comma = call.args[-1].comma if call.args else cst.MaybeSentinel.DEFAULT
    fixed = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            fixed.append(arg.with_changes(comma=last_comma))
        elif isinstance(arg.comma, cst.MaybeSentinel):
            fixed.append(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            fixed.append(arg)
    return call.with_changes(args=fixed)


def flag(node: cst.BaseExpression):
    """``True``/``False``/``None``/0/1 as Python values; ``...`` (Ellipsis) when not such a literal."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Integer) and node.value in ("0", "1"):
        return bool(int(node.value))
    return ...


def argument(call: cst.Call, params: Sequence[str], name: str) -> Optional[cst.Arg]:
    """The argument ``call`` passes for parameter ``name`` of ``params`` (by keyword or position)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    positional = [a for a in call.args if a.keyword is None and not a.star]
    index = params.index(name) if name in params else len(positional)
    return positional[index] if index < len(positional) else None


def set_keyword(call: cst.Call, name: str, source: str) -> cst.Call:
    """``call`` with ``name=source`` last (replacing a ``name=`` it had)."""
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    return with_args(call, args + [keyword(name, cst.parse_expression(source))])


def keywords_of(call: cst.Call) -> List[str]:
    return [a.keyword.value for a in call.args if a.keyword is not None]


class TableRule(Rule):
    """A rule about the functions of ``table`` (qualified names). ``resolve`` tells which of them a reference
    may be without resolving most references, which the walk meets by the thousand: an attribute by its last
    name (``qualname`` keeps it, but for the aliases it canonicalises), a name by the file's imports (read once,
    when the rule is made for the file)."""

    table: ClassVar[FrozenSet[str]] = frozenset()
    last_names: ClassVar[FrozenSet[str]] = frozenset()  # of ``table``'s names and of the aliases of them

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        aliases = (alias for alias, qualified in CANONICAL.items() if qualified in cls.table)
        cls.last_names = frozenset(q.rpartition(".")[2] for q in (*cls.table, *aliases))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.imported = frozenset(local for local, full in ctx.imports.aliases.items()
                                  if CANONICAL.get(full, full) in self.table)

    def resolve(self, node: cst.CSTNode) -> Optional[str]:
        """``qualname(node)`` where it may be in ``table``; None where it cannot."""
        kind = type(node)
        if (kind is cst.Attribute and node.attr.value in self.last_names) or (
                kind is cst.Name and node.value in self.imported):
            return self.ctx.model.qualname(node)
        return None


def whole_reference(model, node: cst.CSTNode) -> bool:
    """``node`` (a Name or Attribute) is a use of the name it resolves to: not the head of a longer chain
    (the chain is the reference), not ``x.tanh``'s attribute or ``f(tanh=...)``'s keyword, not in an import."""
    parent = model.parent(node)
    if type(parent) is cst.Attribute and parent.value is node:
        return False
    if type(node) is cst.Name and (type(parent) is cst.Attribute and parent.attr is node
                                   or type(parent) is cst.Arg and parent.keyword is node):
        return False
    return not any(type(n) in (cst.Import, cst.ImportFrom) for n in model.ancestors(node))


class Spelling:
    """How a fix writes a qualified name in this file, and which import the old name came from."""

    def __init__(self, ctx):
        self.ctx = ctx

    def new(self, qualified: str, old: cst.CSTNode) -> cst.BaseExpression:
        """Call from a fix: the local spelling of ``qualified``, scheduling an import if needed. The old
        reference's own prefix is kept when it reaches the new name (``torch.nn.utils.clip_grad_norm`` ->
        ``torch.nn.utils.clip_grad_norm_``, not ``nn.utils...``)."""
        head = (dotted(old) or "").split(".")[0]
        imports = self.ctx.imports
        base = imports.aliases.get(head)
        if base is not None and not isinstance(old, cst.Name) and qualified.startswith(base + "."):
            return expression(head + qualified[len(base):])
        spelled = imports.local_name(qualified)
        if spelled is None:
            module, _, obj = qualified.rpartition(".")
            if isinstance(old, cst.Name) and obj != old.value and obj not in imports.aliases:
                self.ctx.add_import(module, obj)
                spelled = obj
            else:
                self.ctx.add_import(qualified.split(".")[0])
                spelled = qualified
        return expression(spelled)

    def forget(self, old: cst.CSTNode) -> None:
        """Call from a fix: drop the import the old reference used, if nothing else uses it."""
        head = (dotted(old) or "").split(".")[0]
        full = self.ctx.imports.aliases.get(head)
        if full is None:
            return
        if isinstance(old, cst.Name) and "." in full:
            module, _, obj = full.rpartition(".")
            self.ctx.remove_import_if_unused(module, obj, head if head != obj else None)
        else:
            self.ctx.remove_import_if_unused(full, None, head if head != full else None)
