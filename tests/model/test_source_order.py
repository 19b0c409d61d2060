"""What the semantic model records for flow-sensitive plans (the device family's): positions in source order,
bindings of attribute targets, variable names, and every call and ``=`` statement in order."""
import textwrap

import libcst as cst

from codemods.base import FileContext
from codemods.model import BindingKind
from codemods.names import ImportMap
from codemods.walk import indexed, walk

SOURCE = textwrap.dedent('''\
    import torch
    args = parse()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    def main(x, device, *rest):
        global model
        model = Net()
        if args.cuda:
            model.cuda()
        a, (args.lr, b) = 1, (2, 3)
        args.steps += 1
        names = [n for n in x]
        return f(x, dim=1).type(T)
    T = torch.cuda.FloatTensor
    y = T(2)
''')


def check(source, test):
    module = cst.parse_module(source)
    with indexed(module):
        test(module, FileContext(module=module, imports=ImportMap(module)).model)


def statements(module):
    return [n for n in walk(module) if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement))]


def test_statements_are_numbered_in_source_order_and_nest():
    def test(module, model):
        spans = [model.span(s) for s in statements(module)]
        assert [s[0] for s in spans] == sorted(s[0] for s in spans)
        main = next(s for s in module.body if type(s) is cst.FunctionDef)
        first, last = model.span(main)
        inside = [model.span(s) for s in statements(main.body)]
        assert all(first < a <= b <= last for a, b in inside)
        after = model.span(module.body[-1])
        assert after[0] > last  # a later statement starts after an earlier one ends
    check(SOURCE, test)


def test_position_is_the_innermost_statement():
    def test(module, model):
        call = next(n for n in walk(module) if type(n) is cst.Call and type(n.func) is cst.Attribute
                    and n.func.attr.value == "cuda")
        line = model.statement_of(call)
        assert type(line) is cst.SimpleStatementLine and model.position(call) == model.span(line)[0]
        guard = model.statement_of(model.parent(line))  # the block of ``if args.cuda:``
        assert type(guard) is cst.If and model.position(guard.test) == model.span(guard)[0] < model.position(call)
        assert model.statement_of(module) is None and model.position(module) == 0
    check(SOURCE, test)


def test_binding_order_follows_the_source():
    def test(module, model):
        scope = model.module_scope
        orders = [b.order for name in ("torch", "args", "main", "T", "y") for b in scope.bindings[name]]
        assert orders == sorted(orders) and len(set(orders)) == len(orders)
        model_binding = scope.bindings["model"][0]  # ``global model`` in main: bound in the module ...
        main = next(s for s in module.body if type(s) is cst.FunctionDef)
        assert model.span(main)[0] < model_binding.order <= model.span(main)[1]  # ... where main binds it
    check(SOURCE, test)


def test_attribute_targets_are_bindings_of_their_dotted_name():
    def test(module, model):
        module_scope = model.module_scope
        (cuda,) = module_scope.attributes["args.cuda"]
        assert cuda.kind is BindingKind.ASSIGN and type(cuda.value) is cst.BooleanOperation
        main = model.scope_of_definition(next(s for s in module.body if type(s) is cst.FunctionDef))
        assert [b.kind for b in main.attributes["args.lr"]] == [BindingKind.UNPACK]
        assert [b.kind for b in main.attributes["args.steps"]] == [BindingKind.AUGMENTED]
        assert "args" not in main.bindings and "args.cuda" not in module_scope.bindings
    check(SOURCE, test)


def test_variable_names_leave_out_attributes_and_keywords():
    def test(module, model):
        assert model.uses_name("args") and model.uses_name("device") and model.uses_name("rest")
        assert not model.uses_name("no_cuda") and not model.uses_name("dim") and not model.uses_name("lr")
        assert model.name_count("T") == 3  # bound once, called once, passed once
        assert model.name_count("device") == 0  # a parameter only: no ``Name`` reads it
        assert model.reads_attribute("args", "no_cuda") and model.reads_attribute("args", "steps")
        assert not model.reads_attribute("args", "device") and not model.reads_attribute("torch", "no_cuda")
    check(SOURCE, test)


def test_calls_and_assignments_in_source_order():
    def test(module, model):
        calls = [cst.Module([]).code_for_node(c.func) for c in model.calls()]
        assert calls == ["parse", "torch.cuda.is_available", "Net", "model.cuda", "f(x, dim=1).type", "f", "T"]
        assert [type(s.targets[0].target).__name__ for s in model.assign_statements()] == [
            "Name", "Attribute", "Name", "Tuple", "Name", "Name", "Name"]
        assert [cst.Module([]).code_for_node(s.call) for s in model.calls_named("T")] == ["T(2)"]
        assert [cst.Module([]).code_for_node(c.func) for c in model.passed("T")] == ["f(x, dim=1).type"]
        assert [type(s.node).__name__ for s in model.scopes()] == ["Module", "FunctionDef", "ListComp"]
    check(SOURCE, test)
