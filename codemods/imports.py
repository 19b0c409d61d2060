"""Import changes scheduled by fixes, applied once per file after all fixes.

libcst's ``AddImportsVisitor``/``RemoveImportsVisitor`` do this generally,
but they resolve full scope metadata and rebuild the whole tree: about a
second per file here, more than every rule together. Migrations only ever add
``import torch``-style statements and drop names such as ``Variable`` once no
use is left, so this module edits the import statements in place (module level
and the bodies of module-level ``if``/``try``) and counts uses with the fast
walker.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from codemods.names import ImportMap, dotted
from codemods.walk import children

Request = Tuple[str, Optional[str], Optional[str]]  # (module, obj, asname)


def _import_statement(module: str, obj: Optional[str], asname: Optional[str]) -> cst.SimpleStatementLine:
    alias = f" as {asname}" if asname else ""
    code = f"from {module} import {obj}{alias}\n" if obj else f"import {module}{alias}\n"
    return cst.parse_statement(code)


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


def _asname(asname: Optional[str]) -> Optional[cst.AsName]:
    return cst.AsName(cst.Name(asname)) if asname else None


def _merge(body: List[cst.CSTNode], module_name: str, alias: cst.ImportAlias) -> bool:
    """Add ``alias`` to an existing module-level ``from module_name import ...`` (names kept sorted)."""
    for index, statement in enumerate(body):
        if not _is_import_line(statement) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if (isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None
                and dotted(small.module) == module_name and not isinstance(small.names, cst.ImportStar)):
            names = sorted([*small.names, alias], key=lambda a: dotted(a.name))
            names = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in names]
            body[index] = statement.with_changes(body=[small.with_changes(names=names)])
            return True
    return False


def add_imports(module: cst.Module, requests: Sequence[Request]) -> cst.Module:
    """Add each import whose name is not already bound to the same thing, after the last module-level import."""
    bound = ImportMap(module).aliases
    body = list(module.body)
    missing: List[cst.SimpleStatementLine] = []
    for module_name, obj, asname in dict.fromkeys(requests):
        local = asname or obj or module_name.split(".")[0]
        wanted = f"{module_name}.{obj}" if obj else (module_name if asname else local)
        if bound.get(local) == wanted:
            continue
        bound[local] = wanted
        if not (obj and _merge(body, module_name, cst.ImportAlias(cst.Name(obj), _asname(asname)))):
            missing.append(_import_statement(module_name, obj, asname))
    if not missing:
        return module.with_changes(body=body)
    position = 0
    for index, statement in enumerate(body):
        if _is_import_line(statement) or (index == 0 and _is_docstring(statement)):
            position = index + 1
        elif position:
            break
    after = body[position:]
    if after and not _is_import_line(after[0]) and not after[0].leading_lines:
        # Keep the import block apart from the code, as isort and black would.
        after[0] = after[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=body[:position] + missing + after)


def _uses(module: cst.Module, names: Iterable[str]) -> set:
    """Names among ``names`` still read somewhere (not in imports, not as ``x.name`` or ``f(name=...)``)."""
    wanted, used = set(names), set()
    stack: list = [module]
    while stack and len(used) < len(wanted):
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            if node.value in wanted:
                used.add(node.value)
        elif kind is cst.Attribute or (kind is cst.Arg and node.keyword is not None):
            stack.append(node.value)  # `.name` and `name=` are not reads of a variable
        elif kind is not cst.Import and kind is not cst.ImportFrom:
            stack.extend(children(node))
    return used


def _alias_key(small: cst.CSTNode, alias: cst.ImportAlias) -> Request:
    asname = alias.asname.name.value if alias.asname else None
    if isinstance(small, cst.Import):
        return (dotted(alias.name), None, asname)
    return (dotted(small.module), dotted(alias.name), asname)


def _without(statement: cst.SimpleStatementLine, drop: set) -> Optional[cst.SimpleStatementLine]:
    """``statement`` less the import aliases in ``drop``; None when nothing is left."""
    smalls = []
    for small in statement.body:
        if isinstance(small, cst.ImportFrom) and (isinstance(small.names, cst.ImportStar) or not small.module):
            smalls.append(small)
            continue
        kept = [alias for alias in small.names if _alias_key(small, alias) not in drop]
        if not kept:
            continue
        if len(kept) != len(small.names):
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            small = small.with_changes(names=kept)
            if isinstance(small, cst.ImportFrom) and small.rpar is None:
                small = small.with_changes(lpar=None)
        smalls.append(small)
    if not smalls:
        return None
    smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=smalls)


def _prune(body: Sequence[cst.CSTNode], drop: set) -> List[cst.CSTNode]:
    pruned = []
    for statement in body:
        if _is_import_line(statement):
            statement = _without(statement, drop)
            if statement is None:
                continue
        elif isinstance(statement, (cst.If, cst.Try)):
            inner = _prune(statement.body.body, drop) if isinstance(statement.body, cst.IndentedBlock) else None
            if inner is not None:
                block = inner or [cst.SimpleStatementLine([cst.Pass()])]
                statement = statement.with_changes(body=statement.body.with_changes(body=block))
        pruned.append(statement)
    return pruned


def remove_unused_imports(module: cst.Module, requests: Sequence[Request]) -> cst.Module:
    """Drop ``from module import obj [as asname]`` / ``import module as asname`` once the name is unused."""
    candidates = {(m, o, a): a or o for m, o, a in requests if o or a}
    if not candidates:
        return module
    used = _uses(module, candidates.values())
    drop = {request for request, local in candidates.items() if local not in used}
    return module.with_changes(body=_prune(module.body, drop)) if drop else module
