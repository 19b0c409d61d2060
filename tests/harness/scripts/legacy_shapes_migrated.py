"""legacy_shapes.py migrated by hand to current PyTorch."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(12, 4), torch.randint(0, 3, (12,)))
model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(DataLoader(data, batch_size=4)):
    losses = []
    for i in range(x.size(0)):
        output = model(x[i].view(1, -1))
        losses.append(criterion(output, y[i:i + 1]) + 0.1 * F.nll_loss(F.log_softmax(output, 1), y[i:i + 1]))
    loss = torch.stack(losses).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.item()))
