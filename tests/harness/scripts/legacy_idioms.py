"""PyTorch 0.3 idioms that fail or changed meaning on current PyTorch: `.cuda()`,
`torch.cuda.FloatTensor`, `loss.data[0]`, `Variable(..., volatile=True)`. (A test
adds `.cuda(async=True)`, a SyntaxError since Python 3.7, to a copy.)"""
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
model = nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = Variable(torch.randn(8, 4)).cuda()
    target = Variable(torch.cuda.FloatTensor(8, 2).fill_(1))
    loss = ((model(x) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.data[0]))
out = model(Variable(torch.randn(8, 4), volatile=True))
print("eval requires_grad", out.requires_grad)
