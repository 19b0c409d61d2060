"""A GAN loop: two optimizers stepping alternately (D then G), so steps alternate
between `netD.*` and `netG.*` parameters."""
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for step in range(3):
    real, noise = torch.randn(16, 2) + 3, torch.randn(16, 4)
    optD.zero_grad()
    fake = netG(noise)
    d_loss = bce(netD(real), torch.ones(16, 1)) + bce(netD(fake.detach()), torch.zeros(16, 1))
    d_loss.backward()
    optD.step()
    optG.zero_grad()
    g_loss = bce(netD(fake), torch.ones(16, 1))
    g_loss.backward()
    optG.step()
