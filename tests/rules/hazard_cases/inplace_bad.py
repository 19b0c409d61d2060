"""TM602: in-place operations on leaves that require grad, outside torch.no_grad().

Each function raises "a leaf Variable that requires grad is being used in an in-place operation"
(or "a view of a leaf Variable ...") on current PyTorch (test_hazards.py runs them).
"""
import torch
import torch.nn as nn


def init_linear():
    fc = nn.Linear(4, 2)
    fc.weight.fill_(0.01)  # TM602


def manual_sgd(lr=0.1):
    model = nn.Linear(3, 1)
    model(torch.randn(8, 3)).pow(2).mean().backward()
    for p in model.parameters():
        p.add_(-lr * p.grad)  # TM602


def raw_tensor_update(lr=0.1):
    w = torch.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    w -= lr * w.grad  # TM602


def item_assignment():
    z = torch.zeros(4, requires_grad=True)
    z[0] = 1.0  # TM602
    return z


class CustomLinear(nn.Module):
    def __init__(self, n_in=4, n_out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        self.reset_parameters()

    def reset_parameters(self):
        self.weight.uniform_(-0.1, 0.1)  # TM602


def weights_init(m):
    """DCGAN's initialiser with `.data` dropped by a hand migration."""
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.normal_(0.0, 0.02)  # TM602


def dcgan_init():
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())
    net.apply(weights_init)


def batchnorm_init():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.weight.fill_(1)  # TM602


def soft_update(target, source, tau=0.01):
    for t, s in zip(target.parameters(), source.parameters()):
        t.copy_(tau * s + (1 - tau) * t)  # TM602


def fuse(w_bn, w_conv):
    """The seed's conv-bn fusion (002)."""
    fusedconv = nn.Conv2d(3, 3, 1)
    fusedconv.weight.copy_(torch.mm(w_bn, w_conv).view(fusedconv.weight.size()))  # TM602


class Momentumless(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                p.add_(p.grad, alpha=-group['lr'])  # TM602


def custom_optimizer():
    model = nn.Linear(3, 1)
    optimizer = Momentumless(model.parameters())
    model(torch.randn(2, 3)).sum().backward()
    optimizer.step()


def legacy_variable():
    from torch.autograd import Variable
    w = Variable(torch.randn(2, 2), requires_grad=True)
    w.zero_()  # TM602
    return w


HAZARDS = [init_linear, manual_sgd, raw_tensor_update, item_assignment, CustomLinear, dcgan_init, batchnorm_init,
           lambda: soft_update(nn.Linear(2, 2), nn.Linear(2, 2)), lambda: fuse(torch.eye(3), torch.eye(3)),
           custom_optimizer, legacy_variable]
