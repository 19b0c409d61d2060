"""A small attention model in named blocks, trained a few steps: the localisation tests rewrite one
marked line (inside a layer's forward, or where a detach sits) and expect the report to name the
layer or parameter behind it."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.width = width

    def forward(self, x):
        scores = self.query(x) @ self.key(x).t() / math.sqrt(self.width)
        weights = F.softmax(scores, dim=1)  # attention weights
        return weights @ self.value(x)


class Decoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.attn = Attention(width)
        self.out = nn.Linear(width, 3)

    def forward(self, h):
        return self.out(torch.relu(self.attn(h)) + h)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 8)
        self.decoder = Decoder(8)
        self.skip = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.tanh(self.encoder(x))
        return self.decoder(h) + self.skip(h.detach())  # skip path


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data, target = torch.randn(12, 6), torch.randint(0, 3, (12,))
for step in range(4):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
    print("step", step, "loss", round(loss.item(), 6))
