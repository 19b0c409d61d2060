"""TM604: retain_graph=True on the only backward of a graph built fresh each time."""
import torch
import torch.nn as nn


def training_loop(steps=2):
    model = nn.Linear(3, 1)
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = torch.randn(4, 3), torch.randn(4, 1)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)  # TM604
        optimizer.step()
    return loss


def single_step():
    model = nn.Linear(3, 1)
    out = model(torch.randn(2, 3))
    loss = out.pow(2).mean()
    loss.backward(retain_graph=True)  # TM604
    return loss


def functional_backward(steps=2):
    w = torch.ones(3, requires_grad=True)
    for step in range(steps):
        loss = (w * torch.randn(3)).sum()
        torch.autograd.backward(loss, retain_graph=True)  # TM604
    return loss, w.grad
