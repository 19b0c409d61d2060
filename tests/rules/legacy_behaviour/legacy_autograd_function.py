"""Legacy autograd.Function (non-static forward, called as Fn()(x)) raises; static + apply works."""
import torch

from _check import raises


class LegacyDouble(torch.autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * 2

    def backward(self, grad):
        (x,) = self.saved_tensors
        return grad * 2


raises(lambda: LegacyDouble()(torch.ones(2, requires_grad=True)), "Legacy autograd function")


class Double(torch.autograd.Function):  # what TM510 writes: same bodies, `self` is the ctx
    @staticmethod
    def forward(self, x):
        self.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(self, grad):
        (x,) = self.saved_tensors
        return grad * 2


x = torch.ones(2, requires_grad=True)
Double.apply(x).sum().backward()
assert x.grad.tolist() == [2.0, 2.0]
