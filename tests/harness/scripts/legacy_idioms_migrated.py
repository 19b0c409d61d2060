"""legacy_idioms.py migrated by hand to current PyTorch."""
import torch
import torch.nn as nn


def repackage(h):
    return tuple(v.detach() for v in h)


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = (torch.zeros(2, device=device), torch.zeros(2, device=device))
for step in range(3):
    hidden = repackage(hidden)
    x = torch.randn(8, 4).to(device, non_blocking=True)
    target = torch.full((8, 2), 1.0, device=device)
    half = torch.tensor([9]) // 2
    mask = torch.zeros(8, 2, dtype=torch.bool, device=device)
    mask[half[0]:] = True
    out = model(x).masked_fill(mask, 0.0)
    loss = ((out - hidden[0] - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f} zeros {int(out.t().eq(0).reshape(-1).sum())}")
with torch.no_grad():
    out = model(torch.randn(8, 4).to(device))
print("eval requires_grad", out.requires_grad)
