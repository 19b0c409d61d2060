"""What the data family's tests share: migrate with the family's rules (checking idempotence), the codes
applied and flagged, and running a snippet with real torch."""
import ast
import textwrap
import warnings
from pathlib import Path

import numpy as np
import torch

from codemods import family_rules
from codemods.engine import run_rules

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
RULES = family_rules("data")


def migrate(source, rules=None, unsafe=False):
    outcome = run_rules(textwrap.dedent(source), rules or RULES, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, rules or RULES, unsafe_fixes=unsafe)
    assert again.text == outcome.text, "not idempotent"
    return outcome


def applied(outcome):
    return sorted(f.code for f in outcome.findings if f.applied)


def flagged(outcome):
    return sorted(f.code for f in outcome.findings if not f.applied)


def execute(source, **names):
    namespace = {"torch": torch, "np": np, **names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(textwrap.dedent(source), "<script>", "exec"), namespace)
    return namespace


