"""TM604 near-misses: retain_graph=True where a second backward really goes through the same graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


def actor_critic(steps=2):
    """Two losses from one forward: the first backward must keep the shared graph."""
    body, actor, critic = nn.Linear(4, 8), nn.Linear(8, 2), nn.Linear(8, 1)
    params = list(body.parameters()) + list(actor.parameters()) + list(critic.parameters())
    optimizer = torch.optim.Adam(params, 1e-3)
    for step in range(steps):
        h = F.relu(body(torch.randn(3, 4)))
        policy_loss = -F.log_softmax(actor(h), dim=-1)[:, 0].mean()
        value_loss = critic(h).pow(2).mean()
        optimizer.zero_grad()
        policy_loss.backward(retain_graph=True)
        value_loss.backward()
        optimizer.step()


def gan_shared_fake(steps=2):
    """The generator's graph is used by D's fake loss and again by G's loss."""
    netG, netD = nn.Linear(2, 4), nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
    optimizerD = torch.optim.Adam(netD.parameters(), 2e-4)
    optimizerG = torch.optim.Adam(netG.parameters(), 2e-4)
    criterion = nn.BCELoss()
    for step in range(steps):
        netD.zero_grad()
        fake = netG(torch.randn(3, 2))
        errD_fake = criterion(netD(fake), torch.zeros(3, 1))
        errD_fake.backward(retain_graph=True)
        optimizerD.step()
        netG.zero_grad()
        errG = criterion(netD(fake), torch.ones(3, 1))
        errG.backward()
        optimizerG.step()


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = critic(interpolates)
    gradients = autograd.grad(outputs=d_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones_like(d_interpolates),
                              create_graph=True, retain_graph=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def wgan_gp(steps=2):
    critic = nn.Linear(4, 1)
    optimizer = torch.optim.Adam(critic.parameters(), 1e-4)
    for step in range(steps):
        real, fake = torch.randn(3, 4), torch.randn(3, 4)
        optimizer.zero_grad()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gradient_penalty(critic, real, fake)
        loss.backward()
        optimizer.step()


def jacobian_rows():
    x = torch.randn(3, requires_grad=True)
    y = x.pow(2) * 3
    rows = []
    for i in range(3):
        grad_x, = torch.autograd.grad(y[i], x, retain_graph=True)
        rows.append(grad_x)
    return torch.stack(rows)


def repeated_backward_of_one_loss():
    w = torch.ones(2, requires_grad=True)
    loss = (w * 3).sum()
    for i in range(3):
        loss.backward(retain_graph=True)
    return w.grad


def backward_helper(loss, keep):
    loss.backward(retain_graph=keep)


def through_arguments():
    w = torch.ones(2, requires_grad=True)
    out = (w * 2).sum()
    backward_helper(out, True)
    backward_helper(out, False)
    return w.grad


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.head = nn.Linear(3, 3), nn.Linear(3, 1)
        self.aux_loss = None

    def backward_aux(self):
        self.aux_loss.backward(retain_graph=True)

    def forward(self, x):
        h = self.body(x)
        self.aux_loss = h.pow(2).mean()
        return self.head(h)


def retained_on_attribute():
    model = TwoHeads()
    out = model(torch.randn(2, 3))
    model.backward_aux()
    out.sum().backward()


def configurable(retain=False):
    w = torch.ones(2, requires_grad=True)
    loss = (w * 2).sum()
    loss.backward(retain_graph=retain)
    loss.backward(retain_graph=bool(retain))
    return w.grad


def per_output_gradients():
    """One forward before the loop, one backward per output (NTK-style): the loop shares that graph."""
    model = nn.Linear(3, 2)
    y_pred = model(torch.randn(4, 3))
    rows = []
    for j in range(2):
        total = torch.sum(y_pred, 0)
        model.zero_grad()
        total[j].backward(retain_graph=True)
        rows.append(model.weight.grad.clone())
    return rows


def microbatches(clipping=1.0):
    """DP-SGD style: per-example losses from one forward, back-propagated in slices."""
    model = nn.Linear(3, 1)
    losses = (model(torch.randn(6, 3)) ** 2).squeeze(1)
    saved = [torch.zeros_like(p) for p in model.parameters()]
    for i in range(3):
        loss = losses[i * 2:(i + 1) * 2].mean()
        loss.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), clipping)
        for buffer, p in zip(saved, model.parameters()):
            buffer.add_(p.grad)
        model.zero_grad()
    return saved


def outputs_and_grads(fn, inputs):
    """Every output of one forward, back-propagated in turn."""
    outs = fn(*inputs)
    for out in outs:
        if out.requires_grad:
            out.sum().backward(retain_graph=True)
    return [x.grad for x in inputs]


def main():
    actor_critic()
    gan_shared_fake()
    wgan_gp()
    jacobian_rows()
    repeated_backward_of_one_loss()
    through_arguments()
    retained_on_attribute()
    configurable(True)
    per_output_gradients()
    microbatches()
    outputs_and_grads(lambda x: (x * 2, x ** 2), [torch.ones(2, requires_grad=True)])


if __name__ == "__main__":
    main()
