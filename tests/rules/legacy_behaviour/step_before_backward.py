"""`optimizer.step()` between a forward and a backward through the stepped parameters raises since 1.5.

Before 1.5 the backward ran, mixing the old activations with the updated weights (the classic GAN loop that
computed `D(fake)` for the generator before the discriminator's step).
"""
import torch
import torch.nn as nn
from _check import raises

torch.manual_seed(0)
D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(D.parameters(), lr=0.1)
fake = torch.randn(3, 4, requires_grad=True)
g_out = D(fake)
D(fake.detach()).mean().backward()
opt.step()
raises(lambda: g_out.mean().backward(), "modified by an inplace operation")
D(fake).mean().backward()  # computed again after the step: fine
