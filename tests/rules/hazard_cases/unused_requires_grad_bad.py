"""TM607: requires_grad on a tensor nothing optimises or differentiates with respect to."""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Vgg(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        for param in self.parameters():
            param.requires_grad = False

    def forward(self, x):
        return [self.conv(x)]


def gram(y):
    b, ch, h, w = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)


def style_transfer(steps=2, device="cpu"):
    """Seed 000: the style Gram matrices, computed once, carry a graph into every iteration."""
    style = torch.rand(1, 3, 8, 8)
    style = style.repeat(2, 1, 1, 1).to(device).requires_grad_(True)  # TM607
    vgg = Vgg().to(device)
    style_gram = [gram(fmap) for fmap in vgg(style)]
    transformer = nn.Conv2d(3, 3, 1)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    for step in range(steps):
        optimizer.zero_grad()
        y = transformer(torch.rand(2, 3, 8, 8))
        loss = sum(((gram(ft) - gm) ** 2).mean() for ft, gm in zip(vgg(y), style_gram))
        loss.backward()
        optimizer.step()


def constant_target():
    model = nn.Linear(3, 4)
    target = torch.zeros(2, 4, requires_grad=True)  # TM607
    loss = ((model(torch.randn(2, 3)) - target) ** 2).mean()
    loss.backward()


def batch_input(model, batch):
    inputs = batch.float()
    inputs.requires_grad_()  # TM607
    loss = model(inputs).sum()
    loss.backward()


def legacy_inputs(model, data):
    inputs = Variable(data, requires_grad=True)  # TM607
    output = model(inputs)
    output.sum().backward()


def attribute_flag(model):
    mask = torch.ones(3)
    mask.requires_grad = True  # TM607
    model(torch.randn(2, 3) * mask).sum().backward()


def run_batch_input():
    batch_input(nn.Linear(3, 1), torch.randn(2, 3))


def run_legacy_inputs():
    legacy_inputs(nn.Linear(3, 1), torch.randn(2, 3))


def run_attribute_flag():
    attribute_flag(nn.Linear(3, 1))
