"""Weights updated by hand, no optimizer: with `--use-grad` through
`torch.autograd.grad` and rebinding the weights each step, else through
`backward()` and in-place updates."""
import sys

import torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
x, y = torch.randn(20, 3), torch.randn(20, 1)
for step in range(4):
    loss = ((x @ w + b - y) ** 2).mean()
    if "--use-grad" in sys.argv:
        gw, gb = torch.autograd.grad(loss, [w, b])
        w = (w - 0.1 * gw).detach().requires_grad_()
        b = (b - 0.1 * gb).detach().requires_grad_()
    else:
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
            w.grad.zero_()
            b.grad.zero_()
