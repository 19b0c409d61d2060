"""A script in a user's project: reads data relative to the working directory,
imports a sibling module, and writes a checkpoint, a log, and into its data file."""
import os

import torch

from helpers import make_model

with open("data/values.txt") as f:
    values = torch.tensor([float(v) for v in f.read().split()])
model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    model(values.view(1, -1)).pow(2).sum().backward()
    optimizer.step()
torch.save(model.state_dict(), "checkpoint.pt")
os.makedirs("logs", exist_ok=True)
with open("logs/run.log", "w") as f:
    f.write("done\n")
with open("data/values.txt", "a") as f:
    f.write(" 9.0\n")
