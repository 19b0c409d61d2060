"""NumPy 1.24 removed the builtin aliases np.float, np.int, ...; torch 2.13 runs on NumPy 2."""
import numpy as np

from _check import raises

for alias in ("float", "int", "object", "str", "complex", "unicode"):
    raises(lambda alias=alias: getattr(np, alias), "has no attribute")
# The builtins give the dtypes the aliases gave.
assert np.zeros(2, dtype=float).dtype == np.float64 and np.zeros(2, dtype=int).dtype == np.int_
