"""legacy_idioms.py migrated by hand to current PyTorch."""
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4).to(device, non_blocking=True)
    target = torch.ones(8, 2, device=device)
    loss = ((model(x) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
with torch.no_grad():
    out = model(torch.randn(8, 4).to(device))
print("eval requires_grad", out.requires_grad)
