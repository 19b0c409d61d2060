"""0.3's keyword names that 0.4 renamed: the old ones raise TypeError, the new ones mean the same."""
import torch
import torch.nn as nn

from _check import raises

parts = [torch.ones(2), torch.zeros(2)]
raises(lambda: torch.cat(seq=parts), "tensors")
raises(lambda: torch.stack(sequence=parts), "tensors")
raises(lambda: nn.Linear(2, 2).cuda(device_id=0), "device_id")
assert torch.equal(torch.cat(tensors=parts), torch.tensor([1.0, 1.0, 0.0, 0.0]))
assert torch.equal(torch.stack(tensors=parts), torch.stack(parts))
