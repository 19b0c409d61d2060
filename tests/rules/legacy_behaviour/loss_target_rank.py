"""An (N, 1) input with an (N,) target: BCE losses raise, regression losses broadcast to (N, N) with a warning.

0.3 broadcast both with a warning; code scored a `Linear(k, 1)` output against `torch.ones(batch)`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from _check import raises, warns

column, vector = torch.rand(4, 1), torch.rand(4)
raises(lambda: nn.BCELoss()(column, vector), "different to the input size")
raises(lambda: F.binary_cross_entropy_with_logits(column, vector), "must be the same as input size")
for loss in (F.mse_loss, F.l1_loss, F.smooth_l1_loss):
    broadcast = warns(lambda: loss(column, vector), "Using a target size")
    assert not torch.allclose(broadcast, loss(column.squeeze(1), vector))  # (N, N) pairs, not N
    assert loss(column, vector, reduction="none").shape == (4, 4)
