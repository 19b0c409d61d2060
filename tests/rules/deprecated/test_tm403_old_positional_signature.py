"""TM403: every scalar-first arity computes the same in its keyword form, without hitting a deprecated overload."""
import warnings

import pytest

from codemods.torchapi.deprecations import FUNCTION_SIGNATURES, METHOD_SIGNATURES

from deprecated_support import PRELUDE, migrate, rule, run, same


SHAPES = {
    "add": ("(3,)", "(3,)"), "sub": ("(3,)", "(3,)"), "addcmul": ("(3,)", "(3,)", "(3,)"),
    "addcdiv": ("(3,)", "(3,)", "(3,)"), "addmm": ("(2, 2)", "(2, 3)", "(3, 2)"), "addmv": ("(2,)", "(2, 3)", "(3,)"),
    "addr": ("(2, 3)", "(2,)", "(3,)"), "addbmm": ("(2, 2)", "(4, 2, 3)", "(4, 3, 2)"),
    "baddbmm": ("(4, 2, 2)", "(4, 2, 3)", "(4, 3, 2)"),
}


def _old_calls():
    """Every legacy arity of the two tables, with the scalars first: ``t0.addmm(0.5, 0.25, t1, t2)``."""
    calls = []
    for name, table in METHOD_SIGNATURES.items():
        tensors = [f"t{i}" for i in range(1, len(SHAPES[name.rstrip('_')]))]
        for count in table:
            calls.append(f"t0.{name}({', '.join(['0.5', '0.25'][:count - len(tensors)] + tensors)})")
    for name, table in FUNCTION_SIGNATURES.items():
        tensors = [f"t{i}" for i in range(1, len(SHAPES[name]))]
        for count in table:
            if name in ("add", "sub", "addcmul", "addcdiv"):
                args = ["t0", "0.5", *tensors]
            else:
                args = ["0.5", "t0", *(["0.25"] if count == 5 else []), *tensors]
            calls.append(f"torch.{name}({', '.join(args)})")
    return calls


OLD_CALLS = _old_calls()


@pytest.mark.parametrize("call", OLD_CALLS)
def test_old_positional_forms_compute_the_same(call):
    name = call.split("(")[0].split(".")[-1].rstrip("_")
    setup = "torch.manual_seed(0)\n" + "".join(
        f"t{i} = torch.randn{shape}\n" for i, shape in enumerate(SHAPES[name]))
    source = setup + f"result = {call.replace('t0.', 't0.clone().')}\n"
    outcome = migrate(PRELUDE + source, rules=[rule("TM403")])
    assert [f.code for f in outcome.findings] == ["TM403"], call
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated overload is hit any more
        exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(run(source), namespace["result"])


def test_add_without_underscore_needs_a_visible_tensor():
    outcome = migrate("meter.add(loss.item(), n)\ns.sub(a, b)\navg = p.data.mul(0.9).add(0.1, q.data)\n")
    assert outcome.text == "meter.add(loss.item(), n)\ns.sub(a, b)\navg = p.data.mul(0.9).add(q.data, alpha=0.1)\n"
