"""torch.full infers int64/bool from an int/bool fill (1.7); legacy gave the default float dtype."""
import torch
import torch.nn as nn

from _check import raises

assert torch.full((2,), 1).dtype == torch.int64
assert torch.full((2,), True).dtype == torch.bool
raises(lambda: nn.BCELoss()(torch.sigmoid(torch.zeros(2)), torch.full((2,), 1)), "expected Float")
# TM502's spelling follows the default dtype, as the legacy call did.
assert torch.full((2,), 1.0).dtype == torch.get_default_dtype()
saved = torch.get_default_dtype()
try:
    torch.set_default_dtype(torch.float64)
    assert torch.full((2,), float(1)).dtype == torch.float64
finally:
    torch.set_default_dtype(saved)
# full_like/new_full take the dtype of their input: unchanged.
assert torch.full_like(torch.zeros(2), 1).dtype == torch.float32
assert torch.zeros(2).new_full((2,), 1).dtype == torch.float32
