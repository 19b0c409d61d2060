"""TM609 near-misses: losses whose input and target shapes agree, class targets, and unknown shapes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def classifier():
    head = nn.Linear(4, 3)
    targets = torch.tensor([0, 2, 1, 1])
    return nn.CrossEntropyLoss()(head(torch.randn(4, 4)), targets)


def columns():
    D = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
    return nn.BCELoss()(D(torch.randn(6, 4)), torch.ones(6, 1))


def flattened():
    D = nn.Linear(4, 1)
    output = D(torch.randn(6, 4)).view(-1)
    return F.binary_cross_entropy_with_logits(output, torch.full((6,), 1.0))


def squeezed():
    D = nn.Linear(4, 1)
    return nn.MSELoss()(D(torch.randn(6, 4)).squeeze(1), torch.zeros(6))


def from_loader(loader):
    model = nn.Linear(3, 1)
    for x, y in loader:
        return F.mse_loss(model(x), y)


def vectors(n=4):
    scores = torch.randn(n)
    return F.smooth_l1_loss(scores, torch.zeros(n))


def main():
    classifier(), columns(), flattened(), squeezed(), vectors()
    from_loader([(torch.randn(4, 3), torch.randn(4, 1))])


if __name__ == "__main__":
    main()
