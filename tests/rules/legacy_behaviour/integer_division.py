"""Integer tensor / divides truly (1.7); legacy truncated toward zero. `//` floors now."""
import torch

from _check import raises

t = torch.tensor([7, -7])
assert (t / 2).tolist() == [3.5, -3.5]
assert torch.div(t, 2).dtype == torch.float32
assert (t // 2).tolist() == [3, -4]  # floor, not the legacy truncation
# TM504's spelling gives the legacy truncation, dtype kept.
trunc = torch.div(t, 2, rounding_mode="trunc")
assert trunc.tolist() == [3, -3] and trunc.dtype == torch.int64


def augmented():
    u = torch.tensor([7])
    u /= 2


raises(augmented, "can't be cast")
u = torch.tensor([7, -7])
u.div_(2, rounding_mode="trunc")
assert u.tolist() == [3, -3]
