"""PyTorch 0.3/0.4 idioms that fail or changed meaning on current PyTorch: `.cuda()`,
`torch.cuda.FloatTensor`, `loss.data[0]`, `Variable(..., volatile=True)`,
`type(h) == Variable`, `torch.full` with an int fill, integer `/`, ByteTensor
masks, `.view` of a result that used to be contiguous. (A test adds
`.cuda(async=True)`, a SyntaxError since Python 3.7, to a copy.)"""
import torch
import torch.nn as nn
from torch.autograd import Variable


def repackage(h):
    if type(h) == Variable:
        return Variable(h.data)
    return tuple(repackage(v) for v in h)


torch.manual_seed(0)
model = nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = (Variable(torch.zeros(2)), Variable(torch.zeros(2)))
for step in range(3):
    hidden = repackage(hidden)
    x = Variable(torch.randn(8, 4)).cuda()
    target = Variable(torch.full((8, 2), 1).type(torch.cuda.FloatTensor))
    half = torch.LongTensor([9]) / 2
    mask = torch.ByteTensor(8, 2).zero_()
    mask[half[0]:] = 1
    out = model(x).masked_fill(mask, 0.0)
    loss = ((out - hidden[0] - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f zeros %d" % (step, loss.data[0], out.t().eq(0).view(-1).sum()))
out = model(Variable(torch.randn(8, 4), volatile=True))
print("eval requires_grad", out.requires_grad)
