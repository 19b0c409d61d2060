"""0.3's `TensorDataset(data_tensor=, target_tensor=)` is a TypeError; the positional form stores the same pairs."""
import torch
from torch.utils.data import TensorDataset

from _check import raises

x, y = torch.arange(6.0).view(3, 2), torch.tensor([0, 1, 0])
raises(lambda: TensorDataset(data_tensor=x, target_tensor=y), "unexpected keyword argument 'data_tensor'")
dataset = TensorDataset(x, y)
assert len(dataset) == 3 and torch.equal(dataset[1][0], x[1]) and int(dataset[1][1]) == 1
