"""Findings of ``check`` as text, JSON, SARIF 2.1.0 (code-scanning UIs) or GitHub annotations.

In a notebook a finding's line and column are within its cell: text shows
``nb.ipynb:cell 3:12:5``, JSON has ``"cell": 3``, SARIF the cell in the
result's properties and message, GitHub annotations in the title.
"""
from __future__ import annotations

import json
import re
from typing import Callable, Dict, List

import codemods
import migrate
from migrate.words import plural


_BREAK_AFTER_OPENING = re.compile(r"([(\[{])\s*\n\s*")
_BREAK_BEFORE_CLOSING = re.compile(r"\s*\n\s*([)\]}])")
_BREAK = re.compile(r"\s*\n\s*")


def one_line(text: str) -> str:
    """A message quoting a multi-line expression, on one line: ``f(\\n    a,\\n    b)`` reads ``f(a, b)``."""
    if "\n" not in text:
        return text  # nearly every message: no regular expression to run
    return _BREAK.sub(" ", _BREAK_BEFORE_CLOSING.sub(r"\1", _BREAK_AFTER_OPENING.sub(r"\1", text)))


def finding_message(finding) -> str:
    """A finding's message on one line; an unsafe fix that was not applied says what the code *would*
    become (the callers mark it as an unsafe fix)."""
    message = one_line(finding.message)
    if finding.fixable and finding.unsafe and not finding.applied:
        message = message.replace(" becomes ", " would become ", 1)
    return message


def _flat(results) -> List[tuple]:
    return [(r.path, f) for r in results for f in r.findings]


def location(path: str, finding) -> str:
    """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
    cell = f"cell {finding.cell}:" if finding.cell else ""
    return f"{path}:{cell}{finding.line}:{finding.col}"


def _text(results, quiet: bool) -> str:
    lines = []
    for path, f in _flat(results):
        fix = " [*]" if f.fixable and not f.unsafe else (" [unsafe fix]" if f.fixable else "")
        lines.append(f"{location(path, f)}: {f.code} {finding_message(f)}{fix}")
        if f.hint and not quiet:
            lines.append(f"    hint: {one_line(f.hint)}")
    if not quiet:
        flat = _flat(results)
        files = len({path for path, _ in flat})
        safe = sum(1 for _, f in flat if f.fixable and not f.unsafe)
        unsafe = sum(1 for _, f in flat if f.fixable and f.unsafe)
        lines.append(f"Found {plural(len(flat), 'finding')} in {files} of {plural(len(results), 'file')} "
                     f"([*] {safe} fixable by `torch-migrate rewrite`, {unsafe} more with --unsafe-fixes).")
    return "\n".join(lines) + "\n" if lines else ""


def _json(results, quiet: bool) -> str:
    return json.dumps([dict(f.to_dict(), path=path) for path, f in _flat(results)], indent=1) + "\n"


def _github(results, quiet: bool) -> str:
    def escape(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    return "".join(
        f"::warning file={path},line={f.line},col={f.col},title={f.code}{f' (cell {f.cell})' if f.cell else ''}::"
        f"{escape(finding_message(f))}\n"
        for path, f in _flat(results)
    )


def _sarif(results, quiet: bool) -> str:
    rules = {rule.code: rule for rule in codemods.all_rules()}
    used = sorted({f.code for _, f in _flat(results)})
    sarif_rules = [
        {"id": code, "name": rules[code].name if code in rules else code,
         "shortDescription": {"text": rules[code].summary if code in rules else code},
         "fullDescription": {"text": ((rules[code].__doc__ or "") if code in rules else "").strip() or code}}
        for code in used
    ]
    sarif_results = [
        {"ruleId": f.code, "level": "warning" if rules.get(f.code) and rules[f.code].kind == "hazard" else "note",
         "message": {"text": (f"cell {f.cell}: " if f.cell else "") + finding_message(f)
                             + (f" ({one_line(f.hint)})" if f.hint else "")},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": path.replace("\\", "/")},
                                             "region": {"startLine": f.line, "startColumn": f.col,
                                                        "endLine": max(f.end_line, f.line)}}}],
         **({"properties": {"cell": f.cell}} if f.cell else {})}
        for path, f in _flat(results)
    ]
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "torch-migrate", "version": migrate.__version__, "rules": sarif_rules}},
                  "results": sarif_results}],
    }
    return json.dumps(document, indent=1) + "\n"


FORMATS: Dict[str, Callable] = {"text": _text, "json": _json, "sarif": _sarif, "github": _github}


def render_findings(results, output_format: str, quiet: bool = False) -> str:
    return FORMATS[output_format](results, quiet)
