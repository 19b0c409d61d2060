"""Checked and unchanged: things a 0.3-era script does that still behave the same."""
import torch
import torch.nn as nn

assert torch.cat([torch.Tensor(), torch.ones(2, 3)]).shape == (2, 3)
assert torch.zeros(3).index_add_(0, torch.tensor([0, 1]), torch.ones(2)).tolist() == [1.0, 1.0, 0.0]
assert torch.tensor([0, 1, 1]).nonzero().shape == (2, 1)
assert torch.ones(1).type() == "torch.FloatTensor"
assert abs(torch.norm(torch.ones(3), 2).item() - 3 ** 0.5) < 1e-6
assert torch.tensor([200, 100], dtype=torch.uint8).sum().item() == 300
batch = next(iter(torch.utils.data.DataLoader(list(range(4)), batch_size=2, pin_memory=True)))
assert batch.tolist() == [0, 1]
assert nn.DataParallel(nn.Linear(2, 2))(torch.ones(1, 2)).shape == (1, 2)
assert nn.Linear(2, 2).register_backward_hook(lambda *args: None) is not None
