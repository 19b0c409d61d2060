"""``--no-cuda`` flag: everything guarded by ``args.cuda`` moves; the device follows the flag."""
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

parser = argparse.ArgumentParser()
parser.add_argument('--no-cuda', action='store_true', default=False)
parser.add_argument('--resume', default='')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
if args.resume:
    model.load_state_dict(torch.load(args.resume))
if args.cuda:
    model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = torch.zeros(5, 4)
if args.cuda:
    hidden = hidden.cuda()
for step in range(4):
    data, target = torch.randn(5, 4), torch.LongTensor(5).random_(0, 3)
    if args.cuda:
        data, target = data.cuda(), target.cuda()
    data, target = Variable(data + hidden), Variable(target)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
    print(step, loss.data[0])
