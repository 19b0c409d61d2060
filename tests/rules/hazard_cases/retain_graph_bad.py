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


def bptt_windows(steps=6, window=3):
    """The window's state is detached, so each backward has a fresh graph: retain_graph only costs memory."""
    cell = nn.GRUCell(3, 4)
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.01)
    hidden = torch.zeros(1, 4)
    loss = 0
    for k in range(steps):
        hidden = cell(torch.randn(1, 3), hidden)
        loss = loss + hidden.pow(2).sum()
        if (k + 1) % window == 0:
            optimizer.zero_grad()
            loss.backward(retain_graph=True)  # TM604
            optimizer.step()
            loss = 0
            hidden = hidden.detach()
    return hidden


class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        for param in self.parameters():
            param.requires_grad = False

    def forward(self, x):
        return self.conv(x)


def frozen_features(steps=2):
    """Seed 000 again: the only graph shared across iterations is the one the needless requires_grad made."""
    style = torch.rand(1, 3, 4, 4).requires_grad_(True)  # TM607
    loss_net = Frozen()
    style_features = loss_net(style)
    transformer = nn.Conv2d(3, 3, 1)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    for step in range(steps):
        optimizer.zero_grad()
        loss = ((loss_net(transformer(torch.rand(1, 3, 4, 4))) - style_features) ** 2).mean()
        loss.backward(retain_graph=True)  # TM604
        optimizer.step()
    return loss
