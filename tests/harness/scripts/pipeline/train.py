"""Pipeline step 1, in the PyTorch 0.3 idiom: train, save the whole model (pickled) for infer.py."""
import torch
import torch.nn.functional as F
from torch.autograd import Variable

from model import Net

torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.LongTensor(32).random_(0, 2)
for step in range(4):
    optimizer.zero_grad()
    loss = F.nll_loss(model(Variable(x)), Variable(y))
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.item()))
torch.save(model, "model.pt")
