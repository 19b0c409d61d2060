""".numpy() raises on tensors that require grad; .detach().numpy() is the same array."""
import numpy as np
import torch
import torch.nn as nn

from _check import raises

net = nn.Linear(2, 2)
out = net(torch.ones(1, 2))
raises(lambda: out.numpy(), "Can't call numpy() on Tensor that requires grad")
raises(lambda: net.weight.numpy(), "requires grad")
array = out.detach().cpu().numpy()
assert np.array_equal(array, out.data.numpy())
assert np.shares_memory(net.weight.detach().numpy(), net.weight.data.numpy())
