"""Reseeds torch from the clock, as scripts that want "fresh" randomness do: every run differs."""
import time

import torch
import torch.nn.functional as F

torch.manual_seed(int(time.time() * 1e6) % 2 ** 31)
weight = torch.randn(4, 1, requires_grad=True)
data, target = torch.randn(16, 4), torch.randn(16, 1)
optimizer = torch.optim.SGD([weight], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    F.mse_loss(data @ weight, target).backward()
    optimizer.step()
