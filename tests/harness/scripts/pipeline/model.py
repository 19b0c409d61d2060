"""The model of the train -> infer pipeline (a module, so that a pickled model unpickles in infer.py)."""
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))))
