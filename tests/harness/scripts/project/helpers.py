import torch


def make_model():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1)
