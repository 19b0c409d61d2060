"""Which rules may fire on a text, from the text alone: the driver's pre-filter, run before anything is parsed.

A rule names strings one of which must occur (``triggers``), words all of which must (``requires``), and
packages one of which the file must import for its names to resolve (``imports``). A file none of whose rules
pass is not parsed at all: most files of a repository import no torch.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Sequence

from codemods import repo


# The rest of a statement from an ``import`` on (every import statement has the word), brackets and backslash
# continuations followed. Starting with a literal keeps the search fast.
_IMPORT_REST = re.compile(r"import\b(?:[^\n\\(]|\\\r?\n|\([^)]*\))*")
_WORD = re.compile(r"\w+")


def import_words(text: str) -> set:
    """Every word of every line that may hold an import statement, from the statement's first line to its end:
    a superset of the imports ``ImportMap`` resolves names through (``yield from x`` or a comment that says
    "import torch" count too, a docstring that says torch does not)."""
    words = set()
    for found in _IMPORT_REST.finditer(text):
        start = found.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue  # the end of a longer word (``reimport``)
        line = text.rfind("\n", 0, start) + 1
        while line > 1 and text.endswith("\\", 0, line - (2 if text[line - 2] == "\r" else 1)):
            line = text.rfind("\n", 0, line - 1) + 1  # a line continued from the one before
        words.update(_WORD.findall(text, line, found.end()))
    return words


def triggered(rules: Sequence[type], text: str, path: Optional[Path] = None) -> List[type]:
    """The rules that may fire on ``text``: one of their triggers and all they require occur in it, and a
    package of their ``imports`` is imported there (or, ``path`` being a file of the run, a module of the tree
    passes the file a name from one: ``from model import *``). A docstring that mentions torch parses nothing."""
    found = [rule for rule in rules
             if any(trigger in text for trigger in rule.triggers) and all(word in text for word in rule.requires)]
    if not any(rule.imports for rule in found):
        return found
    imported = import_words(text)

    def imports(rule: type) -> bool:
        return not rule.imports or any(word.startswith(rule.imports) for word in imported)

    if path is not None and not all(imports(rule) for rule in found):
        view = repo.view(path)
        if view is not None:
            imported.update(qualified.split(".", 1)[0] for qualified in view.reaching.values())
    return [rule for rule in found if imports(rule)]
