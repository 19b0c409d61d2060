"""TM603: list(tensor) / [*tensor] where a parameter list is built: the optimizer gets the rows."""
import torch
import torch.nn as nn
from torch.autograd import Variable


def seed_perturbation():
    """Seed 000: `perturbation` itself is never optimised."""
    image_transformer = nn.Linear(8, 8)
    perturbation = torch.rand(1, 8)
    params = list(image_transformer.parameters()) + list(perturbation)  # TM603
    optimizer = torch.optim.Adam(params, 1e-3)
    for p in params:
        p.requires_grad_(True)
    before = perturbation.clone()
    image_transformer(perturbation).sum().backward()
    optimizer.step()
    return before, perturbation


def starred_parameter():
    z = nn.Parameter(torch.zeros(4, 3))
    return torch.optim.SGD([*z], lr=0.1)  # TM603


def param_group():
    model = nn.Linear(3, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    latent = torch.randn(2, 3, requires_grad=True)
    optimizer.add_param_group({'params': list(latent), 'lr': 0.01})  # TM603
    return latent


def legacy_variable():
    z = Variable(torch.randn(2, 8), requires_grad=True)
    optimizer = torch.optim.Adam(list(z), lr=1e-3)  # TM603
    return z, optimizer
