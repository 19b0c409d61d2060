"""Equivalence harness: prove a migrated training script trains like the original.

Layers (each imports only those above it): ``bootstrap``/``recorder``/``compat``
run inside the child interpreter (stdlib + torch only); ``runner`` starts and
cleans up children; ``comparer`` judges two records; ``attribution`` names the
changed lines; ``verify`` ties them together; ``report`` and ``cli`` present.

The names below are loaded on first use, so that ``cli`` (the command's
definition, needed by ``torch-migrate --help``) imports neither torch nor numpy.
"""
import importlib

__all__ = [
    "EXIT_DIFFERENT", "EXIT_EQUIVALENT", "EXIT_NO_COMPARISON", "EXIT_USAGE", "UsageError",
    "VerifyOptions", "VerifyResult", "verify_scripts",
]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".verify", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
