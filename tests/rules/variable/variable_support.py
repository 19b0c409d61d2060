"""What the variable family's tests share: ``Variable``, ``volatile`` and ``Variable`` type checks.

Beyond the documented examples: the many spellings of real 0.3 code, what the
rules must leave alone, composition with the other families, and behaviour:
the legacy code (``torch.autograd.Variable`` still exists on current torch)
and the migrated code are both executed with real torch and their values,
``requires_grad`` flags and gradients compared.
"""
import ast
import textwrap
import warnings
from pathlib import Path

import torch

import codemods
from codemods.engine import run_rules

RULES = codemods.family_rules("variable")
HEADER = "import torch\nfrom torch.autograd import Variable\n"
SAMPLES = Path(__file__).resolve().parents[3] / "samples"


def legacy(body):
    """A legacy module: the usual imports, then ``body``."""
    return HEADER + textwrap.dedent(body)


def migrate(source, rules=None, unsafe=False, fix=True):
    outcome = run_rules(textwrap.dedent(source), rules or RULES, unsafe_fixes=unsafe, fix=fix)
    ast.parse(outcome.text)
    return outcome


def codes(outcome, applied=None):
    return [f.code for f in outcome.findings if applied is None or f.applied == applied]


def execute(source, **names):
    """Run ``source`` with real torch; returns its namespace (legacy code warns about ``volatile``)."""
    namespace = dict(names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(textwrap.dedent(source), "<script>", "exec"), namespace)
    return namespace


def idempotent(outcome, rules=None):
    again = run_rules(outcome.text, rules or RULES)
    assert again.text == outcome.text
    assert not [f for f in again.findings if f.applied and f.code.startswith("TM1")]


def rewrite_line(body, rules=None):
    """Migrate ``HEADER + body``; returns the migrated body (the header's imports stripped)."""
    outcome = migrate(HEADER + textwrap.dedent(body), rules)
    idempotent(outcome, rules)
    text = outcome.text
    for line in ("import torch\n", "from torch.autograd import Variable\n"):
        text = text.replace(line, "", 1)
    return text


