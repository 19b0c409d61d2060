"""Engine internals that the rules rely on: positions, the fast walk, import changes."""
from pathlib import Path

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

import codemods
from codemods.engine import run_rules
from codemods.imports import add_imports, remove_unused_imports
from codemods.positions import code, codegen_methods, positions
from codemods.walk import LAYOUT, walk
from migrate.guard import _units

SAMPLES = sorted(p for p in (Path(__file__).resolve().parents[1] / "samples").rglob("*.py")
                 if "async=True" not in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", [*SAMPLES[:4], None], ids=lambda p: p.name if p else "no-final-newline")
def test_positions_match_libcst_position_provider(path):
    text = "import torch\nx = torch.ones(2)  # c\nif x:\n    y = 1" if path is None else path.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    nodes = list(walk(module))
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    spans = positions(module, nodes)
    for node in nodes:
        where = reference[node]
        assert spans[id(node)] == (where.start.line, where.start.column, where.end.line, where.end.column)
    # Asking for a few nodes gives the same answer as asking for all of them.
    few = nodes[::41]
    assert {k: v for k, v in positions(module, few).items() if k in {id(n) for n in few}} == \
        {id(n): spans[id(n)] for n in few}


def test_code_generation_by_libcst_while_ours_runs_is_libcsts_own():
    """Our code generation swaps two libcst methods for every node class while it runs; a libcst state (another
    thread printing code, PositionProvider) still gets libcst's text and positions meanwhile."""
    module = cst.parse_module(SAMPLES[0].read_text(encoding="utf-8"))
    nodes = list(walk(module))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    with codegen_methods():
        assert module.code == code(module)
        during = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert all(during[node] == expected[node] for node in nodes)


SHAPES = """\
import os
# a comment before


@decorator(
    1)
@other
class A(Base):  # trailing
    x = 1; y = 2

    def f(self, a,
          b):
        \"\"\"Doc.\"\"\"
        if a: return b
        elif b:
            pass
        else:
            return (a +
                    b)


try:
    import json
except (ValueError,
        KeyError) as error:
    raise
except OSError:
    pass
else:
    z = 3
finally:
    w = \\
        4
for i in range(3):
    continue
else:
    v = 5
while False:
    break
with open(os.devnull) as handle, \\
        open(os.devnull):
    print(handle)
match z:
    case [1, 2]:
        pass
    case {"k": value} if value:
        print(value)
async def g():
    async with lock:
        await thing()
    async for item in items:
        yield item
"""


@pytest.mark.parametrize("path", [None, *SAMPLES[:4]], ids=lambda p: p.name if p else "shapes")
def test_statements_are_the_guards_units(path):
    """The statements the guard gets from libcst's trees have the lines of the units it takes from ``ast``
    (``a; b`` is one statement for libcst, two units for ast: compared as sets), from the positions pass over
    a parsed tree and from the code generation of a tree alike; ``code`` prints ``module.code``."""
    text = SHAPES if path is None else path.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    expected = {(unit.first, unit.last, unit.header) for unit in _units(ast.parse(text).body)}
    _, from_positions = positions(module, [], statements=True)
    printed, from_code = code(module, statements=True)
    assert printed == module.code == code(module)
    for found in (from_positions, from_code):
        assert {(unit.first, unit.last, unit.header) for unit in found} == expected


def test_walk_visits_what_libcst_visits_but_layout():
    module = cst.parse_module("@dec\ndef f(a, *, b=1):\n    return [x async for x in a if x] or {b: a}\n")
    seen = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            seen.append(node)
            return True

    module.visit(Collect())
    content = [node for node in seen if type(node) not in LAYOUT]
    assert len(content) < len(seen) and {type(node) for node in content} & {cst.Name, cst.Arg, cst.CompFor}
    assert sorted(map(id, content)) == sorted(map(id, walk(module)))


@pytest.mark.parametrize("source,requests,expected", [
    ("import os\nx = 1\n", [("torch", None, None)], "import os\nimport torch\n\nx = 1\n"),
    ("import torch\nx = 1\n", [("torch", None, None)], "import torch\nx = 1\n"),
    ('"""doc."""\nx = 1\n', [("torch", None, None)], '"""doc."""\nimport torch\n\nx = 1\n'),
    ("from torch.nn.init import xavier_uniform_\n", [("torch.nn.init", "constant_", None)],
     "from torch.nn.init import constant_, xavier_uniform_\n"),
])
def test_add_imports(source, requests, expected):
    assert add_imports(cst.parse_module(source), requests).code == expected


@pytest.mark.parametrize("source,requests,expected", [
    ("from torch.autograd import Variable\nx = 1\n", [("torch.autograd", "Variable", None)], "x = 1\n"),
    ("from torch.autograd import Variable, grad\ny = grad\n", [("torch.autograd", "Variable", None)],
     "from torch.autograd import grad\ny = grad\n"),
    ("from torch.autograd import Variable\nv = Variable\n", [("torch.autograd", "Variable", None)],
     "from torch.autograd import Variable\nv = Variable\n"),
    ("from torch.autograd import Variable as V\ny = torch.V\n", [("torch.autograd", "Variable", "V")], "y = torch.V\n"),
    ("import torch.autograd as ag\ntry:\n    import x\nexcept ImportError:\n    pass\n",
     [("torch.autograd", None, "ag")], "try:\n    import x\nexcept ImportError:\n    pass\n"),
])
def test_remove_unused_imports(source, requests, expected):
    assert remove_unused_imports(cst.parse_module(source), requests).code == expected


@pytest.mark.parametrize("unsafe", [False, True])
def test_a_pass_on_the_tree_the_fixes_made_answers_as_a_fresh_parse(unsafe):
    """The driver's settling pass runs on the fixed tree instead of parsing the text it prints: same answer."""
    rules = codemods.all_rules()
    reused = 0
    for path in SAMPLES:
        first = run_rules(path.read_text(encoding="utf-8"), rules, unsafe_fixes=unsafe)
        if first.module is None:
            continue
        on_tree = run_rules(first.text, rules, unsafe_fixes=unsafe, tree=first.module)
        fresh = run_rules(first.text, rules, unsafe_fixes=unsafe)
        assert (on_tree.text, on_tree.findings) == (fresh.text, fresh.findings), path.name
        reused += not on_tree.parsed
    assert reused >= 5


def test_a_tree_holding_one_node_object_twice_is_parsed_instead():
    """Such a node would have two parents in the walk index: the engine reads the text afresh."""
    statement = cst.parse_statement("x = Variable(torch.ones(2))\n")
    module = cst.parse_module("import torch\nfrom torch.autograd import Variable\n")
    module = module.with_changes(body=[*module.body, statement, statement])
    outcome = run_rules(module.code, codemods.all_rules(), tree=module)
    assert outcome.parsed
    assert outcome.text.count("x = torch.ones(2)") == 2
    assert run_rules(module.code, codemods.all_rules(), tree=cst.parse_module(module.code)).parsed is False


def test_a_rule_with_a_leave_handler_other_than_leave_module_is_refused():
    """The dispatch is one pass over the node list: there is no moment for `leave_Call`, so such a rule is
    refused by name instead of silently never running it."""
    from codemods.base import Rule

    class LeavesCalls(Rule):
        code, name, summary = "TM999", "leaves-calls", "test rule"

        def leave_Call(self, node):
            self.report(node, "left a call")

    with pytest.raises(TypeError, match=r"LeavesCalls.leave_Call: .*only leave_Module"):
        run_rules("f(1)\n", [LeavesCalls])


def test_handlers_see_their_ancestors_and_leave_module_runs_after_every_visit():
    from codemods.base import Rule

    seen = []

    class Records(Rule):
        code, name, summary = "TM998", "records", "test rule"

        def visit_Call(self, node):
            seen.append(("call", [type(n).__name__ for n in self.ctx.ancestors], type(self.ctx.parent()).__name__))

        def leave_Module(self, node):
            seen.append(("module", self.ctx.ancestors[-1] is node))

    run_rules("def f():\n    return g(h(1))\n", [Records])
    assert seen == [
        ("call", ["Module", "FunctionDef", "IndentedBlock", "SimpleStatementLine", "Return", "Call"], "Return"),
        ("call", ["Module", "FunctionDef", "IndentedBlock", "SimpleStatementLine", "Return", "Call", "Arg", "Call"],
         "Arg"),
        ("module", True)]


def test_a_rule_that_does_not_listen_gets_only_leave_module():
    """A family whose first rule collects for all (the variable family) sets ``listens`` on the others: their
    visit handlers are not called at all, their leave_Module is."""
    from codemods.base import Rule

    seen = []

    class Collector(Rule):
        code, name, summary = "TM997", "collector", "test rule"
        first = None

        def __init__(self, ctx):
            super().__init__(ctx)
            self.listens = Collector.first is None
            Collector.first = Collector.first or self

        def visit_Call(self, node):
            seen.append(("call", self is Collector.first))

        def leave_Module(self, node):
            seen.append(("module", self is Collector.first))

    class Second(Collector):
        code = "TM996"

    run_rules("f(g(1))\n", [Collector, Second])
    assert seen == [("call", True), ("call", True), ("module", True), ("module", False)]


def test_a_fix_finds_what_the_fixes_below_it_made_of_a_node():
    """A fix on the module sees its statements after the fixes inside them ran: ``ctx.now`` gives the new one."""
    from codemods.base import Rule

    class RenamesCalls(Rule):
        code, name, summary = "TM995", "renames", "test rule"

        def visit_Call(self, node):
            self.report(node, "renamed", fix=lambda updated: updated.with_changes(func=cst.Name("g")))

    seen = []

    class FindsStatements(Rule):
        code, name, summary = "TM994", "finds", "test rule"

        def leave_Module(self, node):
            first, second = node.body

            def fix(updated):
                seen.append([updated.body.index(self.ctx.now(s)) if self.ctx.now(s) in updated.body else None
                             for s in (first, second)])
                seen.append(self.ctx.now(second) is second)
                return updated
            self.report(node, "module", fix=fix)

    outcome = run_rules("f(1)\nx = 2\n", [RenamesCalls, FindsStatements])
    assert outcome.text == "g(1)\nx = 2\n"
    assert seen == [[0, 1], True]
