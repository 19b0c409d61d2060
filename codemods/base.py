"""The rule model shared by every rule family.

A rule is a libcst visitor that *reports*: each report may carry a fix, a
function from the (already rewritten) node to its replacement. The engine runs
all selected rules in one traversal and applies every fix in one bottom-up
transform, so nested fixes from different rules compose
(``Variable(x.cuda())`` gets both). Rules never transform the tree themselves.
"""
from __future__ import annotations

import functools

import re
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Dict, Optional, Sequence, Tuple, TypeVar, Union

import libcst as cst

from codemods.model import SemanticModel
from codemods.names import ImportMap
from codemods.repo import FileView
from codemods.versions import Version, spell, supports
from codemods.walk import chain, parent

SUPPRESSION = re.compile(r"#\s*torch-migrate:\s*ignore(?:\[(?P<codes>[A-Z0-9_, ]+)\])?")
Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]
Fix = Callable[[cst.CSTNode], Replacement]
Analysis = TypeVar("Analysis")


@dataclass(frozen=True)
class Example:
    """One documented case: ``before`` becomes ``after``.

    ``after`` is ``None`` when the rule only reports (a diagnostic or a hazard
    with no safe fix): the code must be flagged and left unchanged. With
    ``unsafe=True`` the change is only made by ``--unsafe-fixes``.
    """

    before: str
    after: Optional[str] = None
    unsafe: bool = False


@dataclass
class _Report:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    fix: Optional[Fix]
    unsafe: bool
    hint: str


def suppressed(line_text: str, code: str) -> bool:
    """``line_text`` carries ``# torch-migrate: ignore`` for every code or for ``code`` (a prefix matches)."""
    match = SUPPRESSION.search(line_text)
    if not match:
        return False
    codes = match.group("codes")
    return codes is None or any(code.startswith(c.strip()) for c in codes.split(",") if c.strip())


@dataclass
class FileContext:
    """Per-file state that rules read (imports, ancestors) and write (reports, imports)."""

    module: cst.Module
    imports: ImportMap
    unsafe_fixes: bool = False
    visiting: Optional[cst.CSTNode] = None  # the node whose handlers the engine is calling
    reports: list = field(default_factory=list)
    added_imports: list = field(default_factory=list)
    removed_imports: list = field(default_factory=list)
    codes: frozenset = frozenset()  # the codes of the rules running on this file
    min_torch: Version = ()  # the oldest torch the project supports (--min-torch); () means no limit
    repo: Optional[FileView] = None  # the file in the run's repository index (``codemods.repo``); None alone
    became: Dict[int, tuple] = field(default_factory=dict, repr=False)  # filled while fixes apply: see ``now``
    _analyses: Dict[Callable, object] = field(default_factory=dict, repr=False)

    def analysis(self, build: Callable[["FileContext"], Analysis]) -> Analysis:
        """``build(self)``, made once per file: a rule family's shared analysis (scopes, bindings, plans)
        lives as long as the file's tree and is built only if one of the family's rules asks for it."""
        made = self._analyses.get(build)
        if made is None:
            made = self._analyses[build] = build(self)
        return made

    @functools.cached_property
    def model(self) -> SemanticModel:
        """The file's semantic model (``codemods.model``), built on first use and shared by every rule (then a
        plain attribute: rules read it a few hundred times per file)."""
        return self.analysis(SemanticModel)

    def supports(self, needed: str) -> bool:
        """Code that needs torch ``needed`` may be written: it runs on every torch from ``--min-torch`` on."""
        return not self.min_torch or supports(self.min_torch, needed)

    def too_new(self, needed: str) -> str:
        """Why a fix that needs torch ``needed`` is not written under ``--min-torch`` ("" when it may be): the
        words every report that leaves code for that reason ends with."""
        if self.supports(needed):
            return ""
        return f" (left unchanged: the fix needs torch >= {needed}, --min-torch is {spell(self.min_torch)})"

    @property
    def ancestors(self) -> Tuple[cst.CSTNode, ...]:
        """The nodes from the module down to the one being visited, itself last (``walk.chain``: from the walk
        index, memoized per node, so only the handlers that ask pay for it)."""
        return chain(self.visiting) if self.visiting is not None else ()

    def parent(self, level: int = 1) -> Optional[cst.CSTNode]:
        """The ``level``-th ancestor of the node being visited (1 = its parent)."""
        node = self.visiting
        for _ in range(level):
            node = parent(node) if node is not None else None
        return node

    def qualname(self, node: cst.CSTNode) -> Optional[str]:
        return self.imports.qualname(node)

    def now(self, node: cst.CSTNode):
        """What ``node`` of the file's tree has become in the tree the fixes are building: itself when no fix
        changed it or anything under it; else the node rebuilt around the fixed ones, or what a fix returned
        for it (a ``FlattenSentinel`` when split, ``RemovalSentinel.REMOVE`` when removed). A fix on an
        ancestor finds its children this way, after the fixes below them ran, instead of by position."""
        known = self.became.get(id(node))
        return known[1] if known is not None and known[0] is node else node

    def suppressed(self, statement: cst.CSTNode, code: str) -> bool:
        """The first line of ``statement`` suppresses ``code`` (as the engine does for a report there)."""
        first_line = self.module.code_for_node(statement.with_changes(leading_lines=())).lstrip("\n")
        return suppressed(first_line.split("\n", 1)[0], code)

    # Call these from inside a fix, so that only applied fixes change imports.
    def add_import(self, module: str, obj: Optional[str] = None, asname: Optional[str] = None) -> None:
        self.added_imports.append((module, obj, asname))

    def remove_import_if_unused(self, module: str, obj: Optional[str] = None, asname: Optional[str] = None) -> None:
        """Unless another file of the tree reads the name through this one (``from model import *``)."""
        if self.repo is not None and self.repo.keeps(asname or obj or module.split(".")[0]):
            return
        self.removed_imports.append((module, obj, asname))


