"""``.cuda()`` calls under guards that are not about CUDA (a resume flag, a mode switch) and none at all."""
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--finetune', action='store_true')
parser.add_argument('--mode', default='train')
args = parser.parse_args()

encoder = nn.Linear(3, 3)
head = nn.Linear(3, 1)
if not args.finetune:
    encoder.cuda()
    head.cuda()
else:
    head.cuda()
if args.mode == 'train':
    criterion = nn.MSELoss().cuda()
else:
    criterion = nn.L1Loss().cuda()
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.01)
for step in range(3):
    x = torch.randn(8, 3).cuda()
    loss = criterion(head(encoder(x)), torch.zeros(8, 1).cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
