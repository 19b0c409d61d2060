"""TM401's argument rewriting: a table entry's (``Replacement``) argument changes, and the rewrites the table
cannot say (``torch.qr``'s ``some``, ``torch.lu``'s ``get_infos``, ``chain_matmul``'s list, ``torch.range``'s end)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.deprecated.common import argument, flag, with_args
from codemods.syntax import keyword
from codemods.torchapi.deprecations import Replacement


def first_of(parent: Optional[cst.CSTNode], call: cst.Call) -> bool:
    """``call(...)[0]`` or ``call(...).solution``."""
    if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1:
        index = parent.slice[0].slice
        return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0"
    return isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value == "solution"


def rewrite_arguments(call: cst.Call, rep: Replacement) -> Optional[cst.Call]:
    """The arguments of ``rep.new`` for ``call``'s arguments, or ``None`` if there is no exact rewrite."""
    if any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    keep = len(positional) if rep.keep_positional is None else rep.keep_positional
    if (rep.params and len(positional) > len(rep.params)) or len(positional) < len(rep.order or ()):
        return None
    if rep.order is not None and (len(rep.order) != keep or (keywords and not rep.params)):
        return None
    head = [positional[i] for i in rep.order] if rep.order is not None else positional[:keep]
    named = [(rep.params[i], a) for i, a in enumerate(positional) if i >= keep]
    named += [(a.keyword.value, a) for a in keywords]
    for name in rep.must_be_false:
        given = [a for n, a in named if n == name]
        if given and flag(given[0].value) is not False:
            return None
        named = [(n, a) for n, a in named if n != name]
    renames = dict(rep.keywords)
    converted = [keyword(renames.get(name, name), a.value, a) for name, a in named]
    given = {a.keyword.value for a in converted}
    added = [keyword(name, cst.parse_expression(source)) for name, source in rep.defaults if name not in given]
    prepended = [cst.Arg(value=cst.parse_expression(source)) for source in rep.prepend]
    return with_args(call, prepended + head + converted + added)


def _build_qr(call: cst.Call):
    some = argument(call, ("input", "some"), "some")
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > 2 or any(
            a.keyword is not None and a.keyword.value not in ("some", "out") for a in call.args):
        return None
    value = True if some is None else flag(some.value)
    if value is ...:
        return None
    args = [a for a in call.args if a is not some]
    if value is False:
        args.append(keyword("mode", cst.SimpleString("'complete'")))
    return with_args(call, args), "torch.linalg.qr"


def _build_lu(call: cst.Call):
    params = ("A", "pivot", "get_infos")
    if any(a.star for a in call.args) or len([a for a in call.args if a.keyword is None]) > 3 or any(
            a.keyword is not None and a.keyword.value not in params for a in call.args):
        return None
    infos = argument(call, params, "get_infos")
    value = False if infos is None else flag(infos.value)
    if value is ...:
        return None
    pivot = argument(call, params, "pivot")
    args = [a for a in call.args if a.keyword is None][:1]
    if pivot is not None:
        args.append(keyword("pivot", pivot.value))
    return with_args(call, args), "torch.linalg.lu_factor_ex" if value else "torch.linalg.lu_factor"


def _build_chain_matmul(call: cst.Call):
    matrices = [a for a in call.args if a.keyword is None]
    others = [a for a in call.args if a.keyword is not None]
    if len(matrices) < 2 or any(a.star for a in call.args) or any(a.keyword.value != "out" for a in others):
        return None
    elements = [cst.Element(value=a.value) for a in matrices]
    return with_args(call, [cst.Arg(value=cst.List(elements=elements)), *others]), "torch.linalg.multi_dot"


def _build_range(call: cst.Call):
    """``torch.range(a, b[, s])`` with integer literals -> ``torch.arange(a., b + 1.[, s.])`` (end included,
    float literals: the default float dtype, like ``torch.range``)."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if not 2 <= len(positional) <= 3 or keywords - {"dtype", "device", "requires_grad"} or any(
            a.star for a in call.args):
        return None
    values = []
    for arg in positional:
        node, sign = arg.value, 1
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            node, sign = node.expression, -1
        if not isinstance(node, cst.Integer):
            return None
        values.append(sign * int(node.evaluated_value))
    step = values[2] if len(values) == 3 else 1
    if step == 0:
        return None
    values[1] += 1 if step > 0 else -1
    suffix = "" if "dtype" in keywords else "."
    args = [a.with_changes(value=cst.parse_expression(f"{v}{suffix}")) for a, v in zip(positional, values)]
    return with_args(call, args + [a for a in call.args if a.keyword is not None]), "torch.arange"


SPECIAL_BUILDERS = {"torch.qr": _build_qr, "torch.lu": _build_lu, "torch.chain_matmul": _build_chain_matmul,
                     "torch.range": _build_range}
