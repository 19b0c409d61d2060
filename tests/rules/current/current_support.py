"""What the TM5xx tests share: migrate with the family's rules (checking that the output parses and that a
second pass changes nothing), the codes found, and running code with real torch."""
import ast
import sys
import textwrap
import types
import warnings

import numpy as np
import torch

from codemods import family_rules
from codemods.engine import run_rules

RULES = family_rules("current")


def migrate(source, rules=None, unsafe=False, min_torch=()):
    outcome = run_rules(textwrap.dedent(source), rules or RULES, unsafe_fixes=unsafe, min_torch=min_torch)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, rules or RULES, unsafe_fixes=unsafe, min_torch=min_torch)
    assert again.text == outcome.text, "not idempotent"
    return outcome


def codes(outcome, applied=None):
    return [f.code for f in outcome.findings if applied is None or f.applied == applied]


def execute(source, **names):
    """Run ``source`` as the module ``migrated_script`` (so that ``torch.save(model)`` can pickle its classes)."""
    module = types.ModuleType("migrated_script")
    module.__dict__.update(torch=torch, np=np, **names)
    sys.modules["migrated_script"] = module
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(textwrap.dedent(source), "<migrated>", "exec"), module.__dict__)
    finally:
        del sys.modules["migrated_script"]
    return module.__dict__
