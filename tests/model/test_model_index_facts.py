"""The semantic model's index and size facts that TM306 stands on: which subscripts take one element (a
Python-int index), the rank of factories sized by Python ints, and what `.numpy()`/`.tolist()` give."""
import textwrap

import libcst as cst
import pytest

from codemods.base import FileContext
from codemods.model import Kind, SemanticModel
from codemods.names import ImportMap
from codemods.walk import indexed, walk


def facts(source, ask):
    """``ask(model, expression)`` for the value of the last statement of ``source``."""
    module = cst.parse_module(textwrap.dedent(source))
    with indexed(module):
        model = SemanticModel(FileContext(module=module, imports=ImportMap(module)))
        expression = module.body[-1].body[0].value
        return ask(model, expression)


def rank(source):
    return facts(source, lambda model, node: model.value(node).rank)


@pytest.mark.parametrize("index", ["i", "i + 1", "len(s) - 1", "n // 2", "x.size(0) - 1", "3", "-1"])
def test_an_index_the_file_knows_is_a_python_int_takes_one_element(index):
    source = f"""
    import torch
    x = torch.zeros(5)
    s = 'abc'
    n = 4
    for i in range(3):
        pass
    x[{index}]
    """
    assert facts(source, lambda model, node: model.integer_index(node))
    assert rank(source) == 0


@pytest.mark.parametrize("index", ["j", "mask", "idx", "1.5", "None", "True", "1:2", "i, 0"])
def test_other_indexes_do_not(index):
    source = f"""
    import torch
    x = torch.zeros(5, 2)
    mask = x > 0
    idx = torch.tensor([0, 1])
    i = 0
    x[{index}]
    """
    assert not facts(source, lambda model, node: model.integer_index(node))
    assert rank(source) != 1


@pytest.mark.parametrize("factory,expected", [
    ("torch.zeros(len(s))", 1), ("torch.zeros(n)", 1), ("torch.LongTensor(len(s), 1)", 2),
    ("torch.LongTensor(n)", 1), ("torch.zeros(size)", None), ("torch.LongTensor(values)", None),
    ("torch.LongTensor([[1, 2]])", 2)])
def test_factories_sized_by_python_ints_have_that_many_dimensions(factory, expected):
    source = f"""
    import torch
    s = 'hello'
    n = len(s) * 2
    size = (2, 3)
    values = [1, 2]
    {factory}
    """
    assert rank(source) == expected


def test_numpy_and_tolist_give_no_tensor_whatever_the_receiver():
    for call in ("unknown.cpu().numpy()", "unknown.tolist()"):
        kind = facts(f"import torch\n{call}\n", lambda model, node: model.value(node).kind)
        assert kind is Kind.OTHER
