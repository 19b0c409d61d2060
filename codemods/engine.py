"""Run a set of rules over one source text: one parse, one traversal, one print.

1. text rules (the documented token-level pre-pass: ``async=`` cannot be parsed),
2. ``libcst.parse_module`` once, without libcst's per-node validation (``parse``), or reuse the tree the
   driver's previous pass made,
3. every rule's ``visit_*`` handlers called in one pass over the tree's nodes, then ``leave_Module`` (each
   node's children and parent are indexed once, for the dispatch and for every family's own analysis walk;
   layout nodes are left out),
4. findings get positions (only when there are any) and inline suppressions,
5. all fixes applied in one bottom-up transform, then scheduled import changes (``imports.py``),
6. one code generation (``positions.code``), which also gives the guard the new tree's statements (the old
   tree's come with step 4's positions). When no fix applies the input text is returned as is.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst._nodes.base import CSTNode

from codemods.base import FileContext, Rule, suppressed
from codemods.commands import CommandRule, TextRuleBase
from codemods.finding import Finding
from codemods.imports import add_imports, remove_unused_imports
from codemods.names import ImportMap
from codemods.positions import NEWLINE, Statement, code, libcst_method, positions
from codemods.repo import FileView
from codemods.versions import Version
from codemods.walk import build_index, indexed, parent



def _not_validated(node: CSTNode) -> None:
    pass


def parse(text: str) -> cst.Module:
    """``libcst.parse_module`` without the check every node makes of its fields as it is built (13 % of a
    parse): the native parser builds only trees that print the text it read (libcst's own comment on
    ``CSTNode.__post_init__`` says validation could be skipped when parsing). Nodes the fixes build are still
    checked."""
    with libcst_method(CSTNode, "__post_init__", _not_validated):
        return cst.parse_module(text)


class TextRule(TextRuleBase):
    """A rule that works on tokens before parsing (only for code libcst cannot parse)."""

    def rewrite(self, text: str) -> Tuple[str, List[Finding]]:
        raise NotImplementedError


@dataclass
class Outcome:
    text: str
    findings: List[Finding] = field(default_factory=list)
    module: Optional[cst.Module] = None  # the tree the fixes made (it prints ``text``); None if none applied
    parsed: bool = True  # False: the rules ran on the ``tree`` they were given
    # With ``module``: the statements of the input text and of ``text`` (``codemods.positions.statements``),
    # for the guard; None where a text rule changed the text the tree was parsed from.
    statements: Optional[Tuple[List[Statement], List[Statement]]] = None


@functools.lru_cache(maxsize=None)
def _handler_names(rule_class: Type[Rule]) -> Tuple[Tuple[str, type, str], ...]:
    """(``visit``/``leave``, node type, method name) for each handler a rule defines: ``visit_<Node>`` for
    any node, ``leave_Module`` (after the whole walk) and no other ``leave_``, which the flat walk has no
    moment for."""
    handlers = []
    for attr in dir(rule_class):
        prefix, _, node_name = attr.partition("_")
        if prefix in ("visit", "leave") and node_name and hasattr(cst, node_name):
            if prefix == "leave" and node_name != "Module":
                raise TypeError(f"{rule_class.__name__}.{attr}: rules report from visit_* handlers; only "
                                "leave_Module is called (after every node was visited)")
            handlers.append((prefix, getattr(cst, node_name), attr))
    return tuple(handlers)


class _Dispatcher:
    """Calls every rule's handlers for each node, in one pass over the index's node list (parents before
    children, in ``walk``'s order), keeping ``ctx.visiting`` current."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]):
        self.ctx = ctx
        self.visits: Dict[type, list] = {}
        self.leaves: list = []
        for rule in rules:
            for kind, node_type, attr in _handler_names(type(rule)):
                if kind == "leave":
                    self.leaves.append(getattr(rule, attr))
                elif rule.listens:
                    self.visits.setdefault(node_type, []).append(getattr(rule, attr))

    def run(self, module: cst.Module, order: Sequence[cst.CSTNode]) -> None:
        visits, ctx = self.visits, self.ctx
        for node in order:
            handlers = visits.get(type(node))
            if handlers:
                ctx.visiting = node
                for handler in handlers:
                    handler(node)
        ctx.visiting = module
        for handler in self.leaves:
            handler(module)


class _ApplyFixes(cst.CSTTransformer):
    """Applies fixes bottom-up, so a fix receives its node with inner fixes done.

    Only the paths from the root to fixed nodes are descended (and rebuilt);
    every other subtree is kept as it is.
    """

    def __init__(self, fixes: Dict[int, list], targets: Sequence[cst.CSTNode], became: Dict[int, tuple]):
        super().__init__()
        self.fixes = fixes
        self.became = became  # FileContext.became: what each rebuilt or fixed node turned into
        self.on_path = set()
        for node in targets:
            while node is not None and id(node) not in self.on_path:
                self.on_path.add(id(node))
                node = parent(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.on_path

    # No attribute hooks: libcst's defaults look up a ``visit_<Node>_<field>`` method for every field visited.
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node, updated_node):
        for fix in self.fixes.get(id(original_node), ()):
            if not isinstance(updated_node, cst.CSTNode):
                break  # an earlier fix removed or split the node
            updated_node = fix(updated_node)
        if updated_node is not original_node:
            self.became[id(original_node)] = (original_node, updated_node)
        return updated_node


def run_rules(text: str, rules: Sequence[type], *, unsafe_fixes: bool = False, fix: bool = True,
              min_torch: Version = (), repo: Optional[FileView] = None, tree: Optional[cst.Module] = None) -> Outcome:
    """Apply ``rules`` (Rule or TextRule classes) to ``text``; no fix needs a torch newer than ``min_torch``.
    ``repo``: the file's view of the run's repository index (names from other files of the tree).
    ``tree``: a tree that prints ``text`` (the ``module`` of the pass that wrote it), used instead of parsing
    unless a text rule changes the text or the tree holds a node object twice. It differs from a fresh parse
    only in the whitespace a fix left to libcst's defaults, which no rule reads.

    Raises ``libcst.ParserSyntaxError`` when the text cannot be parsed.
    """
    findings: List[Finding] = []
    original = text
    rules = [rule for rule in rules if not issubclass(rule, CommandRule)]  # those read shell scripts, not Python
    lines = NEWLINE.split(text)  # lines as libcst counts them
    for rule_class in rules:
        if issubclass(rule_class, TextRule):
            # Applied even when only checking (and when suppressed): nothing could parse the file otherwise.
            text, text_findings = rule_class().rewrite(text)
            for finding in text_findings:
                finding.applied = fix
                if not suppressed(lines[finding.line - 1], finding.code):
                    findings.append(finding)

    index = build_index(tree) if tree is not None and text == original else None
    parsed = index is None or index.shared
    if parsed:
        tree = parse(text)
        index = build_index(tree)
    with indexed(index):  # the walks of every rule family, and of the import clean-up, share it
        fixed, old_statements = _tree_pass(tree, index.order, rules, lines, findings, unsafe_fixes=unsafe_fixes,
                                           fix=fix, min_torch=min_torch, repo=repo, statements=text == original)
    findings.sort(key=lambda f: (f.line, f.col, f.code))
    if not fix:
        return Outcome(original, findings, parsed=parsed)
    if fixed is None:
        return Outcome(text, findings, parsed=parsed)
    if old_statements is None:
        return Outcome(code(fixed), findings, fixed, parsed)
    new_text, new_statements = code(fixed, statements=True)
    return Outcome(new_text, findings, fixed, parsed,
                   None if new_statements is None else (old_statements, new_statements))


def _tree_pass(module: cst.Module, order: Sequence[cst.CSTNode], rules: Sequence[type], lines: List[str],
               findings: List[Finding], *,
               unsafe_fixes: bool, fix: bool, min_torch: Version, repo: Optional[FileView] = None,
               statements: bool = False) -> Tuple[Optional[cst.Module], Optional[List[Statement]]]:
    """Run the tree rules, add their findings; the fixed module (None when no fix applies) and, if asked and
    fixes apply, the statements of ``module``."""
    imports = ImportMap(module)
    if repo is not None:
        imports.reach(repo.reaching)
    ctx = FileContext(module=module, imports=imports, unsafe_fixes=unsafe_fixes,
                      codes=frozenset(cls.code for cls in rules), min_torch=min_torch, repo=repo)
    tree_rules = [cls(ctx) for cls in rules if not issubclass(cls, TextRule)]
    _Dispatcher(ctx, tree_rules).run(module, order)

    fixes: Dict[int, list] = {}
    targets: List[cst.CSTNode] = []
    old_statements = None
    if ctx.reports:
        reported = [report.node for report in ctx.reports]
        # the statements only where a fix may apply (a settling pass and a file of hazards need none)
        if fix and statements and any(report.fix is not None and (unsafe_fixes or not report.unsafe)
                                      for report in ctx.reports):
            spans, old_statements = positions(module, reported, statements=True)
        else:
            spans = positions(module, reported)
        for report in ctx.reports:
            line, column, end_line, _ = spans[id(report.node)]
            line_text = lines[line - 1] if line <= len(lines) else ""
            if suppressed(line_text, report.rule.code):
                continue
            too_new = ctx.too_new(report.rule.min_torch) if report.fix is not None else ""
            fixable = report.fix is not None and not too_new
            will_fix = fix and fixable and (not report.unsafe or unsafe_fixes)
            findings.append(
                Finding(
                    code=report.rule.code,
                    message=report.message + too_new,
                    line=line,
                    col=column + 1,
                    end_line=end_line,
                    fixable=fixable,
                    unsafe=report.unsafe,
                    applied=will_fix,
                    hint=report.hint,
                )
            )
            if will_fix:
                fixes.setdefault(id(report.node), []).append(report.fix)
                targets.append(report.node)
    if not fixes:
        return None, None
    module = module.visit(_ApplyFixes(fixes, targets, ctx.became))
    return remove_unused_imports(add_imports(module, ctx.added_imports), ctx.removed_imports), old_statements
