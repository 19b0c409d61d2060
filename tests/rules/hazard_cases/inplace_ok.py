"""TM602 near-misses: in-place writes that are legal (every function runs; see test_hazards.py)."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def init_under_no_grad():
    fc = nn.Linear(4, 2)
    with torch.no_grad():
        fc.weight.fill_(0.01)
        fc.bias.zero_()
    nn.init.xavier_uniform_(fc.weight)
    nn.init.constant_(fc.bias, 0.0)
    torch.nn.init.normal_(fc.weight, 0.0, 0.02)
    return fc


def weights_init(m):
    """DCGAN: through .data."""
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


def init_linear(m):
    if isinstance(m, nn.Linear):
        m.weight.fill_(0.01)
        m.bias.zero_()


def dcgan_init():
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(4 * 6 * 6, 1))
    net.apply(weights_init)
    with torch.no_grad():
        net.apply(init_linear)
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
    return net


def manual_sgd(steps=3, lr=0.1):
    model = nn.Linear(3, 1)
    for step in range(steps):
        loss = model(torch.randn(8, 3)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
                p.grad.zero_()


def legacy_manual_sgd(steps=3, lr=0.1):
    w = torch.randn(3, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for step in range(steps):
        loss = (torch.randn(8, 3).mm(w) + b).pow(2).mean()
        loss.backward()
        w.data -= lr * w.grad.data
        b.data.add_(b.grad.data, alpha=-lr)
        w.grad.data.zero_()
        b.grad.zero_()


class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group['lr'])


class LegacySGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                p.data.add_(p.grad.data, alpha=-group['lr'])


def custom_optimizers(steps=2):
    model = nn.Linear(3, 1)
    for optimizer in (PlainSGD(model.parameters()), LegacySGD(model.parameters())):
        for step in range(steps):
            optimizer.zero_grad()
            model(torch.randn(4, 3)).sum().backward()
            optimizer.step()


def soft_update(target, source, tau=0.01):
    with torch.no_grad():
        for t, s in zip(target.parameters(), source.parameters()):
            t.copy_(tau * s + (1 - tau) * t)


def hard_update(target, source):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(s.data)


@torch.no_grad()
def ema_update(ema_model, model, decay=0.99):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)


def target_networks():
    net, target = nn.Linear(3, 2), nn.Linear(3, 2)
    hard_update(target, net)
    soft_update(target, net)
    ema_update(target, net)


def wgan_clipping(steps=2, clip=0.01):
    critic = nn.Linear(4, 1)
    optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
    for step in range(steps):
        optimizer.zero_grad()
        critic(torch.randn(3, 4)).mean().backward()
        optimizer.step()
        for p in critic.parameters():
            p.data.clamp_(-clip, clip)
        with torch.no_grad():
            for p in critic.parameters():
                p.clamp_(-clip, clip)


def frozen_feature_extractor():
    features = nn.Linear(4, 4)
    for param in features.parameters():
        param.requires_grad = False
    features.weight.mul_(0.5)
    head = nn.Linear(4, 1)
    head.weight.requires_grad_(False)
    head.weight.fill_(1.0)
    return features, head


def inplace_on_activations():
    fc = nn.Linear(4, 4)
    x = torch.randn(2, 4, requires_grad=True)
    h = fc(x)
    h.relu_()
    y = x * 2
    y.add_(1)
    (h.sum() + y.sum()).backward()
    return x.grad


def inplace_before_requires_grad():
    w = torch.randn(3)
    w.mul_(0.1)
    w[0] = 1.0
    w.requires_grad_()
    z = torch.zeros(3)
    z = z * 2
    z.add_(1)
    (w * z).sum().backward()
    return w.grad


def grad_mode_off():
    torch.set_grad_enabled(False)
    try:
        layer = nn.Linear(2, 2)
        layer.bias.zero_()
    finally:
        torch.set_grad_enabled(True)


class CustomLinear(nn.Module):
    def __init__(self, n_in=4, n_out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        self.bias = nn.Parameter(torch.empty(n_out))
        self.register_buffer("calls", torch.zeros(()))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        nn.init.uniform_(self.bias, -stdv, stdv)

    def forward(self, x):
        self.calls.add_(1)
        return x.matmul(self.weight.t()) + self.bias


class Rescaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        with torch.no_grad():
            self._init()

    def _init(self):
        self.scale.fill_(0.5)

    def forward(self, x):
        return x * self.scale


def custom_modules():
    layer, rescale = CustomLinear(), Rescaled()
    rescale(layer(torch.randn(2, 4))).sum().backward()


def gradient_accumulation(steps=4, accumulation=2):
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    for i in range(steps):
        loss = model(torch.randn(4, 3)).pow(2).mean() / accumulation
        loss.backward()
        if (i + 1) % accumulation == 0:
            for p in model.parameters():
                p.grad.mul_(0.5)
            optimizer.step()
            optimizer.zero_grad()


def batchnorm_buffers():
    bn = nn.BatchNorm1d(3)
    bn.running_mean.zero_()
    bn.running_var.fill_(1)
    bn.num_batches_tracked += 1
    return bn


@torch.inference_mode()
def quantize(model):
    for p in model.parameters():
        p.copy_(p.round())


def main():
    init_under_no_grad()
    dcgan_init()
    manual_sgd()
    legacy_manual_sgd()
    custom_optimizers()
    target_networks()
    wgan_clipping()
    frozen_feature_extractor()
    inplace_on_activations()
    inplace_before_requires_grad()
    grad_mode_off()
    custom_modules()
    gradient_accumulation()
    batchnorm_buffers()
    quantize(nn.Linear(2, 2))


if __name__ == "__main__":
    main()
