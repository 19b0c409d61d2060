import argparse

import torch
import torch.nn.functional as F
from torch.autograd import Variable

from proj.data import load
from proj.model import Classifier

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--no-cuda", action="store_true", default=False)
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
torch.manual_seed(1)

features, labels = load()
model = Classifier()
if args.cuda:
    model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(args.epochs):
    for start in range(0, len(features), 16):
        data, target = features[start:start + 16], labels[start:start + 16]
        if args.cuda:
            data, target = data.cuda(), target.cuda()
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        print("epoch {} loss {:.6f}".format(epoch, loss.data[0]))
