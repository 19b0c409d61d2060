"""torch.arange/randint of ints are int64; integer .mean() raises."""
import torch

from _check import raises

assert torch.arange(5).dtype == torch.int64
assert torch.randint(0, 3, (2,)).dtype == torch.int64
raises(lambda: torch.arange(3).mul_(0.5), "can't be cast")
raises(lambda: torch.arange(3).requires_grad_(), "floating point")
raises(lambda: torch.arange(3).mean(), "could not infer output dtype")
assert (torch.arange(4) / 2).tolist() == [0.0, 0.5, 1.0, 1.5]  # what 0.3's float arange gave
