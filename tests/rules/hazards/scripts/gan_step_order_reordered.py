"""The same loop reordered as TM610 says: `D(fake)` computed again after the discriminator's step."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
criterion = nn.BCELoss()
d_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
g_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
ones, zeros = torch.ones(4, 1), torch.zeros(4, 1)
for step in range(3):
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
    print(step, d_loss.item(), g_loss.item())
