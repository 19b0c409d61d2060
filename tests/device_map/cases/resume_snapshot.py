import argparse
import torch
import torch.nn as nn
from torch.autograd import Variable

parser = argparse.ArgumentParser()
parser.add_argument('--resume_snapshot', default='')
parser.add_argument('--gpu', type=int, default=0)
args = parser.parse_args()
torch.cuda.set_device(args.gpu)

if args.resume_snapshot:
    model = torch.load(args.resume_snapshot, map_location=lambda storage, location: storage.cuda(args.gpu))
else:
    model = nn.Linear(3, 2)
    model.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = Variable(torch.randn(4, 3).cuda())
    y = Variable(torch.LongTensor([0, 1, 0, 1]).cuda())
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(loss.data[0])
