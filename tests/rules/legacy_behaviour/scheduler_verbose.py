"""Learning-rate schedulers no longer take `verbose=` (deprecated in 2.2): the legacy call is a TypeError, and
without it the schedule is the same."""
import torch
from torch.optim import lr_scheduler

from _check import raises

optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
raises(lambda: lr_scheduler.StepLR(optimizer, 2, verbose=False), "verbose")
raises(lambda: lr_scheduler.ReduceLROnPlateau(optimizer, "min", verbose=True), "verbose")
scheduler = lr_scheduler.StepLR(optimizer, 2, gamma=0.5)
rates = []
for _ in range(4):
    optimizer.step()
    scheduler.step()
    rates.append(optimizer.param_groups[0]["lr"])
assert rates == [1.0, 0.5, 0.5, 0.25]
