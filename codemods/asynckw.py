"""TM203: ``async=True`` keyword arguments, the one rewrite done on tokens.

``x.cuda(async=True)`` is a syntax error on Python >= 3.7, so libcst cannot parse
such a file at all; Python's tokenizer still reads ``async`` as a NAME. The
pre-pass renames exactly the keyword arguments of calls (``(`` or ``,`` then
``async`` then ``=``), never a ``def`` parameter list, and leaves everything
else to the tree rules that run after it on the now parseable text.
"""
from __future__ import annotations

import io
import tokenize
from typing import List, Tuple

from codemods.base import Example
from codemods.finding import Finding
from codemods.engine import TextRule


class AsyncKeyword(TextRule):
    code = "TM203"
    name = "async-keyword"
    summary = "`async=True` (a syntax error since Python 3.7) becomes `non_blocking=True`"
    triggers = ("async",)
    changes = (
        Example("x = x.cuda(async=True)\n", "x = x.cuda(non_blocking=True)\n"),
        Example("y = t.to(dev, async = True)\n", "y = t.to(dev, non_blocking = True)\n"),
    )
    keeps = (
        "async def fetch():\n    await thing()\n",
        "is_async = True\nf(is_async=True)\n",
        "s = 'cuda(async=True)'\n",
    )

    def rewrite(self, text: str) -> Tuple[str, List[Finding]]:
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                      if t.type not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE)]
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return text, []
        hits = []
        brackets: List[bool] = []  # per open bracket: is it a call's argument list?
        for index, token in enumerate(tokens):
            if token.type != tokenize.OP:
                if (token.type == tokenize.NAME and token.string == "async" and brackets and brackets[-1]
                        and tokens[index - 1].string in ("(", ",")
                        and index + 1 < len(tokens) and tokens[index + 1].string == "="):
                    hits.append(token.start)
                continue
            if token.string in "([{":
                before = tokens[index - 2].string if index >= 2 else ""
                is_call = token.string == "(" and before != "def" and index >= 1 and (
                    tokens[index - 1].type == tokenize.NAME or tokens[index - 1].string in (")", "]"))
                brackets.append(is_call)
            elif token.string in ")]}" and brackets:
                brackets.pop()
        if not hits:
            return text, []
        lines = text.split("\n")  # rows as tokenize counts them (str.splitlines also splits on \f, \v, ...)
        for row, col in reversed(hits):
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "non_blocking" + line[col + len("async"):]
        findings = [Finding(self.code, "`async=` keyword renamed to `non_blocking=`", row, col + 1, row, fixable=True)
                    for row, col in hits]
        return "\n".join(lines), findings


RULES = [AsyncKeyword]
