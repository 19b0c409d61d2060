"""A local `model` shadows the global `model`: both models' parameters must still be recorded."""
import torch

model = torch.nn.Linear(2, 1)


def train():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(list(globals()["model"].parameters()) + list(model.parameters()), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        (globals()["model"](torch.ones(1, 2)) + model(torch.ones(1, 2))).sum().backward()
        optimizer.step()


train()
