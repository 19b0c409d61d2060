"""Defaults of ``--mode curve``, in a module without torch: the command's definition (``cli``) shows them
and ``torch-migrate --help`` must not import torch. Why these values: ``curve``'s docstring."""

CURVE_RTOL = 0.05
CURVE_FRACTION = 0.05
