"""A `DataParallel` model's state dict has `module.` keys: a bare model refuses it (and the reverse).

Not a change of torch: `load_state_dict` is strict by default; legacy multi-GPU scripts evaluated on one
device (or the CPU) hit it. `consume_prefix_in_state_dict_if_present` (torch >= 1.9) strips the prefix.
"""
import torch.nn as nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from _check import raises

wrapped = nn.DataParallel(nn.Linear(3, 2))
state = wrapped.state_dict()
assert list(state) == ["module.weight", "module.bias"]
raises(lambda: nn.Linear(3, 2).load_state_dict(state), "Missing key(s) in state_dict")
raises(lambda: nn.DataParallel(nn.Linear(3, 2)).load_state_dict(nn.Linear(3, 2).state_dict()), "Missing key(s)")
loose = nn.Linear(3, 2)
result = loose.load_state_dict(state, strict=False)
assert result.missing_keys == ["weight", "bias"]  # nothing loaded, no error
consume_prefix_in_state_dict_if_present(state, "module.")
nn.Linear(3, 2).load_state_dict(state)
