"""The family's per-region answers, kept or marked once per file for speed, against their plain definitions
walked afresh for every node of every fixture: ``runs_backward``/``detaches_in_place`` (marked upward from
the calls), ``carry_assignments`` and ``read_first`` (merged from inner blocks)."""
import libcst as cst
import pytest

from codemods.base import FileContext
from codemods.hazards.analysis import DEFERRED, bound_targets, hazard_facts, is_backward, running_nodes
from codemods.hazards.carry import carry_assignments, read_first
from codemods.hazards.flow import Flow
from codemods.names import ImportMap, dotted
from codemods.syntax import method_name
from codemods.walk import build_index, children, indexed

from hazard_support import CASES, SAMPLES

EDGES = '''
import torch

def train_step(model, x):
    model(x).sum().backward()

class Trainer:
    def step(self, x):
        self.model(x).sum().backward()

    def fit(self, data, h):
        for x in data:
            self.step(x)
            later = lambda: x.sum().backward()
            @decorate(loss.backward())
            def inner():
                y.backward()
            h.detach_()
        return [g(v) for v in data if (w := v)]

while True:
    for x, *rest in data:
        train_step(model, x)
        out, h = rnn(x, h)
        h += (y := out.mean())
        with torch.no_grad() as ctx:
            state.h: int = h
    else:
        z: int = 3
        del h

for v in data:
    later = lambda: v.backward()
    print(v)
'''


def sources():
    """The family's fixtures, the samples libcst parses (``async=`` needs the text pre-pass) and the edges."""
    files = [*sorted(CASES.glob("*.py")), *sorted(SAMPLES.glob("*.py"))]
    found = {p.name: p.read_text(encoding="utf-8") for p in files}
    found["edges"] = EDGES
    return {name: text for name, text in found.items() if "async=" not in text}


def _calls_backward(facts, call):
    func = call.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        func = func.attr
    return is_backward(facts.qualname, call) or (type(func) is cst.Name and func.value in facts.backward_functions)


def _assignments(region):
    """``carry_assignments`` by its definition: every binding among ``running_nodes(region)``."""
    found = []
    for node in running_nodes(region):
        target, value = {
            cst.Assign: lambda: (None, node.value), cst.AnnAssign: lambda: (node.target, node.value),
            cst.AugAssign: lambda: (node.target, node), cst.For: lambda: (node.target, None),
            cst.CompFor: lambda: (node.target, None), cst.NamedExpr: lambda: (node.target, node.value),
            cst.WithItem: lambda: (node.asname.name if node.asname else None, None),
        }.get(type(node), lambda: (None, None))()
        if type(node) is cst.Assign:
            names = [dotted(t) for target in node.targets for t in bound_targets(target.target)]
        elif target is None or (type(node) is cst.AnnAssign and value is None):
            continue
        else:
            names = [dotted(t) for t in bound_targets(target)]
        found.append((node, [n for n in names if n], value))
    return found


def _first(node, first):
    """``read_first``'s map by its definition: each name's first occurrence in execution order."""
    kind = type(node)
    if kind in DEFERRED:
        return
    stores = []
    if kind in (cst.Assign, cst.AnnAssign):
        parts = [node.value] if node.value is not None else []
        stores = [t.target for t in node.targets] if kind is cst.Assign else [node.target]
    elif kind is cst.AugAssign:
        parts, stores = [node.target, node.value], [node.target]
    elif kind is cst.For:
        _first(node.iter, first)
        _store(node.target, first)
        parts = [p for p in (node.body, node.orelse) if p is not None]
    elif kind in (cst.Name, cst.Attribute):
        if dotted(node):
            first.setdefault(dotted(node), True)
        parts = [node.value] if kind is cst.Attribute else []
    else:
        parts = list(children(node))
    for part in parts:
        _first(part, first)
    for target in stores:
        _store(target, first)


def _store(target, first):
    if type(target) in (cst.Tuple, cst.List):
        for element in target.elements:
            _store(element.value, first)
    elif type(target) is cst.StarredElement:
        _store(target.value, first)
    elif type(target) in (cst.Name, cst.Attribute) and dotted(target):
        first.setdefault(dotted(target), False)
        if type(target) is cst.Attribute:
            _first(target.value, first)
    else:
        _first(target, first)


SOURCES = sources()


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_region_answers_match_their_definitions(name):
    module = cst.parse_module(SOURCES[name])
    index = build_index(module)
    with indexed(index):
        facts = hazard_facts(FileContext(module=module, imports=ImportMap(module)))
        for node in index.order:
            calls = [n for n in running_nodes(node) if type(n) is cst.Call]
            assert facts.runs_backward(node) == any(_calls_backward(facts, c) for c in calls), (name, node)
            assert facts.detaches_in_place(node) == any(method_name(c) == "detach_" for c in calls), (name, node)
            if type(node) in (cst.For, cst.While, cst.IndentedBlock):
                assert carry_assignments(facts, node) == _assignments(node), (name, node)
                expected = {}
                _first(node, expected)
                for seen, read in expected.items():
                    assert read_first(facts, [node], seen) is read, (name, seen)
        if name == "edges":  # the edge file exercises what the plain definitions distinguish
            loops = [loop for loop, _ in facts.loops]
            assert [facts.runs_backward(loop.body) for loop in loops] == [True, True, True, False]
            assert [facts.detaches_in_place(loop.body) for loop in loops] == [True, False, False, False]


CYCLE = '''
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = net.b[0]
        self.b = net.a.parameters()

    def forward(self, x):
        self.a.add_(x)
        return x

net = Net()
'''


def _flow_outcome(module, index, follow_every_scope, monkeypatch):
    """What ``Flow`` records and what it makes of the classes' attributes, following only the scopes that can
    record (as it does) or every scope (``_classes_acyclic`` answering no)."""
    with indexed(index), monkeypatch.context() as patch:
        if follow_every_scope:
            patch.setattr(Flow, "_classes_acyclic", lambda self: False)
        facts = hazard_facts(FileContext(module=module, imports=ImportMap(module)))
        flow = Flow(facts)
        attrs = {key: flow._class_attr(*key) for key in sorted(facts.self_attrs)}
        return flow.inplace, flow.nonleaf_grads, flow.tensors, flow.module_env, attrs, flow.cyclic


@pytest.mark.parametrize("name", sorted({**SOURCES, "cycle": CYCLE}))
def test_flow_follows_only_the_scopes_that_record(name, monkeypatch):
    """Skipping the scopes that record nothing changes no finding and no class attribute's value. With a cycle
    among the attributes every scope is followed: their values depend on the order they are asked in (asked
    first from ``forward``, ``self.a`` would be a parameter, and ``add_`` on it a finding)."""
    module = cst.parse_module(SOURCES.get(name, CYCLE))
    index = build_index(module)
    skipping = _flow_outcome(module, index, False, monkeypatch)
    assert skipping[:5] == _flow_outcome(module, index, True, monkeypatch)[:5], name
    assert skipping[5] == (name == "cycle"), name
