"""Training whose data loader workers add noise from an unseeded generator (OS entropy): two runs
of this very script differ a little, which is no migration bug. Tests derive a real change from it."""
import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Jittered(Dataset):
    def __init__(self):
        generator = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(64, 5, generator=generator), torch.randn(64, 1, generator=generator)

    def __len__(self):
        return 64

    def __getitem__(self, i):
        jitter = numpy.random.default_rng().normal(0.0, 1e-3, 5).astype("float32")  # augmentation
        return self.x[i] + torch.from_numpy(jitter), self.y[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in DataLoader(Jittered(), batch_size=8, num_workers=2):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)  # loss
        loss.backward()
        optimizer.step()
