"""TM609: element-wise losses of an (N, 1) input and an (N,) target.

The BCE losses raise "Using a target size ... that is different to the input size" (or "Target size ... must
be the same as input size"); the regression losses broadcast to (N, N) with a UserWarning (see
tests/rules/hazards/test_tm609_loss_target_rank.py).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)


def gan_discriminator():
    D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
    criterion = nn.BCELoss()
    x = torch.randn(6, 4)
    real = Variable(torch.ones(x.size(0)))
    return criterion(D(x), real)  # TM609


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


def regression():
    model = Regressor()
    x, y = torch.randn(5, 3), torch.randn(5)
    return F.mse_loss(model(x), y)  # TM609


def logits():
    scores = torch.randn(8).view(-1, 1)
    labels = torch.full((scores.size(0),), 1.0)
    return F.binary_cross_entropy_with_logits(scores, labels)  # TM609


def ranking():
    scores = torch.randn(5)
    pred = torch.sigmoid(scores.unsqueeze(1))
    return nn.L1Loss()(pred, torch.zeros(len(scores)))  # TM609


RAISING = [gan_discriminator, logits]
BROADCASTING = [regression, ranking]
