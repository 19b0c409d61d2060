"""Generated README sections, so the documentation cannot drift from the rules.

    python -m migrate.docs          # rewrite the generated sections of README.md
    python -m migrate.docs --check  # exit 1 if they are stale (a test runs this)

A section sits between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable, Dict

import codemods
from codemods import current, deprecated

README = Path(__file__).resolve().parents[1] / "README.md"


def _cell(text: str) -> str:
    text = text.strip().replace("|", "\\|")
    return "`" + text.replace("\n", "⏎ ") + "`" if text else ""


def rules_table() -> str:
    lines = ["| code | kind | what it does | example | becomes |", "|---|---|---|---|---|"]
    for rule in codemods.all_rules():
        example = rule.changes[0]
        after = _cell(example.after) if example.after is not None else "reported, left unchanged"
        if example.unsafe:
            after += " (with `--unsafe-fixes`)"
        lines.append(f"| {rule.code} | {rule.kind} | {rule.summary.replace('|', chr(92) + '|')} | "
                     f"{_cell(example.before)} | {after} |")
    return "\n".join(lines) + "\n"


def behaviour_table() -> str:
    rows = getattr(current, "BEHAVIOUR_CHANGES", ())
    lines = ["| what changed | PyTorch | how torch-migrate handles it |", "|---|---|---|"]
    for row in rows:
        cells = (str(row[key]).replace("|", "\\|") for key in ("change", "version", "handling"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def deprecated_table() -> str:
    lines = ["| rule | legacy | current | note |", "|---|---|---|---|"]
    for code, old, new, note in deprecated.table_rows():
        lines.append(f"| {code} | `{old}` | {new if new == 'reported' else f'`{new}`'} | {note.replace('|', chr(92) + '|')} |")
    return "\n".join(lines) + "\n"


SECTIONS: Dict[str, Callable[[], str]] = {"rules": rules_table, "behaviour-changes": behaviour_table,
                                          "deprecated": deprecated_table}


def render(text: str) -> str:
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m: m.group(1) + make() + m.group(2), text)
    return text


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = README.read_text(encoding="utf-8")
    new = render(text)
    if "--check" in argv:
        if new != text:
            print("README.md generated sections are stale: run `python -m migrate.docs`", file=sys.stderr)
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
