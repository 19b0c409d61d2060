"""TM605: anomaly detection left on for training (every backward 2-3x slower)."""
import torch
import torch.nn as nn
from torch.autograd import set_detect_anomaly


def enable_globally():
    torch.autograd.set_detect_anomaly(True)  # TM605


def train(steps=2):
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        with torch.autograd.detect_anomaly():  # TM605
            optimizer.zero_grad()
            model(torch.randn(3, 2)).sum().backward()
            optimizer.step()


def enable_by_keyword():
    set_detect_anomaly(mode=True)  # TM605


def context_form(model, x):
    with torch.autograd.set_detect_anomaly(True):  # TM605
        model(x).sum().backward()


class ContrastiveLoss(nn.Module):
    """A loss module: switching anomaly mode on at import slows every script that imports it."""

    def forward(self, a, b):
        return (a - b).pow(2).mean()


torch.autograd.set_detect_anomaly(True)  # TM605
