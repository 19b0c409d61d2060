"""Legacy autograd.Function (non-static forward, called as Fn()(x) or Fn(k)(x)) raises; TM510's form works:
static forward/backward with the ctx, constructor arguments as extra apply arguments with a None gradient."""
import torch

from _check import raises


class LegacyScale(torch.autograd.Function):
    def __init__(self, k):
        self.k = k

    def forward(self, x):
        self.save_for_backward(x)
        return x * self.k

    def backward(self, grad):
        (x,) = self.saved_tensors
        return grad * self.k


raises(lambda: LegacyScale(2.0)(torch.ones(2, requires_grad=True)), "Legacy autograd function")


class Scale(torch.autograd.Function):  # what TM510 writes
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        ctx.save_for_backward(x)
        return x * ctx.k

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.k, None


x = torch.ones(2, requires_grad=True)
Scale.apply(x, 2.0).sum().backward()
assert x.grad.tolist() == [2.0, 2.0]
