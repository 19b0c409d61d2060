"""Equivalence harness: prove a migrated training script trains like the original.

Layers (each imports only those above it): ``bootstrap``/``recorder``/``compat``
run inside the child interpreter (stdlib + torch only); ``runner`` starts and
cleans up children; ``comparer`` judges two records; ``attribution`` names the
changed lines; ``verify`` ties them together; ``report`` and ``cli`` present.
"""
from .verify import (
    EXIT_DIFFERENT,
    EXIT_EQUIVALENT,
    EXIT_NO_COMPARISON,
    EXIT_USAGE,
    UsageError,
    VerifyOptions,
    VerifyResult,
    verify_scripts,
)

__all__ = [
    "EXIT_DIFFERENT", "EXIT_EQUIVALENT", "EXIT_NO_COMPARISON", "EXIT_USAGE", "UsageError",
    "VerifyOptions", "VerifyResult", "verify_scripts",
]
