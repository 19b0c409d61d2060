"""TM610: a backward through a forward computed before an optimizer step updated its parameters.

Each function raises "one of the variables needed for gradient computation has been modified by an inplace
operation" on torch >= 1.5 (see tests/rules/hazards/test_tm610_step_before_backward.py).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def networks():
    G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
    return G, D


def gan(steps=2):
    G, D = networks()
    criterion = nn.BCELoss()
    d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
    g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
    ones, zeros = torch.ones(4, 1), torch.zeros(4, 1)
    for _ in range(steps):
        real, z = torch.randn(4, 4), torch.randn(4, 2)
        fake = G(z)
        g_out = D(fake)
        d_loss = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()  # TM610
        g_loss = criterion(g_out, ones)
        g_opt.zero_grad()
        g_loss.backward()  # TM610
        g_opt.step()


def two_losses():
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    out = model(torch.randn(5, 3))
    first, second = out[:, 0].pow(2).mean(), out[:, 1].abs().mean()
    optimizer.zero_grad()
    first.backward(retain_graph=True)
    optimizer.step()  # TM610
    second.backward()  # TM610


class Trainer:
    def __init__(self):
        self.G, self.D = networks()
        self.d_opt = torch.optim.RMSprop(self.D.parameters(), lr=5e-4)

    def step(self):
        fake = self.G(torch.randn(4, 2))
        critic = self.D(fake).mean()
        d_loss = self.D(fake.detach()).mean() - self.D(torch.randn(4, 4)).mean()
        self.d_opt.zero_grad()
        d_loss.backward()
        self.d_opt.step()  # TM610
        (-critic).backward()  # TM610


def trainer():
    Trainer().step()


HAZARDS = [gan, two_losses, trainer]
