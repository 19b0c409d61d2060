"""A correct hand migration of shared/cases/style_transfer/legacy.py.

`Variable(t)` around tensors without a graph becomes plain `t` (no requires_grad
added), and `.cuda()` becomes `.to(device)`.
"""
import argparse

import torch
import torch.nn as nn

BATCH_SIZE = 4


class Vgg16(nn.Module):
    """Tiny frozen stand-in for the VGG16 loss network."""

    def __init__(self, requires_grad=False):
        super().__init__()
        self.slice1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.slice2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, x):
        h1 = self.slice1(x)
        h2 = self.slice2(h1)
        return [h1, h2]


def gram(y):
    b, ch, h, w = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 3, 3, padding=1),
        )

    def forward(self, x):
        return x + self.body(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--size", type=int, default=32)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    style = torch.rand(1, 3, args.size, args.size)
    style = style.repeat(BATCH_SIZE, 1, 1, 1).to(device)
    vgg = Vgg16().to(device)
    style_features = vgg(style)
    style_gram = [gram(fmap) for fmap in style_features]

    transformer = TransformerNet().to(device)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse_loss = nn.MSELoss()

    for step in range(args.steps):
        x = torch.rand(BATCH_SIZE, 3, args.size, args.size).to(device)
        optimizer.zero_grad()
        y = transformer(x)
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = mse_loss(features_y[1], features_x[1])
        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, style_gram):
            style_loss += mse_loss(gram(ft_y), gm_s)
        total_loss = content_loss + 1e5 * style_loss
        total_loss.backward()
        optimizer.step()
        print(f"step {step} loss {total_loss.item():.6f}")


if __name__ == "__main__":
    main()
