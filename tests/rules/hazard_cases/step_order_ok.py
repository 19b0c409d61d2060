"""TM610 near-misses: every backward goes through forwards computed after the last step of their parameters."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def networks():
    G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
    return G, D


def gan(steps=2):
    """The DCGAN order: the generator's loss goes through D again after D's update."""
    G, D = networks()
    criterion = nn.BCELoss()
    d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
    g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
    ones, zeros = torch.ones(4, 1), torch.zeros(4, 1)
    for _ in range(steps):
        real, z = torch.randn(4, 4), torch.randn(4, 2)
        fake = G(z)
        d_loss = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        g_loss = criterion(D(fake), ones)
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()


def two_losses():
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    out = model(torch.randn(5, 3))
    first, second = out[:, 0].pow(2).mean(), out[:, 1].abs().mean()
    optimizer.zero_grad()
    first.backward(retain_graph=True)
    second.backward()
    optimizer.step()


def detached_target():
    G, D = networks()
    d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
    fake = G(torch.randn(4, 2))
    with torch.no_grad():
        baseline = D(fake)
    score = D(fake).detach()
    D(fake.detach()).mean().backward()
    d_opt.step()
    (fake.pow(2).mean() - score.mean() - baseline.mean()).backward()


def other_optimizer():
    G, D = networks()
    g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
    fake = G(torch.randn(4, 2))
    d_out = D(fake.detach())
    d_out.mean().backward(retain_graph=True)
    g_opt.step()
    loss = (d_out - 1).pow(2).mean()
    D.zero_grad()
    loss.backward()


def main():
    gan(), two_losses(), detached_target(), other_optimizer()


if __name__ == "__main__":
    main()
