"""Trains a few steps, then writes what training scripts write besides checkpoints: an image
of the weights (Pillow), the weights as .npy, and a JSON summary with a wall time in it."""
import json
import time

import numpy as np
import torch
from PIL import Image

started = time.time()
torch.manual_seed(0)
model = torch.nn.Linear(6, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(16, 6)).pow(2).mean()
    loss.backward()
    optimizer.step()
weights = model.weight.detach()
pixels = (torch.sigmoid(weights) * 255).round().to(torch.uint8)  # image pixels
Image.fromarray(pixels.numpy()).save("weights.png")
np.save("weights.npy", weights.numpy())
with open("summary.json", "w") as f:
    json.dump({"loss": loss.item(), "steps": 3, "time": time.time() - started}, f)
