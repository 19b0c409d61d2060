"""TM611: state dicts of nn.DataParallel models loaded into bare models, and the reverse.

Each function raises "Missing key(s) in state_dict" (see tests/rules/hazards/test_tm611_dataparallel_checkpoint.py).
"""
import os
import tempfile

import torch
import torch.nn as nn

FOLDER = tempfile.mkdtemp()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


def train_on_gpus_evaluate_on_one():
    model = nn.DataParallel(Net())
    torch.save(model.state_dict(), os.path.join(FOLDER, 'net.pth'))
    evaluator = Net()
    evaluator.load_state_dict(torch.load(os.path.join(FOLDER, 'net.pth')))  # TM611


def resume_wrapped():
    model = Net()
    torch.save({'epoch': 3, 'state_dict': model.state_dict()}, FOLDER + '/checkpoint.pth.tar')
    model = nn.DataParallel(model)
    checkpoint = torch.load(FOLDER + '/checkpoint.pth.tar')
    model.load_state_dict(checkpoint['state_dict'])  # TM611


def not_strict():
    model = nn.parallel.DataParallel(Net()).to('cpu')
    path = os.path.join(FOLDER, 'loose.pth')
    torch.save(model.state_dict(), path)
    bare = Net()
    state = torch.load(path)
    bare.load_state_dict(state, strict=False)  # TM611
    return model.module, bare


HAZARDS = [train_on_gpus_evaluate_on_one, resume_wrapped]
