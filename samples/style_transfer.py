"""Style-transfer training loop in the pre-0.4 idiom (seed 000_11c3a5ac814adb0d.txt).

`style` is wrapped in Variable without requires_grad and the loss network is
frozen, so the style Gram matrices computed once before the loop carry no graph.

Same model, data and printed losses as the project case
`shared/cases/style_transfer/legacy.py` (outside this repository);
this copy adds a few more 0.3 idioms (a `Variable(t.data, requires_grad=False)`
content target, `.data[0]` reads, running loss aggregates). Every `.cuda()` is
unconditional, as in the original script: it needs a GPU (or the migration).

    python style_transfer.py --steps 20 --size 32
"""
import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable

BATCH_SIZE = 4


class Vgg16(nn.Module):
    """Tiny frozen stand-in for the VGG16 loss network."""

    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
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
        super(TransformerNet, self).__init__()
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

    style = torch.rand(1, 3, args.size, args.size)
    style = Variable(style.repeat(BATCH_SIZE, 1, 1, 1)).cuda()
    vgg = Vgg16().cuda()
    style_features = vgg(style)
    style_gram = [gram(fmap) for fmap in style_features]

    transformer = TransformerNet().cuda()
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse_loss = nn.MSELoss()
    agg_content_loss = 0.
    agg_style_loss = 0.

    for step in range(args.steps):
        x = Variable(torch.rand(BATCH_SIZE, 3, args.size, args.size)).cuda()
        optimizer.zero_grad()
        y = transformer(x)
        features_y = vgg(y)
        features_x = vgg(x)
        f_xc_c = Variable(features_x[1].data, requires_grad=False)
        content_loss = mse_loss(features_y[1], f_xc_c)
        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, style_gram):
            style_loss += mse_loss(gram(ft_y), gm_s)
        total_loss = content_loss + 1e5 * style_loss
        total_loss.backward()
        optimizer.step()

        agg_content_loss += content_loss.data[0]
        agg_style_loss += style_loss.data[0]
        print("step {} loss {:.6f}".format(step, total_loss.data[0]))

    print("mean content loss {:.6e} mean style loss {:.6e}".format(
        agg_content_loss / args.steps, agg_style_loss / args.steps))


if __name__ == "__main__":
    main()
