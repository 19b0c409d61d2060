"""Point at the changed lines most likely responsible for a divergence.

Changes come from the rewrite's change map (``--change-map``: a JSON list of
``{"file", "line", "end_line", "code", "summary"}``: lines in NEW, the rule code
and its summary; the changed text is read from the file) or, without one, from
a difflib diff of OLD against NEW (hunks, lines in NEW, no rule code).

Each change earns points for evidence, and the best three are reported:
- the divergence is an exception or crash in NEW: the failing line lies in the
  change (+10); otherwise nearer changes rank first;
- a gradient/value diverged: the change mentions the parameter's variable or
  one of its modules (+4);
- a loss, gradient or value diverged: the change edits a numeric constant (+3);
- autograd-related divergences (gradients, values, memory, autograd errors):
  the change adds an autograd switch such as ``requires_grad`` or
  ``retain_graph`` (+3) or drops one such as ``detach``/``Variable``/``.data``
  (+2); for memory, graph-retaining flags weigh +3 more.
"""
from __future__ import annotations

import difflib
import io
import json
import re
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .comparer import Check
from .runner import RunOutcome

_AUTOGRAD = {
    "requires_grad": r"requires_grad", "detach": r"\bdetach\b", "retain_graph": r"retain_graph",
    "create_graph": r"create_graph", "no_grad": r"\bno_grad\b|\benable_grad\b|set_grad_enabled|inference_mode",
    "Variable": r"\bVariable\b", "volatile": r"\bvolatile\b", ".data": r"\.data\b", "backward": r"\bbackward\b",
}
_GRAPH_RETAINING = {"retain_graph", "create_graph"}
_AUTOGRAD_ERROR = re.compile(r"backward|grad|graph|leaf|in-place", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?:e[-+]?\d+)?|(?<![\w.])\.\d+(?:e[-+]?\d+)?", re.IGNORECASE)
_IDENT = re.compile(r"[A-Za-z_]\w*")
TOP = 3


@dataclass(frozen=True)
class Change:
    """Lines ``line``..``end_line`` of ``file`` (1-based, in NEW); ``code`` is the rewrite
    rule's code ("" for a diff hunk); ``text``/``old_text``: the lines after/before;
    ``evidence``/``old_evidence``: the same with strings and comments blanked out,
    so that a docstring mentioning ``retain_graph`` is not taken for a call using it."""

    file: str
    line: int
    end_line: int
    code: str
    summary: str
    text: str = ""
    old_text: str = ""
    evidence: str = ""
    old_evidence: str = ""

    def contains(self, line: int) -> bool:
        return self.line <= line <= self.end_line

    def distance(self, line: int) -> int:
        return 0 if self.contains(line) else min(abs(self.line - line), abs(self.end_line - line))


@dataclass(frozen=True)
class Culprit:
    change: Change
    score: int
    reasons: tuple[str, ...]


def load_change_map(source: Path | Sequence[Mapping], root: Path) -> list[Change]:
    """Parse a change map (a path to the JSON file, or its already loaded list); ValueError if malformed.
    Relative file names are tried from here, then from ``root`` (NEW's tree)."""
    entries = json.loads(Path(source).read_text()) if isinstance(source, (str, Path)) else source
    if not isinstance(entries, list):
        raise ValueError("a change map is a JSON list of {file, line, end_line, code, summary}")
    try:
        changes = [Change(str(e["file"]), int(e["line"]), int(e.get("end_line", e["line"])), str(e.get("code", "")),
                          str(e.get("summary", ""))) for e in entries]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed change map entry: {exc}") from None
    sources: dict[str, tuple[list[str], list[str]]] = {}
    for c in changes:
        path = Path(c.file) if Path(c.file).exists() else root / c.file
        sources.setdefault(c.file, _source(path))
    return [replace(c, text="".join(sources[c.file][0][c.line - 1:c.end_line]),
                    evidence="".join(sources[c.file][1][c.line - 1:c.end_line])) for c in changes]


