"""TM606: .grad of a non-leaf tensor is None (with a UserWarning)."""
import torch
import torch.nn as nn


def doubled():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    return x.grad, y.grad  # TM606


def viewed():
    w = nn.Parameter(torch.randn(2, 3))
    flat = w.view(-1)
    flat.pow(2).sum().backward()
    return flat.grad  # TM606


def module_output():
    fc = nn.Linear(3, 2)
    out = fc(torch.randn(1, 3))
    out.sum().backward()
    return out.grad  # TM606


def matrix_product():
    a = torch.randn(2, 2, requires_grad=True)
    z = torch.mm(a, torch.randn(2, 2))
    z.sum().backward()
    return a.grad, z.grad  # TM606


def converted_leaf():
    """The classic: the converted copy is what the name holds, and it is not a leaf."""
    w = torch.randn(3, requires_grad=True).double()
    (w * 2).sum().backward()
    return w.grad  # TM606
