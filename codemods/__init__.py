"""Rule registry: ``all_rules()`` is the one list of every family's rules.

A family is a package with one rule per module (``data/tm301_data_index_zero.py`` holds ``RULE``),
found by ``family_rules``, or (until it is ported) a module that exports ``RULES``.
Families (codes by hundred):
  TM1xx variable/     ``torch.autograd.Variable`` and ``volatile``
  TM2xx device/       ``.cuda()``/``torch.cuda.*Tensor`` -> one ``torch.device``; asynckw.py (TM203)
  TM3xx data/         ``.data[0]``, ``.data`` reads and manual updates
  TM4xx deprecated/  renamed functions, changed signatures, removed keywords and modules (tables in torchapi/)
  TM5xx current/      behaviour changes after 0.4 (``torch.load``, ``torch.full``, legacy Functions, ...)
  TM6xx hazards/     autograd hazards that ``check`` reports (and loss shapes, step order, DataParallel keys)
  TM7xx ecosystem/    mixed precision (``torch.cuda.amp``, apex) and TensorBoard around torch
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Iterable, List, Optional

FAMILIES = ("variable", "device", "asynckw", "data", "deprecated", "current", "hazards", "ecosystem")
RULE_MODULE = re.compile(r"^tm\d{3}_\w+$")
_registry: List[type] = []


def family_rules(family: str) -> List[type]:
    """The rules of one family, by code: its ``tmNNN_*`` modules' ``RULE`` (or a plain module's ``RULES``)."""
    module = importlib.import_module(f"codemods.{family}")
    if not hasattr(module, "__path__"):
        return sorted(module.RULES, key=lambda rule: rule.code)
    names = sorted(info.name for info in pkgutil.iter_modules(module.__path__) if RULE_MODULE.match(info.name))
    return [importlib.import_module(f"codemods.{family}.{name}").RULE for name in names]


def all_rules() -> List[type]:
    """Every rule, by code. The families (and libcst) are imported on first use, so that a run the cache
    serves entirely, or ``--version``, never loads them."""
    if not _registry:
        _registry.extend(sorted((rule for family in FAMILIES for rule in family_rules(family)),
                                key=lambda rule: rule.code))
    return _registry


def _matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(prefix) for prefix in prefixes)


def select_rules(select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None) -> List[type]:
    """Rules whose code starts with a ``select`` prefix (all by default) and with no ``ignore`` prefix."""
    select = [s.strip().upper() for s in (select or ["TM"]) if s.strip()]
    ignore = [s.strip().upper() for s in (ignore or []) if s.strip()]
    rules = all_rules()
    unknown = [p for p in (*select, *ignore) if not any(r.code.startswith(p) for r in rules)]
    if unknown:
        raise ValueError(f"unknown rule code(s): {', '.join(unknown)}")
    return [r for r in rules if _matches(r.code, select) and not _matches(r.code, ignore)]
