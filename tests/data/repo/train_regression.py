import torch
from torch.autograd import Variable

from proj.data import load

torch.manual_seed(2)
features, labels = load()
target = Variable(labels.float().unsqueeze(1))
w = Variable(torch.randn(4, 1), requires_grad=True)
b = Variable(torch.zeros(1), requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.05)
for step in range(20):
    prediction = Variable(features).mm(w) + b
    loss = ((prediction - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step {} loss {:.6f}".format(step, loss.data[0]))
