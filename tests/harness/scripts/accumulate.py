"""Gradient accumulation: four backward() calls per optimizer step, through
`torch.autograd.backward` for one of them (it bypasses `Tensor.backward`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    optimizer.zero_grad()
    for micro in range(4):
        loss = model(torch.randn(8, 4)).pow(2).mean() / 4
        if micro == 3:
            torch.autograd.backward(loss)
        else:
            loss.backward()
    optimizer.step()
