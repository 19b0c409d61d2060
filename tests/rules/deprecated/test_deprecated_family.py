"""The deprecated family as a whole: its tables, its behaviour rows, the torch version every fix needs
(``codemods.torchapi.since``), and a legacy script through every rule."""
import inspect
import runpy
import textwrap
import warnings
from pathlib import Path

import libcst as cst
import pytest
import torch

import codemods
from codemods import deprecated
from codemods.base import FileContext
from codemods.deprecated.common import TableRule
from codemods.syntax import expression
from codemods.engine import run_rules
from codemods.names import ImportMap
from codemods.torchapi.deprecations import (DROPPED_KEYWORDS, LEGACY_POSITIONAL, POSITIONAL_KEYWORDS,
                                            RENAMED_KEYWORDS, RENAMES, REMOVED_MODULES, REPORTED, SPECIAL_RENAMES)
from codemods.torchapi.since import SINCE, needed
from codemods.versions import parse
from codemods.walk import indexed, walk

from deprecated_support import RULES, migrate, resolve, rule

BEHAVIOUR = Path(__file__).resolve().parents[1] / "legacy_behaviour"


def test_table_rows_cover_every_entry_once():
    rows = deprecated.table_rows()
    keywords = sum(len(renames) for renames in RENAMED_KEYWORDS.values())
    assert len({row[1] for row in rows}) == len(rows) == (
        len(RENAMES) + len(SPECIAL_RENAMES) + len(REPORTED) + keywords + len(POSITIONAL_KEYWORDS)
        + len(DROPPED_KEYWORDS) + len(LEGACY_POSITIONAL) + len(REMOVED_MODULES))
    assert all(row[3] == "" or parse(row[3]) for row in rows)