class Rule:
    """Base class: subclass, set the class attributes, write ``visit_<Node>`` methods.

    - ``code``: stable identifier (``TM101``); ``summary``: one line for tables.
    - ``triggers``: substrings without which the rule cannot fire; a file that
      contains none of any selected rule's triggers is never parsed.
    - ``requires``: substrings that must all occur as well.
    - ``imports``: packages the rule resolves names through (``torch``); it runs only where an import
      statement names one of them (or a package whose name starts with one: ``torch`` covers
      ``torchvision``), or a module of the tree passes the file a name from one (``from model import *``).
      A file that mentions torch only in a comment or docstring is not parsed for it.
    - ``changes``: examples the rule rewrites or flags (its tests and docs).
    - ``keeps``: code the rule must leave alone and not flag.
    - ``kind``: ``"fix"`` for legacy idioms that ``rewrite`` migrates,
      ``"hazard"`` for autograd hazards that ``check`` reports.
    - ``min_torch``: the oldest torch that the rule's *output* runs on. Under a lower ``--min-torch`` the
      engine leaves the code and reports it instead; a rule with an older spelling for older torch asks
      ``self.ctx.supports("1.8")`` and declares the oldest of its spellings here.
    - ``listens`` (an instance may set it in ``__init__``): False when this instance's ``visit_*`` handlers have
      nothing to do in this file, e.g. all but the first rule of a family whose first rule collects for all;
      the engine then calls only its ``leave_Module``.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    kind: ClassVar[str] = "fix"
    triggers: ClassVar[Sequence[str]] = ()
    requires: ClassVar[Sequence[str]] = ()
    imports: ClassVar[Sequence[str]] = ()
    changes: ClassVar[Sequence[Example]] = ()
    keeps: ClassVar[Sequence[str]] = ()
    min_torch: ClassVar[str] = "0.4"
    listens: bool = True

    def __init__(self, ctx: FileContext):
        self.ctx = ctx

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Optional[Fix] = None,
        *,
        unsafe: bool = False,
        hint: str = "",
    ) -> None:
        """Record a finding at ``node``; ``fix`` (if any) rewrites that node."""
        self.ctx.reports.append(_Report(self, node, message, fix, unsafe, hint))
