"""TM608 near-misses: the real spellings, and a project's own `require_grad` flag."""
import torch


class Block:
    def __init__(self, require_grad=False):
        self.require_grad = require_grad

    def trainable(self):
        return self.require_grad


def spelled_right():
    x = torch.rand(3).requires_grad_(True)
    w = torch.zeros(3, requires_grad=True)
    v = torch.ones(3)
    v.requires_grad = True
    (x * w * v).sum().backward()
    return x.grad, w.grad, v.grad, Block(True).trainable()


if __name__ == "__main__":
    spelled_right()