@pytest.mark.parametrize("change", deprecated.BEHAVIOUR_CHANGES, ids=lambda c: c["script"])
def test_behaviour_script_shows_the_change(change, monkeypatch):
    """Every row of the family's behaviour table is backed by a script that asserts it on this torch."""
    assert set(change) == {"change", "version", "handling", "script"}
    assert change["handling"] in {r.code for r in RULES}
    monkeypatch.syspath_prepend(str(BEHAVIOUR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(BEHAVIOUR / change["script"]), run_name="__behaviour__")


# -- versions ---------------------------------------------------------------------------------------
class _Spellings(cst.CSTVisitor):
    """Every name the code refers to and every call with its keywords: ``(qualified or .method, keywords)``."""

    def __init__(self, imports):
        self.imports, self.found = imports, []

    def visit_Call(self, node):
        if isinstance(node.func, (cst.Name, cst.Attribute)):
            qualified = self.imports.qualname(node.func)
            if qualified is None and isinstance(node.func, cst.Attribute):
                qualified = "." + node.func.attr.value
            keywords = [a.keyword.value for a in node.args if a.keyword is not None]
            self.found.append((qualified or "", keywords))

    def visit_Attribute(self, node):
        self.found.append((self.imports.qualname(node) or "", []))


def newest_spelling(text):
    module = cst.parse_module(text)
    visitor = _Spellings(ImportMap(module))
    module.visit(visitor)
    return max((needed(q, k) for q, k in visitor.found), key=parse, default="0.4")


EXAMPLES = [pytest.param(r, e, id=f"{r.code}-change{i}") for r in RULES for i, e in enumerate(r.changes)
            if e.after is not None]


@pytest.mark.parametrize("rule_class,example", EXAMPLES)
def test_documented_examples_need_no_newer_torch_than_the_rule_declares(rule_class, example):
    """Under ``--min-torch`` = the rule's declared version, its output uses only spellings that torch has."""
    outcome = run_rules(example.before, [rule_class], unsafe_fixes=example.unsafe,
                        min_torch=parse(rule_class.min_torch))
    assert parse(newest_spelling(outcome.text)) <= parse(rule_class.min_torch), outcome.text


# (legacy call, prelude, the torch version its rewrite needs): at that version it is rewritten, just below it
# is reported and left. The versions are written out here, not computed: they check ``SINCE``.
VERSIONED = [
    ("torch.ger(v1, v2)", "1.8"), ("torch.cholesky(A)", "1.8"), ("torch.cholesky(A, True)", "1.10"),
    ("torch.potrf(A)", "1.10"), ("torch.potrs(B, U)", "1.1"), ("torch.potri(U)", "1.2"),
    ("torch.btriunpack(LU, piv)", "1.1"), ("torch.btrifact(A)", "1.13"), ("torch.btrifact_with_info(A)", "1.13"),
    ("torch.lu_solve(B, LU, piv)", "1.13"), ("torch.matrix_rank(A)", "1.8"), ("torch.matrix_rank(A, 1e-3)", "1.11"),
    ("torch.gesv(B, A)[0]", "1.8"), ("torch.solve(B, A)[0]", "1.8"), ("torch.trtrs(B, U)[0]", "1.11"),
    ("torch.triangular_solve(B, U)[0]", "1.11"), ("torch.qr(a)", "1.8"), ("torch.lu(A)", "1.13"),
    ("torch.chain_matmul(a, b, c)", "1.9"), ("functorch.vmap(torch.sum)(x)", "2.0"),
    ("F.upsample(x, scale_factor=2)", "0.4.1"), ("F.sigmoid(x)", "0.4"), ("nn.init.xavier_uniform(w)", "0.4"),
]
PRELUDE = "import torch\nimport functorch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def just_below(version):
    major, minor, *patch = parse(version)
    return (major, minor) if patch else (major, minor - 1) if minor else (major - 1, 99)


@pytest.mark.parametrize("call,version", VERSIONED)
def test_a_replacement_is_written_from_its_version_on_and_reported_below(call, version):
    source = PRELUDE + f"r = {call}\n"
    at = migrate(source, [rule("TM401")], min_torch=parse(version))
    assert at.text != source and [f.code for f in at.findings if f.applied] == ["TM401"]
    assert parse(newest_spelling(at.text)) == parse(version), at.text
    if parse(version) > parse("0.4"):
        below = migrate(source, [rule("TM401")], min_torch=just_below(version))
        assert below.text == source
        assert [(f.code, f.fixable) for f in below.findings] == [("TM401", False)]
        assert f"needs torch >= {version}" in below.findings[0].message


def test_every_version_is_a_version_and_every_replacement_has_one():
    assert all(parse(v) for v in SINCE.values())
    for old, rep in RENAMES.items():
        assert rep.new in SINCE, old
    assert all(new in SINCE for new, _ in SPECIAL_RENAMES.values())


# -- with the other families ---------------------------------------------------------------------
def test_legacy_script_through_every_rule():
    source = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.autograd import Variable

    criterion = nn.NLLLoss(size_average=False)

    def train(model, x, y, lr):
        out = F.log_softmax(model(Variable(x)), dim=1)
        loss = criterion(out, Variable(y))
        loss.backward()
        torch.nn.utils.clip_grad_norm(model.parameters(), 0.5)
        for p in model.parameters():
            p.data.add_(-lr, p.grad.data)
        return loss.data[0]
    """)
    outcome = run_rules(source, codemods.all_rules())
    text = outcome.text
    compile(text, "<migrated>", "exec")
    assert run_rules(text, codemods.all_rules()).text == text
    for expected in ("nn.NLLLoss(reduction='sum')", "clip_grad_norm_(model.parameters(), 0.5)",
                     "p.add_(p.grad, alpha=-lr)", "with torch.no_grad():", "return loss.item()"):
        assert expected in text
    assert ".data" not in text
    namespace = {}
    exec(compile(text, "<migrated>", "exec"), namespace)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    value = namespace["train"](model, torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), 0.1)
    assert isinstance(value, float)


@pytest.mark.parametrize("key", sorted(k for k in SINCE if "(" in k and not k.startswith(("(", "."))))
def test_every_keyword_in_the_version_table_is_one_this_torch_takes(key):
    name, _, keyword = key.partition("(")
    function = resolve(name)
    try:
        parameters = inspect.signature(function).parameters
    except ValueError:  # a builtin without a signature: its docstring lists the keywords
        assert keyword.rstrip("=)") + "=" in (function.__doc__ or ""), key
        return
    assert keyword.rstrip("=)") in parameters, key


@pytest.mark.parametrize("rule_class,example", [p for p in EXAMPLES if parse(p.values[0].min_torch) > (0, 4)])
def test_below_a_rules_declared_version_its_examples_are_reported_and_left(rule_class, example):
    outcome = run_rules(example.before, [rule_class], unsafe_fixes=example.unsafe,
                        min_torch=just_below(rule_class.min_torch))
    assert outcome.text == example.before
    assert any(f.code == rule_class.code and not f.fixable for f in outcome.findings)


@pytest.mark.parametrize("text", ["device", "args.device", "torch.nn.functional.tanh", "True", "None", "x[0]",
                                  "'sum'", "torch.cuda.is_available()", "a. b"])
def test_expression_is_the_parsers_tree(text):
    assert expression(text).deep_equals(cst.parse_expression(text))


def test_table_rules_resolve_every_reference_into_their_table():
    """``TableRule.resolve`` skips references without resolving them, but none that names a function of the rule's
    table (an alias, a function imported under another name, a canonicalised path)."""
    source = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "import torch.autograd.variable as V\nfrom torch.nn.functional import tanh as t, relu, softmax\n"
              "from torch import symeig\n"
              "y = F.sigmoid(x) + t(x) + relu(x) + softmax(x) + symeig(a) + torch.symeig(a) + F.nll_loss(x, y)\n"
              "m = nn.Softmax(), nn.MSELoss(size_average=False), V.Variable(x), other.tanh(x), F.tanh, tanh(x)\n")
    module = cst.parse_module(source)
    with indexed(module):
        ctx = FileContext(module=module, imports=ImportMap(module))
        for rule_class in (r for r in RULES if issubclass(r, TableRule)):
            table_rule, resolved = rule_class(ctx), set()
            for node in walk(module):
                qualified = ctx.qualname(node) if type(node) in (cst.Name, cst.Attribute) else None
                found = table_rule.resolve(node)
                assert found is None or found == qualified
                if qualified in rule_class.table:
                    assert found == qualified
                    resolved.add(qualified)
            assert resolved, rule_class.code
