"""torch.load defaults to weights_only=True (2.6): whole models, optimizers, Namespaces and numpy refuse."""
import argparse
import io

import numpy as np
import torch
import torch.nn as nn

from _check import raises


def roundtrip(obj, **kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **kwargs)


model = nn.Linear(2, 2)
for refused in (model, torch.optim.SGD(model.parameters(), lr=0.1), {"args": argparse.Namespace(lr=0.1)},
                {"best": np.float64(0.5)}, {"mean": np.zeros(3)}):
    raises(lambda: roundtrip(refused), "Weights only load failed")
# What TM501 writes restores the legacy (full pickle) load, same weights.
loaded = roundtrip(model, weights_only=False)
assert torch.equal(loaded.weight, model.weight)
# What TM501 leaves alone still loads.
state = {"state_dict": model.state_dict(), "optimizer": torch.optim.SGD(model.parameters(), lr=0.1).state_dict(),
         "epoch": 3, "best_prec1": 0.5, "arch": "resnet", "t": torch.ones(1)}
assert roundtrip(state)["epoch"] == 3
