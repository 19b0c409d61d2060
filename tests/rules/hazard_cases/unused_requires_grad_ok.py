"""TM607 near-misses: tensors whose requires_grad is needed (optimised, differentiated, inspected)."""
import torch
import torch.nn as nn
from torch import autograd
from torch.autograd import Variable

torch.manual_seed(0)


def optimised_latent(steps=2):
    z = torch.zeros(1, 4, requires_grad=True)
    decoder = nn.Linear(4, 4)
    optimizer = torch.optim.Adam([z], 0.1)
    for step in range(steps):
        optimizer.zero_grad()
        decoder(z).pow(2).sum().backward()
        optimizer.step()
    return z


def deep_dream(model, steps=2):
    image = torch.rand(1, 4).requires_grad_(True)
    optimizer = torch.optim.SGD([image], lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        (-model(image).norm()).backward()
        optimizer.step()
    return image.detach()


def saliency(model):
    img = torch.rand(1, 4)
    img.requires_grad_()
    out = model(img)
    out.max().backward()
    return img.grad.abs()


def fgsm(model, images, labels, eps=0.1):
    x = images.clone().requires_grad_(True)
    loss = nn.functional.cross_entropy(model(x), labels)
    loss.backward()
    return x + eps * x.grad.sign()


def wgan_gp_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interpolates = alpha * real + (1 - alpha) * fake
    interpolates = Variable(interpolates, requires_grad=True)
    d = critic(interpolates)
    gradients = autograd.grad(outputs=d, inputs=interpolates, grad_outputs=torch.ones_like(d),
                              create_graph=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def legacy_regression(steps=2, lr=0.01):
    w = Variable(torch.randn(3, 1), requires_grad=True)
    for step in range(steps):
        loss = torch.randn(5, 3).mm(w).pow(2).mean()
        loss.backward()
        w.data -= lr * w.grad.data
        w.grad.data.zero_()
    return w


def make_latent(n):
    latent = torch.randn(n, 4, requires_grad=True)
    return latent


def build_optimizer(tensor):
    return torch.optim.SGD([tensor], lr=0.1)


def passed_to_helper():
    code = torch.zeros(2, requires_grad=True)
    optimizer = build_optimizer(code)
    (code * 2).sum().backward()
    optimizer.step()


def gradcheck():
    x = torch.randn(3, dtype=torch.double, requires_grad=True)
    return torch.autograd.gradcheck(torch.sin, (x,))


def input_gradient():
    x = torch.linspace(0, 1, 5)
    x.requires_grad = True
    y = (x ** 3).sum()
    dy_dx, = torch.autograd.grad(y, x)
    return dy_dx


class Prompt(nn.Module):
    def __init__(self):
        super().__init__()
        tokens = torch.zeros(2, 4, requires_grad=True)
        self.tokens = tokens
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x + self.tokens.sum() * self.scale


def frozen_then_unfrozen(model):
    for p in model.parameters():
        p.requires_grad = False
    for p in model[-1].parameters():
        p.requires_grad = True
    return [p for p in model.parameters() if p.requires_grad]


def hooked():
    x = torch.randn(3, requires_grad=True)
    seen = []
    x.register_hook(seen.append)
    (x * 2).sum().backward()
    return seen


def no_grad_input():
    style = torch.rand(1, 3, 4, 4)
    style = style.repeat(2, 1, 1, 1)
    vgg = nn.Conv2d(3, 2, 1)
    for param in vgg.parameters():
        param.requires_grad = False
    return vgg(style)


class PINN(nn.Module):
    """The model differentiates its output with respect to its input inside forward."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        u = self.net(x)
        du_dx, = torch.autograd.grad(u.sum(), x, create_graph=True)
        return du_dx - u


def physics_informed(steps=2):
    model = PINN()
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)
    x = torch.linspace(0, 1, 16).unsqueeze(1).requires_grad_(True)
    for step in range(steps):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()


def main():
    model = nn.Linear(4, 3)
    optimised_latent()
    deep_dream(model)
    saliency(model)
    fgsm(model, torch.randn(2, 4), torch.tensor([0, 1]))
    wgan_gp_penalty(nn.Linear(4, 1), torch.randn(3, 4), torch.randn(3, 4))
    legacy_regression()
    make_latent(2)
    passed_to_helper()
    gradcheck()
    input_gradient()
    Prompt()(torch.randn(4))
    frozen_then_unfrozen(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)))
    hooked()
    no_grad_input()
    physics_informed()


if __name__ == "__main__":
    main()
