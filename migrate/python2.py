"""Python 2 source, recognised so that it is reported rather than passed over.

Legacy PyTorch code is often Python 2 as well. Porting it is another tool's job
(``2to3``, ``python-modernize``): a Python 2 file is left untouched and reported
as ``path:line:col: Python 2 syntax, not migrated (what)``, pointing at the first
construct that Python 3 refuses, whether or not the file has a legacy PyTorch
idiom. Python's own error says which construct it is where it can (``print
"x"``, ``except E, e:``, ``0777``); the source line at the error tells the
rest (backquotes, ``<>``, ``10L``, ``ur''``, ``raise E, "message"``). ``print
>>f, x`` compiles on Python 3 (a tuple expression that fails when it runs), so
it is looked for in the tree.
"""
from __future__ import annotations

import ast
import re
from typing import NamedTuple, Optional

# Python's messages (3.9 to 3.13) for constructs only Python 2 accepts.
_MESSAGES = (
    ("Missing parentheses in call to 'print'", "print statement"),
    ("Missing parentheses in call to 'exec'", "exec statement"),
    ("multiple exception types must be parenthesized", "`except E, name:`"),
    ("leading zeros in decimal integer literals", "octal literal without 0o"),
    ("parameters cannot be parenthesized", "tuple parameter"),
    ("inconsistent use of tabs and spaces in indentation", "tabs and spaces mixed in indentation"),
)
# Constructs Python reports as plain "invalid syntax" (or, on older versions, instead of the messages above),
# found on the line of the error.
_ON_THE_LINE = (
    (re.compile(r"`"), "backquote repr"),
    (re.compile(r"<>"), "`<>` operator"),
    (re.compile(r"(?<![\w.])(?:0[xX][0-9a-fA-F]+|\d+)[lL](?!\w)"), "long integer literal"),
    (re.compile(r"(?<![\w'\"])[uU][rR]['\"]"), "ur'' string"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "`raise E, value`"),
    (re.compile(r"^\s*except\s+(?:[\w.]+|\([^)]*\))\s*,"), "`except E, name:`"),
    (re.compile(r"^\s*(?:print|exec)\b(?!\s*\()"), "print statement"),
    (re.compile(r"(?<![\w.])0\d+(?![\w.])"), "octal literal without 0o"),
)
# The two Python 2 constructs that libcst parses: only a file that may contain one is compiled before the rules.
_LIBCST_ACCEPTS = re.compile(r"^[ \t]*(?:except\b[^:\n]*,|print[ \t]*>>)", re.M)
_CHEVRON = re.compile(r"^[ \t]*print[ \t]*>>", re.M)


class Python2(NamedTuple):
    line: int
    col: int
    construct: str

    @property
    def message(self) -> str:
        return f"Python 2 syntax, not migrated ({self.construct})"


def find(text: str) -> Optional[Python2]:
    """The first Python 2 construct of ``text``, or None for Python 3 (or for a file Python 3 cannot read
    for another reason, which the caller reports its own way). Costs a compile."""
    try:
        compile(text, "<python2 check>", "exec", dont_inherit=True)
    except SyntaxError as error:
        found = _classify(error, text)
        if found is None and "async" in text:  # `f(async=True)` (TM203's) is a Python 3.6 name, not the error
            try:
                ast.parse(text, feature_version=(3, 6))
            except SyntaxError as older:
                found = _classify(older, text)
            except (ValueError, RecursionError, MemoryError):
                pass
        return found
    except (ValueError, RecursionError, MemoryError):  # null bytes, nesting too deep: not our question
        return None
    return _print_chevron(text)


def find_before_libcst(text: str) -> Optional[Python2]:
    """``find``, for a file about to be parsed by libcst: the other constructs make that parse fail (and
    the caller then calls ``find``), so only a file that may hold one libcst accepts is compiled."""
    return find(text) if _LIBCST_ACCEPTS.search(text) else None


def _classify(error: SyntaxError, text: str) -> Optional[Python2]:
    line, col = error.lineno or 1, error.offset or 1
    for message, construct in _MESSAGES:
        if message in (error.msg or ""):
            return Python2(line, col, construct)
    lines = text.split("\n")
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    for pattern, construct in _ON_THE_LINE:
        match = pattern.search(source)
        if match:
            return Python2(line, match.start() + 1 + (len(match.group()) - len(match.group().lstrip())), construct)
    return None


def _print_chevron(text: str) -> Optional[Python2]:
    """``print >>f, x`` as a statement (a text match alone could be a docstring's example)."""
    if not _CHEVRON.search(text):
        return None
    for node in ast.walk(ast.parse(text)):
        value = node.value if isinstance(node, ast.Expr) else None
        first = value.elts[0] if isinstance(value, ast.Tuple) and value.elts else value
        if isinstance(first, ast.BinOp) and isinstance(first.op, ast.RShift) \
                and isinstance(first.left, ast.Name) and first.left.id == "print":
            return Python2(node.lineno, node.col_offset + 1, "`print >>file` statement")
    return None