def _source(path: Path) -> tuple[list[str], list[str]]:
    """The file's lines, and the same lines with string literals and comments blanked."""
    try:
        text = path.read_text(errors="replace")
    except OSError:  # unreadable: the summary is all there is
        return [], []
    lines = text.splitlines(True)
    code = [list(line) for line in lines]
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT):
                (r1, c1), (r2, c2) = token.start, token.end
                for row in range(r1, r2 + 1):
                    start, end = (c1 if row == r1 else 0), (c2 if row == r2 else len(lines[row - 1]))
                    code[row - 1][start:end] = " " * (end - start)
    except (tokenize.TokenError, SyntaxError, IndexError):  # not Python we can read: judge the raw text
        return lines, lines
    return lines, ["".join(chars) for chars in code]


def diff_changes(old: Path, new: Path) -> list[Change]:
    """Hunks of NEW against OLD (1-based lines in NEW; a deletion sits on the line before it)."""
    (old_lines, old_code), (new_lines, new_code) = _source(old), _source(new)
    changes = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        removed, added = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        first = (added or removed).strip().splitlines()[0] if (added or removed).strip() else ""
        verb = {"replace": "changed", "delete": "removed", "insert": "added"}[tag]
        line = j1 + 1 if j2 > j1 else max(j1, 1)
        changes.append(Change(str(new.resolve()), line, max(j2, line), "", f"{verb}: {first}", added, removed,
                              "".join(new_code[j1:j2]), "".join(old_code[i1:i2])))
    return changes


def _same_file(change_file: str, path: Path) -> bool:
    """A change map may name files absolutely, relative to here, or relative to its repo root."""
    candidate, path = Path(change_file), path.resolve()
    return candidate.resolve() == path or (
        not candidate.is_absolute() and path.parts[-len(candidate.parts):] == candidate.parts)


def user_frames(run: RunOutcome) -> list[tuple[Path, int]]:
    """Where the run failed, innermost first, in the user's own files (not torch, not the harness)."""
    frames = [(run.original_path(file), line) for file, line in run.failure_frames()]
    return [(path, line) for path, line in frames if path is not None]


def _failure_location(run: RunOutcome, changes: list[Change]) -> tuple[Path, int] | None:
    """The innermost failing frame in a file that has changes: an unchanged helper
    that raised is less telling than the changed line that called it."""
    return next(((path, line) for path, line in user_frames(run) if any(_same_file(c.file, path) for c in changes)),
                None)


def _autograd_evidence(change: Change, memory: bool) -> list[tuple[int, str]]:
    new_text = change.evidence + ("\n" + change.summary if change.code else "")  # a rule's summary says what it did
    evidence = []
    for name, pattern in _AUTOGRAD.items():
        in_new, in_old = bool(re.search(pattern, new_text)), bool(re.search(pattern, change.old_evidence))
        if in_new and not in_old:
            evidence.append((3 + (3 if memory and name in _GRAPH_RETAINING else 0), f"adds `{name}`"))
        elif in_old and not in_new:
            evidence.append((2, f"drops `{name}`"))
    return evidence


def rank(changes: list[Change], divergence: Check, new_run: RunOutcome) -> list[Culprit]:
    if not changes:
        return []
    location = _failure_location(new_run, changes) if divergence.kind == "outcome" else None
    autograd = divergence.kind in ("grad", "value", "memory") or (
        divergence.kind == "outcome" and bool(_AUTOGRAD_ERROR.search(divergence.note)))
    names = set(_IDENT.findall(divergence.param or "")) - {"weight", "bias"}
    culprits = []
    for change in changes:
        evidence: list[tuple[int, str]] = []
        text = change.evidence + "\n" + change.old_evidence
        if location and _same_file(change.file, location[0]) and change.contains(location[1]):
            evidence.append((10, f"contains the failing line {location[1]}"))
        mentioned = sorted(names & set(_IDENT.findall(text)))
        if mentioned:
            evidence.append((4, "mentions " + ", ".join(f"`{n}`" for n in mentioned)))
        if divergence.kind in ("loss", "grad", "value") and \
                sorted(_NUMBER.findall(change.evidence)) != sorted(_NUMBER.findall(change.old_evidence)) \
                and change.old_evidence.strip():
            evidence.append((3, "changes a constant"))
        if autograd:
            evidence.extend(_autograd_evidence(change, divergence.kind == "memory"))
        culprits.append(Culprit(change, sum(points for points, _ in evidence), tuple(r for _, r in evidence)))

    def key(c: Culprit):
        near = c.change.distance(location[1]) if location and _same_file(c.change.file, location[0]) else 10**9
        return (-c.score, near, c.change.line)

    return sorted(culprits, key=key)[:TOP]
