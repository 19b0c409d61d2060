"""TM606 near-misses: .grad of leaves and parameters, or of non-leaves that retain their grad."""
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)


def inspect_parameters():
    """Seed 002's way of seeing which parameters got gradients."""
    tuner = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    tuner(torch.randn(2, 3)).sum().backward()
    for name, param in tuner.named_parameters():
        if param.grad is not None:
            print(f'Parameter {name} has gradients: {param.grad.norm():.3f}')
    for p in tuner.parameters():
        p.grad.data.zero_()
    return tuner[0].weight.grad


def leaves():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    w = Variable(torch.randn(2), requires_grad=True)
    (w * 3).sum().backward()
    return x.grad, w.grad


def retained():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y ** 2).sum()
    z.backward()
    return y.grad


def adversarial(model, images, labels, eps=0.1):
    x = images.clone().detach().requires_grad_(True)
    loss = nn.functional.cross_entropy(model(x), labels)
    loss.backward()
    return (x + eps * x.grad.sign()).detach()


def hooked():
    fc = nn.Linear(3, 2)
    out = fc(torch.randn(1, 3))
    grads = []
    out.register_hook(grads.append)
    out.sum().backward()
    return grads[0], fc.weight.grad


def reassigned_leaf():
    h = torch.randn(3, requires_grad=True)
    h = h * 2
    h = h.detach().requires_grad_()
    (h * h).sum().backward()
    return h.grad


def created_where_needed(device="cpu"):
    w = torch.randn(3, dtype=torch.float64, device=device, requires_grad=True)
    v = torch.randn(3, requires_grad=True).float()
    (w * 2).sum().backward()
    (v * 2).sum().backward()
    return w.grad, v.grad


def main():
    inspect_parameters()
    leaves()
    retained()
    adversarial(nn.Linear(4, 3), torch.randn(2, 4), torch.tensor([0, 2]))
    hooked()
    reassigned_leaf()
    created_where_needed()


if __name__ == "__main__":
    main()
