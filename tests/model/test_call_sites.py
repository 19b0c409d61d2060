"""The semantic model's call sites: a function whose name escapes as a value may be called from anywhere."""
import libcst as cst
import pytest

from codemods.base import FileContext
from codemods.names import ImportMap
from codemods.walk import indexed


def sites(source):
    module = cst.parse_module(source)
    with indexed(module):
        ctx = FileContext(module=module, imports=ImportMap(module))
        fdef = next(s for s in module.body if type(s) is cst.FunctionDef)
        return len(ctx.model.call_sites(fdef))


@pytest.mark.parametrize("escape", ["helpers = [f]", "helpers = (f, g)", "table = {'f': f}", "s = {f}",
                                    "g(f)", "h = f", "def k():\n    return f"])
def test_a_name_stored_as_a_value_has_no_known_call_sites(escape):
    assert sites(f"def f(x):\n    return x\n\n\ny = f(1)\n{escape}\n") == 0


def test_plain_calls_are_the_call_sites():
    assert sites("def f(x):\n    return x\n\n\ny = f(1)\nz = f(f(2))\n") == 3
