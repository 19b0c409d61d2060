"""TM611 near-misses: state dicts loaded into models of the same wrapping (every function runs)."""
import os
import tempfile

import torch
import torch.nn as nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

FOLDER = tempfile.mkdtemp()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


def save_the_module():
    model = nn.DataParallel(Net())
    torch.save(model.module.state_dict(), os.path.join(FOLDER, 'net.pth'))
    evaluator = Net()
    evaluator.load_state_dict(torch.load(os.path.join(FOLDER, 'net.pth')))


def strip_the_prefix():
    model = nn.DataParallel(Net())
    torch.save(model.state_dict(), os.path.join(FOLDER, 'dp.pth'))
    state = torch.load(os.path.join(FOLDER, 'dp.pth'))
    consume_prefix_in_state_dict_if_present(state, 'module.')
    evaluator = Net()
    evaluator.load_state_dict(state)


def same_wrapping():
    model = Net()
    model = nn.DataParallel(model)
    torch.save({'state_dict': model.state_dict()}, FOLDER + '/resume.pth')
    checkpoint = torch.load(FOLDER + '/resume.pth')
    model.load_state_dict(checkpoint['state_dict'])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.save(optimizer.state_dict(), FOLDER + '/opt.pth')
    optimizer.load_state_dict(torch.load(FOLDER + '/opt.pth'))


def other_files():
    model = nn.DataParallel(Net())
    torch.save(model.state_dict(), os.path.join(FOLDER, 'a.pth'))
    torch.save(Net().state_dict(), os.path.join(FOLDER, 'b.pth'))
    evaluator = Net()
    evaluator.load_state_dict(torch.load(os.path.join(FOLDER, 'b.pth')))


def main():
    save_the_module(), strip_the_prefix(), same_wrapping(), other_files()


if __name__ == "__main__":
    main()
