"""What the device family's tests share. TM2xx: one ``torch.device`` instead of hard-coded CUDA; legacy constructors.

Whole scripts (flag at module level, in ``main()``, none), combinations with the
other families through ``codemods.all_rules()``, ``.cuda(async=True)`` through the
token pre-pass, and migrated code executed on this CPU-only machine with real
torch and compared with what the legacy constructors give on the CPU.
"""
import ast
import textwrap
import warnings

import torch

import codemods
from codemods import asynckw
from codemods.device.analysis import TENSOR_TYPES
from codemods.engine import run_rules

RULES = codemods.family_rules("device")
FAMILY = [asynckw.AsyncKeyword, *RULES]


def migrate(source, rules=None, unsafe=False):
    """Migrate with the device family (or ``rules``): the result parses and a second run has nothing to do
    (with other families, which are not tested here, nothing for this family)."""
    outcome = run_rules(textwrap.dedent(source), rules or FAMILY, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, rules or FAMILY, unsafe_fixes=unsafe)
    assert not any(f.applied for f in again.findings if rules is None or f.code.startswith("TM2")), "not idempotent"
    assert rules is not None or again.text == outcome.text, "not idempotent"
    return outcome


def applied(outcome, code=None):
    return [f for f in outcome.findings if f.applied and (code is None or f.code == code)]


def diagnostics(outcome, code):
    return [f for f in outcome.findings if f.code == code and not f.applied]


def execute(source, **names):
    namespace = {"__name__": "migrated", **names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<migrated>", "exec"), namespace)
    return namespace


