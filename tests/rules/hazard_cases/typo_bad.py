"""TM608: `require_grad` typos (seed 000): an AttributeError, a silent no-op, a TypeError."""
import torch


def method_typo():
    style = torch.rand(1, 3).require_grad_(True)  # TM608
    return style


def attribute_typo():
    w = torch.zeros(3)
    w.require_grad = True  # TM608
    return w


def keyword_typo():
    return torch.zeros(3, require_grad=True)  # TM608
