"""`torch._six` is gone (2.0); what each of its names stood for on Python 3 is a builtin or the standard library."""
import collections.abc
import importlib
import math

from _check import raises

raises(lambda: importlib.import_module("torch._six"), "No module named 'torch._six'")
raises(lambda: importlib.import_module("torch.utils.serialization").load_lua, "load_lua")
raises(lambda: importlib.import_module("torch.utils.ffi"), "No module named")
assert isinstance("s", (str, bytes)) and isinstance(b"s", (str, bytes))
assert isinstance({}, collections.abc.Mapping) and math.inf > 1e308 and math.nan != math.nan
# the private collate path still works here; the public names are the same function
from torch.utils.data import default_collate  # noqa: E402
from torch.utils.data._utils.collate import default_collate as private  # noqa: E402
from torch.utils.data.dataloader import default_collate as public_before_1_11  # noqa: E402

assert default_collate is private is public_before_1_11
