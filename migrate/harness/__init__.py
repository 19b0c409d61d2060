"""Equivalence harness: prove a migrated training script trains like the original.

Layers (each imports only those above it):

- ``child/`` runs inside the child interpreter (stdlib + torch, Python 3.5 syntax):
  ``bootstrap`` (entry point), ``recorder`` with ``evaluation``, ``metrics`` and ``files``,
  ``compat``, and ``schema``, the one description of every record kind and field, shared
  with the parent;
- ``records``: the parent's typed records, built from the schema;
- ``runner``: ``RunSpec`` (picklable) -> ``RunOutcome`` (picklable, self-contained);
  ``run_side`` runs a pipeline of specs in one mirror;
- ``comparer``: two outcomes -> ``PairComparison`` (pure: no runs, no files); the steps, and through
  ``outputs`` evaluation calls, stdout/stderr (``text`` normalises printed text), metrics and files;
- ``attribution`` names the changed lines; ``verify`` plans runs (``plan_runs``),
  makes them (``run_locally``) and judges them (``judge``); ``report`` and ``cli`` present;
- ``jobs``: one entry point's verification as a picklable ``Job`` and the one function that runs it;
  ``fanout`` runs jobs side by side in local processes or on Ray.

The names below are loaded from ``verify`` on first use, so that ``cli`` (the command's
definition, needed by ``torch-migrate --help``) imports neither torch nor numpy.
"""
import importlib

__all__ = [
    "EXIT_DIFFERENT", "EXIT_EQUIVALENT", "EXIT_NO_COMPARISON", "EXIT_USAGE", "UsageError",
    "VerifyOptions", "VerifyResult", "judge", "plan_runs", "run_locally", "verify_pipeline",
    "verify_scripts",
]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".verify", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
