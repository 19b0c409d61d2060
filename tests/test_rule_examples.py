"""Every rule's documented examples are its tests: what it changes, flags, and leaves alone."""
import ast
import re

import libcst as cst
import pytest

import codemods
from codemods.commands import CommandContext, CommandRule, run_command_rules
from codemods.engine import Outcome
from codemods.engine import run_rules as run_python_rules
from migrate.prefilter import triggered


def run_rules(text, rules, unsafe_fixes=False):
    """Python rules through the engine; command-file rules (shell, Makefiles) on the text, with no tree
    around the example (a script it starts is not found)."""
    if any(issubclass(rule, CommandRule) for rule in rules):
        return Outcome(*run_command_rules(text, rules, CommandContext(unsafe_fixes=unsafe_fixes)))
    return run_python_rules(text, rules, unsafe_fixes=unsafe_fixes)

CHANGES = [
    pytest.param(rule, example, id=f"{rule.code}-change{i}")
    for rule in codemods.all_rules()
    for i, example in enumerate(rule.changes)
]
KEEPS = [
    pytest.param(rule, source, id=f"{rule.code}-keep{i}")
    for rule in codemods.all_rules()
    for i, source in enumerate(rule.keeps)
]


def test_every_rule_is_documented():
    codes = [rule.code for rule in codemods.all_rules()]
    assert len(codes) == len(set(codes)), "duplicate rule codes"
    for rule in codemods.all_rules():
        assert rule.summary and "\n" not in rule.summary, rule.code
        assert rule.triggers, f"{rule.code} has no triggers: the pre-filter could never skip a file"
        assert rule.changes and rule.keeps, f"{rule.code} needs examples of what it changes and keeps"
        assert rule.kind in ("fix", "hazard")


EVERY_EXAMPLE = [e.before for rule in codemods.all_rules() for e in rule.changes] + [
    source for rule in codemods.all_rules() for source in rule.keeps]


@pytest.mark.parametrize("rule", [rule for rule in codemods.all_rules() if rule.requires], ids=lambda r: r.code)
def test_requires_is_exact(rule):
    """A file without what the rule requires is never parsed for it, so the rule must stay silent on every
    documented example of every rule once that text is taken out (``torch`` -> ``trch``)."""
    assert all(word in e.before for e in rule.changes for word in rule.requires)
    for source in EVERY_EXAMPLE:
        for word in rule.requires:
            source = source.replace(word, word[0] + word[2:])
        _assert_silent(rule, source)


def _assert_silent(rule, source):
    try:
        outcome = run_rules(source, [rule], unsafe_fixes=True)
    except cst.ParserSyntaxError:
        return  # the `async=` examples parse only after their text rule
    assert outcome.findings == [] and outcome.text == source, source


@pytest.mark.parametrize("rule", [rule for rule in codemods.all_rules() if rule.imports], ids=lambda r: r.code)
def test_imports_is_exact(rule):
    """A file whose import statements name none of the rule's ``imports`` is never parsed for it (whatever
    its comments, strings and code mention), so the rule must stay silent on every documented example of
    every rule once its imports of those packages are renamed (``import torch`` -> ``import trch``)."""
    assert all(triggered([rule], e.before) == [rule] for e in rule.changes)
    renamed = re.compile(r"\b(%s)" % "|".join(rule.imports))
    for source in EVERY_EXAMPLE:
        source = "".join(renamed.sub(lambda found: found.group(1)[0] + found.group(1)[2:], line)
                         if re.match(r"\s*(import|from)\b", line) else line for line in source.splitlines(True))
        _assert_silent(rule, source)


@pytest.mark.parametrize("rule,example", CHANGES)
def test_rule_changes(rule, example):
    outcome = run_rules(example.before, [rule], unsafe_fixes=example.unsafe)
    codes = {finding.code for finding in outcome.findings}
    assert rule.code in codes, f"{rule.code} did not fire on:\n{example.before}"
    expected = example.before if example.after is None else example.after
    assert outcome.text == expected
    if example.after is not None:
        # Triggers must cover every example, or the pre-filter would skip it.
        assert any(t in example.before for t in rule.triggers)
        if not issubclass(rule, CommandRule):
            ast.parse(outcome.text)
        again = run_rules(outcome.text, [rule], unsafe_fixes=example.unsafe)
        assert again.text == outcome.text, "not idempotent"
        assert not any(f.applied for f in again.findings)
    if example.unsafe:
        safe_only = run_rules(example.before, [rule])
        assert safe_only.text == example.before, "an unsafe fix was applied without --unsafe-fixes"


@pytest.mark.parametrize("rule,source", KEEPS)
def test_rule_keeps(rule, source):
    outcome = run_rules(source, [rule], unsafe_fixes=True)
    assert outcome.text == source
    assert [f for f in outcome.findings if f.code == rule.code] == []
