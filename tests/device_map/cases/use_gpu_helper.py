"""A ``use_gpu`` module constant, a ``to_var`` helper and a tensor type chosen by it."""
import torch
import torch.nn as nn
from torch.autograd import Variable

use_gpu = torch.cuda.is_available()
FloatTensor = torch.cuda.FloatTensor if use_gpu else torch.FloatTensor


def to_var(x, volatile=False):
    if use_gpu:
        x = x.cuda()
    return Variable(x, volatile=volatile)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        noise = Variable(FloatTensor(x.size()).normal_(0, 0.01))
        return self.fc(x + noise)


net = Net()
if use_gpu:
    net = net.cuda()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    x = to_var(torch.randn(4, 6))
    loss = net(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(loss.data[0])
print(net(to_var(torch.randn(2, 6), volatile=True)).data.sum())
