"""Pipeline step 2, in the PyTorch 0.3 idiom: load the pickled model train.py saved, predict."""
import torch
from torch.autograd import Variable

model = torch.load("model.pt")
model.eval()
torch.manual_seed(1)
batch = Variable(torch.randn(6, 4), volatile=True)
scores = model(batch)
print("predictions", scores.data.max(1)[1].tolist())
torch.save(scores.data, "scores.pt")
