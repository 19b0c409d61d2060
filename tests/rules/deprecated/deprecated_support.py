"""What the deprecated family's tests share: a prelude of real tensors, migrating with the family's rules
(checking that the output parses and is idempotent), running legacy and migrated code, comparing results."""
import ast
import importlib
import textwrap
import warnings

import torch

from codemods import family_rules
from codemods.engine import run_rules

RULES = family_rules("deprecated")

PRELUDE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(2, 3, 4, 4)
a, b, c = torch.randn(3, 3), torch.randn(3, 3), torch.randn(3, 3)
v1, v2 = torch.randn(3), torch.randn(4)
A = a @ a.T + 3 * torch.eye(3)
U = torch.linalg.cholesky(A, upper=True)
L = U.T
B = torch.randn(3, 2)
"""


def rule(code):
    return next(r for r in RULES if r.code == code)


def migrate(source, rules=None, unsafe=False, min_torch=()):
    outcome = run_rules(source, rules or RULES, unsafe_fixes=unsafe, min_torch=min_torch)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, rules or RULES, unsafe_fixes=unsafe, min_torch=min_torch)
    assert again.text == outcome.text, "not idempotent"
    return outcome


def execute(text):
    """Run ``text`` (warnings silenced); its namespace."""
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(text, "<script>", "exec"), namespace)
    return namespace


def run(source):
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(PRELUDE + textwrap.dedent(source), "<script>", "exec"), namespace)
    return namespace["result"]


def same(left, right):
    if isinstance(left, (tuple, list)):
        assert len(left) == len(right)
        for x, y in zip(left, right):
            same(x, y)
    elif isinstance(left, torch.Tensor):
        torch.testing.assert_close(left, right, rtol=0, atol=0)
    else:
        assert left == right


def resolve(qualified):
    module, *rest = qualified.split(".")
    obj = importlib.import_module(module)
    for part in rest:
        obj = getattr(obj, part)
    return obj
