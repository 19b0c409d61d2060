"""Small libcst helpers every rule family uses: reading arguments and literals, building calls and keywords,
and spelling a torch name the way the file imports it."""
from __future__ import annotations

import keyword as python_keyword
from typing import Optional, Sequence

import libcst as cst

from codemods.names import dotted

TIGHT_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_PRIMARY = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def code(node: cst.CSTNode) -> str:
    """The source text of ``node``."""
    return cst.Module([]).code_for_node(node)


def expression(code: str) -> cst.BaseExpression:
    """``code`` as an expression. The usual one in a fix, a dotted name, is built: the same tree as the parser's,
    at a fraction of its cost (the parser dominated the fixes that spell a name)."""
    parts = code.split(".")
    if not all(part.isidentifier() and not python_keyword.iskeyword(part) for part in parts):
        return cst.parse_expression(code)
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def string(node: Optional[cst.CSTNode]) -> Optional[str]:
    """The value of a plain string literal, else ``None``."""
    if type(node) is cst.SimpleString:
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def method_name(node: cst.CSTNode) -> Optional[str]:
    """``m`` for a call ``x.m(...)``."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return node.func.attr.value
    return None


def argument(call: cst.Call, name: str, position: Optional[int] = None) -> Optional[cst.Arg]:
    """The argument passed as ``name=`` or, failing that, the ``position``-th positional one."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position]
    return None


def keyword(name: str, value: cst.BaseExpression, like: Optional[cst.Arg] = None) -> cst.Arg:
    """``name=value`` (PEP 8 spacing); with ``like``, in that argument's place (its comma and spacing)."""
    arg = cst.Arg(value=value, keyword=cst.Name(name), equal=TIGHT_EQUAL)
    return arg.with_changes(comma=like.comma, whitespace_after_arg=like.whitespace_after_arg) if like else arg


def append_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` with ``arg`` added last, keeping a trailing comma and a multi-line layout."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg])
    last_comma = args[-1].comma
    if last_comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return call.with_changes(args=[*args, arg])
    between = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args[-1] = args[-1].with_changes(comma=between)
    return call.with_changes(args=[*args, arg.with_changes(comma=last_comma)])


def method_call(receiver: cst.BaseExpression, name: str, args: Sequence[cst.Arg] = (),
                like: Optional[cst.BaseExpression] = None) -> cst.Call:
    """``receiver.name(args)``, parenthesizing a receiver that is not a primary expression; with ``like``,
    the parentheses ``like`` had."""
    if type(receiver) not in _PRIMARY and not receiver.lpar:
        receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    call = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=list(args))
    return call.with_changes(lpar=like.lpar, rpar=like.rpar) if like is not None else call


def literal(node: Optional[cst.CSTNode]) -> object:
    """``True``/``False``/``None`` for those names, a number for a number (negated too), else ``...``."""
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if type(node) in (cst.Integer, cst.Float):
        return node.evaluated_value
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        inner = literal(node.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else ...
    return ...


def spell(ctx, qualified: str) -> str:
    """How the file can spell ``qualified`` (``torch.no_grad``; ``nn.Module`` where it imports ``torch.nn as
    nn``), scheduling ``import torch`` when it has no import that reaches it. Call it from inside a fix, so
    that only an applied fix adds the import."""
    local = ctx.imports.local_name(qualified)
    if local is None:
        ctx.add_import(qualified.split(".")[0])
        local = qualified
    return local


def spelled(ctx, qualified: str) -> cst.BaseExpression:
    """``spell`` as an expression."""
    return cst.parse_expression(spell(ctx, qualified))


def release_import(ctx, old: cst.CSTNode) -> None:
    """Call from a fix that replaced the reference ``old`` (``autocast``, ``amp.GradScaler``, ``ag.Variable``):
    the import it came through goes if nothing else uses it (``from m import x``; ``import a.b as ab`` or
    ``from a import b`` for a dotted reference; never a plain ``import torch``)."""
    head = (dotted(old) or "").split(".")[0]
    full = ctx.imports.aliases.get(head)
    if full is None:
        return
    module, _, obj = full.rpartition(".")
    if type(old) is cst.Name and module:
        ctx.remove_import_if_unused(module, obj, head if head != obj else None)
    elif type(old) is cst.Attribute and head != full.split(".")[0]:  # whichever of the two the file has
        ctx.remove_import_if_unused(full, None, head)
        ctx.remove_import_if_unused(module, obj, head if head != obj else None)


def enclosing_statement(model, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The innermost statement around ``node`` that can carry a comment line above it."""
    current = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = model.parent(current)
    return current


def calls_in(node: cst.CSTNode, predicate) -> list:
    """The calls under ``node`` (source order, ``node`` included) for which ``predicate`` holds."""
    from codemods.walk import walk
    return [n for n in walk(node) if type(n) is cst.Call and predicate(n)]


def keep_comments(call: cst.Call, arg: cst.Arg, replacement: cst.BaseExpression) -> cst.BaseExpression:
    """``replacement`` for a wrapper ``call`` that goes, keeping ``arg``'s value: where the call's line breaks
    around ``arg`` hold a comment (``Variable(\\n    batch,   # the input\\n)``), parentheses take them over, so
    that the comment stays where it was."""
    before = call.whitespace_before_args
    after = arg.comma.whitespace_after if type(arg.comma) is cst.Comma else arg.whitespace_after_arg
    if "#" not in code(before) + code(after):
        return replacement
    return replacement.with_changes(lpar=[cst.LeftParen(whitespace_after=before), *replacement.lpar],
                                    rpar=[*replacement.rpar, cst.RightParen(whitespace_before=after)])
