"""uint8 masks: masked_fill/select/scatter and index assignment raise; indexing and where warn."""
import torch

from _check import raises, warns

x = torch.arange(3.0)
mask = torch.ByteTensor([1, 0, 1])
raises(lambda: x.masked_fill(mask, 5), "only supports boolean masks")
raises(lambda: x.clone().masked_fill_(mask, 5), "only supports boolean masks")
raises(lambda: x.masked_select(mask), "expected BoolTensor")
raises(lambda: x.masked_scatter(mask, torch.ones(3)), "only supports boolean masks")


def assign():
    y = x.clone()
    y[mask] = 0


raises(assign, "only supports boolean masks")
assert warns(lambda: x[mask], "uint8 is now deprecated").tolist() == [0.0, 2.0]
warns(lambda: torch.where(mask, x, -x), "uint8 condition")
# `.bool()` selects what the uint8 mask selected (non-zero), including values other than 1.
wide = torch.ByteTensor([2, 0, 255])
assert x[wide.bool()].tolist() == [0.0, 2.0]
assert x.masked_fill(mask.bool(), 5).tolist() == [5.0, 1.0, 5.0]
