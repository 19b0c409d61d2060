"""TM605 near-misses: anomaly detection only while debugging."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--debug", action="store_true")
parser.add_argument("--detect-anomaly", action="store_true")
args = parser.parse_args([])

if args.debug:
    torch.autograd.set_detect_anomaly(True)
torch.autograd.set_detect_anomaly(args.detect_anomaly)
torch.autograd.set_detect_anomaly(False)


def debug_step(model, x):
    with torch.autograd.detect_anomaly():
        model(x).sum().backward()


def test_backward_is_finite():
    model = nn.Linear(2, 1)
    with torch.autograd.detect_anomaly():
        model(torch.randn(3, 2)).sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())


def train(steps=2, debug=False):
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        if debug:
            torch.autograd.set_detect_anomaly(True)
        optimizer.zero_grad()
        model(torch.randn(3, 2)).sum().backward()
        optimizer.step()
    torch.autograd.set_detect_anomaly(mode=False)


def main():
    debug_step(nn.Linear(2, 1), torch.randn(3, 2))
    test_backward_is_finite()
    train()


if __name__ == "__main__":
    main()
