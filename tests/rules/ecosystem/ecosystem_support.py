"""What the ecosystem family's tests share: migrate with the family's rules (twice, to check that one pass
is final) and run code with real torch, recording its warnings."""
import ast
import textwrap
import warnings

import torch

from codemods import family_rules
from codemods.engine import run_rules

RULES = family_rules("ecosystem")


def migrate(source, unsafe=False):
    outcome = run_rules(textwrap.dedent(source), RULES, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    assert run_rules(outcome.text, RULES, unsafe_fixes=unsafe).text == outcome.text, "not idempotent"
    return outcome


def applied(outcome):
    return sorted(f.code for f in outcome.findings if f.applied)


def execute(source, **names):
    """Run ``source``; its namespace and the messages of the warnings it raised."""
    namespace = {"torch": torch, **names}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(textwrap.dedent(source), "<script>", "exec"), namespace)
    return namespace, [str(w.message) for w in caught]
