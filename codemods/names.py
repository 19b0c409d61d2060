"""Import-alias resolution that is cheap enough to run on every file.

libcst's ``QualifiedNameProvider`` costs about six parses per file; rules only
need "which torch symbol does this ``Name``/``Attribute`` chain denote", so one
walk over the *statements* (never into expressions) collects the imports and
the names that are rebound by anything other than an import. A rebound name is
ambiguous and resolves to nothing, so a rule never touches an unrelated symbol
that happens to share a name (``Variable = namedtuple(...)``).
"""
from __future__ import annotations

from typing import Dict, Iterator, Optional, Set

import libcst as cst

from codemods.walk import children

# Submodules whose public names are re-exported under another path.
CANONICAL = {
    "torch.autograd.variable.Variable": "torch.autograd.Variable",
    "torch.nn.functional": "torch.nn.functional",
}


def dotted(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    # ``type(...) is``: both classes are final, and ``isinstance`` on libcst's ABC classes is slow (hot path)
    if type(node) is cst.Name:
        return node.value
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _base_name(node: cst.CSTNode) -> Optional[str]:
    """``a`` for ``a.b.c``, else ``None``."""
    while type(node) is cst.Attribute:
        node = node.value
    return node.value if type(node) is cst.Name else None


def _bound_names(target: cst.CSTNode) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _bound_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _bound_names(target.value)


class ImportMap:
    """Local name -> fully qualified name, from every import in the module."""

    def __init__(self, module: cst.Module):
        self.aliases: Dict[str, str] = {}
        self.rebound: Set[str] = set()
        self._answers: Dict[int, tuple] = {}  # id(node) -> (node, its qualified name): a dozen rules ask per call
        self._walk(module.body)
        for name in self.rebound:
            self.aliases.pop(name, None)

    def reach(self, names: Dict[str, str]) -> None:
        """Names other files of the tree give this one (``from model import *``: ``Variable`` ->
        ``torch.autograd.Variable``), unless the file binds them itself."""
        for local, qualified in names.items():
            if local not in self.rebound:
                self.aliases[local] = qualified
        self._answers.clear()

    def qualname(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name ``node`` denotes, or ``None`` if it is not an import."""
        known = self._answers.get(id(node))
        if known is not None and known[0] is node:  # the node itself, not a later one given its id
            return known[1]
        answer = None
        if _base_name(node) in self.aliases:  # most names are not imports: no dotted name built for them
            head, _, rest = dotted(node).partition(".")
            base = self.aliases[head]
            full = f"{base}.{rest}" if rest else base
            answer = CANONICAL.get(full, full)
        self._answers[id(node)] = (node, answer)
        return answer

    def local_name(self, qualified: str) -> Optional[str]:
        """How this module spells ``qualified`` (``torch.nn.functional`` -> ``F``), if it can."""
        best = None
        for local, full in self.aliases.items():
            if qualified == full or qualified.startswith(full + "."):
                candidate = local + qualified[len(full):]
                if best is None or len(candidate) < len(best):
                    best = candidate
        return best

    def imports_module(self, prefix: str) -> bool:
        return any(full == prefix or full.startswith(prefix + ".") for full in self.aliases.values())

    # -- the statement walk -------------------------------------------------
    def _walk(self, body) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._small(small)
                continue
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.rebound.add(stmt.name.value)
                if isinstance(stmt, cst.FunctionDef):
                    params = stmt.params
                    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                        self.rebound.add(param.name.value)
                    for star in (params.star_arg, params.star_kwarg):
                        if isinstance(star, cst.Param):
                            self.rebound.add(star.name.value)
            elif isinstance(stmt, cst.For):
                self.rebound.update(_bound_names(stmt.target))
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        self.rebound.update(_bound_names(item.asname.name))
            for child in children(stmt):
                if isinstance(child, cst.IndentedBlock):
                    self._walk(child.body)
                elif isinstance(child, cst.SimpleStatementSuite):
                    for small in child.body:
                        self._small(small)
                elif isinstance(child, (cst.Else, cst.Finally, cst.ExceptHandler, cst.If)):
                    self._walk([child])

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted(alias.name)
                if alias.asname is not None:
                    self.aliases[alias.asname.name.value] = full
                else:
                    head = full.split(".")[0]
                    self.aliases[head] = head
        elif isinstance(small, cst.ImportFrom):
            if small.relative or small.module is None or isinstance(small.names, cst.ImportStar):
                return
            module = dotted(small.module)
            for alias in small.names:
                local = alias.asname.name.value if alias.asname else alias.name.value
                self.aliases[local] = f"{module}.{dotted(alias.name)}"
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                self.rebound.update(_bound_names(target.target))
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            self.rebound.update(_bound_names(small.target))
