"""0.3 code that current PyTorch refuses: TensorDataset's removed keywords, backward(retain_variables=),
a loss of a (1, C) output against target[i] (shape (1,) in 0.3, 0-dim now), torch.cat of one-number losses."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(data_tensor=torch.randn(12, 4), target_tensor=torch.randint(0, 3, (12,)))
model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(DataLoader(data, batch_size=4)):
    x, y = Variable(x), Variable(y)
    losses = []
    for i in range(x.size(0)):
        output = model(x[i].view(1, -1))
        losses.append(criterion(output, y[i]) + 0.1 * F.nll_loss(F.log_softmax(output, 1), y[i]))
    loss = torch.cat(losses).mean()
    optimizer.zero_grad()
    loss.backward(retain_variables=True)
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.data[0]))
