"""An integer index into a 1-dim tensor gives a 0-dim tensor (0.4); 0.3 gave a (1,) Variable, or a Python number
for a plain tensor."""
import torch
import torch.nn.functional as F

from _check import raises

target = torch.tensor([2, 0, 1])
assert target[1].dim() == 0 and target[1:2].shape == (1,)
logits = torch.randn(1, 3)
# A loss of a batch of one against an element: the target's batch is gone.
raises(lambda: F.cross_entropy(logits, target[0]), "Expected input batch_size (1) to match target batch_size (0)")
raises(lambda: F.nll_loss(F.log_softmax(logits, 1), target[0]), "batch_size")
# TM306's fix is the 0.3 shape: the same as the slice.
assert torch.equal(F.cross_entropy(logits, target[0].unsqueeze(0)), F.cross_entropy(logits, target[0:1]))
# Two 0-dim values give what two (1,) vectors gave (so a pair of elements is left alone).
a, b = torch.randn(3), torch.randn(3)
assert torch.equal(F.mse_loss(a[1], b[1]), F.mse_loss(a[1:2], b[1:2]))
# `.data[0]` of a shape-(1,) value: a 0-dim tensor, not the Python number 0.3 gave.
one = torch.tensor([0.25])
assert isinstance(one.data[0], torch.Tensor) and one.data[0].dim() == 0
assert isinstance(one.data[0].item(), float)
# Printing and `%` formatting show `tensor(...)`; `.format()` and f-strings format the number.
x = torch.tensor([0.25, 0.75])
assert str(x[0] > 0.5) == "tensor(False)" and str((x[0] > 0.5).item()) == "False"
assert "%s" % x[0] == "tensor(0.2500)" and "%s" % x[0].item() == "0.25"
assert "{}".format(x[0]) == "0.25" and f"{x[0]:.2f}" == "0.25" and "%.2f" % x[0] == "0.25"
# A 0-dim tensor hashes by identity: a dict key lookup fails where the number worked.
words = {0: "the", 1: "cat"}
index = torch.tensor([1, 0])
raises(lambda: words[index[0]], "tensor(1)")
assert words[index[0].item()] == "cat"
# Branches decide as the number did; list indexing takes a 0-dim integer tensor.
assert bool(x[1] > 0.5) and ["a", "b"][index[0]] == "b"
# `torch.cat` of 0-dim tensors raises (TM305 turns it into `torch.stack`).
raises(lambda: torch.cat([x[0], x[1]]), "zero-dimensional tensor")
