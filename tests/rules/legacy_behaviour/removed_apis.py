"""Deprecated or removed APIs that legacy training scripts use."""
import importlib

import torch
import torch.utils.data.dataloader as dataloader

from _check import raises

saved = torch.get_default_dtype()
try:
    torch.set_default_tensor_type(torch.DoubleTensor)  # deprecated in 2.1 (warns once), still works
    assert torch.get_default_dtype() == torch.float64
finally:
    torch.set_default_dtype(saved)
raises(lambda: torch.gels, "has no attribute 'gels'")
raises(lambda: torch.rfft, "has no attribute 'rfft'")
raises(lambda: torch.stft(torch.ones(64), 16), "return_complex")
raises(lambda: importlib.import_module("torch.utils.serialization").load_lua, "load_lua")
raises(lambda: importlib.import_module("torch.legacy"), "No module named")
raises(lambda: importlib.import_module("torch.utils.trainer"), "No module named")
raises(lambda: dataloader.DataLoaderIter, "DataLoaderIter")
