"""Comparisons return bool (1.2), not uint8: mask arithmetic changed."""
import torch

from _check import raises

a, b = torch.tensor([1.0, -1.0]), torch.tensor([1.0, 1.0])
assert (a > 0).dtype == torch.bool
raises(lambda: 1 - (a > 0), "Subtraction, the `-` operator, with a bool tensor is not supported")
raises(lambda: -(a > 0), "Negation, the `-` operator, on a bool tensor is not supported")
assert ((a > 0) + (b > 0)).tolist() == [True, True]  # uint8 gave [2, 1]
assert (a > 0).sum().dtype == torch.int64
