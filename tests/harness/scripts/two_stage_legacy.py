"""Two-stage model in the 0.3 idiom: the decoder trains on a detached copy of the
encoder's output (`Variable(h.data)`), so only `recon_loss` reaches the encoder.
Tests derive wrong migrations from it (dropped detach, changed loss weight, a hang)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
    decoder = nn.Linear(16, 4)
    optimizer = torch.optim.SGD(list(encoder.parameters()) + list(decoder.parameters()), lr=0.1, momentum=0.9)
    for step in range(args.steps):
        x, y = Variable(torch.randn(32, 8)), Variable(torch.randn(32, 4))
        optimizer.zero_grad()
        h = encoder(x)
        recon_loss = h.pow(2).mean()
        out = decoder(Variable(h.data))
        loss = recon_loss + 0.5 * F.mse_loss(out, y)
        loss.backward()
        optimizer.step()
        print("step", step, float(loss))


if __name__ == "__main__":
    main()
