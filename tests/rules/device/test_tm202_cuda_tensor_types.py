"""TM202: `torch.cuda.X` tensor types and type selections become dtype + device."""
import textwrap

import pytest
import torch

from device_support import diagnostics, execute, migrate


# -- torch.cuda types ------------------------------------------------------------------------
def test_type_selection_is_replaced_at_every_use():
    source = '''\
    import torch
    opt.cuda = not opt.no_cuda and torch.cuda.is_available()
    Tensor = torch.cuda.FloatTensor if opt.cuda else torch.FloatTensor
    LongTensor = torch.cuda.LongTensor if opt.cuda else torch.LongTensor

    def batch(x, n):
        noise = Tensor(n, 4).normal_(0, 1)
        labels = LongTensor([1, 0])
        return x.type(Tensor), noise, labels
    '''
    text = migrate(source).text
    assert "Tensor =" not in text
    assert "noise = torch.empty(n, 4, device=device).normal_(0, 1)" in text
    assert "labels = torch.tensor([1, 0], dtype=torch.long, device=device)" in text
    assert "return x.to(device, torch.float32), noise, labels" in text


def test_type_selection_used_otherwise_is_kept_with_a_diagnostic():
    source = '''\
    import torch
    use_cuda = torch.cuda.is_available()
    dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
    x = torch.zeros(2).type(dtype)
    build(dtype)
    '''
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source)
    assert "used other than" in diagnostics(outcome, "TM202")[0].message


def test_type_selection_script_runs_on_cpu_like_legacy():
    source = '''\
    import torch
    cuda = torch.cuda.is_available()
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    torch.manual_seed(3)
    noise = Tensor(2, 3).normal_(0, 1)
    ints = torch.arange(4).type(Tensor)
    '''
    legacy, migrated = execute(textwrap.dedent(source)), execute(migrate(source).text)
    for name in ("noise", "ints"):
        assert migrated[name].dtype == legacy[name].dtype
        assert torch.equal(migrated[name], legacy[name])


def test_cuda_constructors_and_type_run_on_cpu():
    source = '''\
    import torch
    from torch.cuda import LongTensor
    a = torch.cuda.FloatTensor(2, 3).fill_(1.5)
    b = LongTensor([[1, 2], [3, 4]])
    c = torch.arange(3).type(torch.cuda.ByteTensor)
    d = torch.arange(3).type('torch.cuda.DoubleTensor')
    '''
    with pytest.raises(TypeError):  # "type torch.cuda.FloatTensor not available"
        execute(textwrap.dedent(source))
    text = migrate(source).text
    assert "from torch.cuda import" not in text
    migrated = execute(text)
    expected = {"a": torch.FloatTensor(2, 3).fill_(1.5), "b": torch.LongTensor([[1, 2], [3, 4]]),
                "c": torch.arange(3).type(torch.ByteTensor), "d": torch.arange(3).type(torch.DoubleTensor)}
    for name, value in expected.items():
        assert migrated[name].dtype == value.dtype and torch.equal(migrated[name], value), name
