"""TM204: legacy constructors become `torch.empty` / `torch.tensor`, compared with the legacy ones on real torch."""

import pytest
import torch

from device_support import TENSOR_TYPES, diagnostics, execute, migrate


# -- legacy constructors: same dtype and values as the legacy call on the CPU ------------------
@pytest.mark.parametrize("type_name", sorted(TENSOR_TYPES))
@pytest.mark.parametrize("args", ["[1, 0, 1]", "[[1, 2], [3, 0]]", "(2, 1)", "[]", "list(range(3))", "[1] * 3"])
def test_data_constructor_matches_legacy(type_name, args):
    call = f"torch.{type_name}({args})"
    outcome = migrate(f"import torch\nt = {call}\n")
    assert "torch.tensor(" in outcome.text and f"dtype=torch.{TENSOR_TYPES[type_name]}" in outcome.text
    legacy = eval(call)
    new = execute(outcome.text)["t"]
    assert new.dtype == legacy.dtype and torch.equal(new, legacy)


@pytest.mark.parametrize("type_name", sorted(TENSOR_TYPES) + ["Tensor"])
@pytest.mark.parametrize("args", ["2, 3", "4", "x.size()", "x.size(0), 2", "*x.shape", "len(x)", ""])
def test_size_constructor_matches_legacy(type_name, args):
    source = f"import torch\nx = torch.zeros(3, 2)\nt = torch.{type_name}({args}).zero_()\n"
    outcome = migrate(source)
    assert "torch.empty(" in outcome.text
    legacy = execute(source)["t"]
    new = execute(outcome.text)["t"]
    assert new.dtype == legacy.dtype and new.shape == legacy.shape and torch.equal(new, legacy)


def test_float_values_truncate_like_the_legacy_long_constructor():
    outcome = migrate("import torch\nt = torch.LongTensor([1.7, -2.7])\n")
    assert torch.equal(execute(outcome.text)["t"], torch.LongTensor([1.7, -2.7]))


def test_default_dtype_change_keeps_float32_explicit():
    source = "import torch\ntorch.set_default_dtype(torch.float64)\nt = torch.FloatTensor(2, 3).zero_()\nu = torch.Tensor(2)\n"
    try:
        outcome = migrate(source)
        assert "torch.empty(2, 3, dtype=torch.float32)" in outcome.text and "torch.empty(2)" in outcome.text
        migrated = execute(outcome.text)
        assert migrated["t"].dtype == torch.float32 and migrated["u"].dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_names_resolved_through_their_bindings():
    source = '''\
    import torch
    def f(lines, x):
        count = 0
        for line in lines:
            count += len(line)
        ids = []
        ids += [1, 2]
        rev = ids[::-1]
        return torch.LongTensor(count), torch.LongTensor(ids), torch.LongTensor(rev), torch.FloatTensor(args.batch_size)
    parser.add_argument('--batch-size', type=int, default=4)
    '''
    text = migrate(source).text
    assert ("return torch.empty(count, dtype=torch.long), torch.tensor(ids, dtype=torch.long), "
            "torch.tensor(rev, dtype=torch.long), torch.empty(args.batch_size)") in text


@pytest.mark.parametrize("arg", ["array", "np.ones(3)", "t", "batch[0]", "x.numpy()"])
def test_unknown_single_argument_is_a_diagnostic(arg):
    source = f"import torch\ndef f(array, t, batch, x):\n    return torch.FloatTensor({arg})\n"
    outcome = migrate(source, unsafe=True)
    assert outcome.text == source
    assert "may be a size or data" in diagnostics(outcome, "TM204")[0].message


def test_numpy_memory_sharing_is_why_arrays_are_not_rewritten():
    np = pytest.importorskip("numpy")
    array = np.zeros(3, dtype=np.float32)
    torch.FloatTensor(array)[0] = 5  # the legacy constructor shares the array's memory ...
    assert array[0] == 5
    torch.tensor(array, dtype=torch.float32)[1] = 5  # ... torch.tensor copies it
    assert array[1] == 0


def test_initialised_unknown_argument_is_an_unsafe_size():
    source = "import torch\ndef labels(n):\n    return torch.LongTensor(n).random_(0, 10)\n"
    assert migrate(source).text == source
    outcome = migrate(source, unsafe=True)
    assert "torch.empty(n, dtype=torch.long).random_(0, 10)" in outcome.text
    torch.manual_seed(5)
    legacy = torch.LongTensor(7).random_(0, 10)
    torch.manual_seed(5)
    assert torch.equal(execute(outcome.text)["labels"](7), legacy)


def test_constructor_with_keywords_or_references_is_left_alone():
    source = "import torch\na = torch.FloatTensor(2, device='cpu')\nb = isinstance(a, torch.FloatTensor)\n"
    outcome = migrate(source)
    assert outcome.text == source and not outcome.findings
