"""TM4xx: deprecated, renamed and removed APIs, driven by the tables of ``codemods.torchapi.deprecations``
(the README's deprecated-API table comes from them, with the torch version each replacement needs from
``codemods.torchapi.since``).

Legacy scripts call functions that were renamed (``F.sigmoid``, ``nn.init.xavier_uniform``,
``clip_grad_norm``), removed (``torch.gesv``, ``torch.potrf``, ``torch._six``), or whose arguments changed
(``size_average=``/``reduce=`` became ``reduction=``; ``add_(value, other)`` became ``add_(other,
alpha=value)``; ``TensorDataset(data_tensor=...)`` became positional). A rewrite is made only where it
computes the same values; where that depends on something only known at run time (a softmax without
``dim``, a non-literal ``size_average``), the call is reported.

One rule per module (``tm401_renamed_function.py``, ...), found by ``codemods.family_rules``, on the file's
semantic model (``ctx.model``). ``common.py`` holds what the fixes share; ``arguments.py`` TM401's argument
rewriting; ``signatures.py`` the scalar-first signatures (shared with the data family's TM304).
"""
from __future__ import annotations

from typing import List, Tuple

from codemods.deprecated.signatures import modern_signature  # noqa: F401  (TM304 uses it)
from codemods.torchapi.deprecations import (DROPPED_KEYWORDS, LEGACY_POSITIONAL, POSITIONAL_KEYWORDS,
                                            RENAMED_KEYWORDS, RENAMES, REMOVED_MODULES, REPORTED, SPECIAL_RENAMES)
from codemods.torchapi.since import needed

# Behaviour changes behind this family's rules, for the README's behaviour table (``migrate.docs``); each
# row is shown on the installed torch by a script under ``tests/rules/legacy_behaviour/``.
BEHAVIOUR_CHANGES = (
    {"change": "`TensorDataset(data_tensor=x, target_tensor=y)` raises TypeError: the dataset takes `*tensors`",
     "version": "0.4", "handling": "TM408", "script": "tensor_dataset_keywords.py"},
    {"change": "`torch._six` is gone (`from torch._six import string_classes, container_abcs, inf` raises "
               "ModuleNotFoundError)", "version": "2.0", "handling": "TM409", "script": "removed_modules.py"},
    {"change": "learning-rate schedulers no longer take `verbose=` (TypeError)", "version": "2.2 deprecated, "
     "later removed", "handling": "TM408", "script": "scheduler_verbose.py"},
    {"change": "`torch.cat(seq=)`, `torch.stack(sequence=)`, `Module.cuda(device_id=)` keywords raise TypeError "
               "(`tensors=`, `device=`)", "version": "0.4", "handling": "TM407", "script": "renamed_keywords.py"},
)


def table_rows() -> List[Tuple[str, str, str, str, str]]:
    """(rule code, old, current, torch version the current spelling needs, note) for every table entry: the
    README's deprecated-API table."""
    rows = [("TM401", old, rep.new, needed(rep.new, rep.written_keywords), rep.note) for old, rep in RENAMES.items()]
    rows += [("TM401", old, new, needed(new), what) for old, (new, what) in SPECIAL_RENAMES.items()]
    rows += [("TM405", old, "reported", "", why) for old, why in REPORTED.items()]
    rows += [("TM407", f"{where}({old}=)", f"{where}({new}=)", "0.4", "same meaning; the old keyword is a TypeError "
              "or deprecated") for where, renames in RENAMED_KEYWORDS.items() for old, new in renames.items()]
    rows += [("TM408", f"{where}({', '.join(k + '=' for k in names)})", f"{where}({', '.join(names)})", "0.4",
              "removed keywords: the values become positional") for where, names in POSITIONAL_KEYWORDS.items()]
    rows += [("TM408", f"{where}({name}=)", "dropped", "0.4", why) for where, (name, why) in DROPPED_KEYWORDS.items()]
    rows += [("TM408", f"{where}({', '.join(params[:params.index('verbose') + 2])}, ...)", "dropped", "0.4",
              "a literal bool in `verbose`'s legacy position goes; the arguments after it are named")
             for where, params in LEGACY_POSITIONAL.items()]
    rows += [("TM409", old, entry.replacement or "reported", needed(entry.replacement) if entry.replacement else "",
              entry.note)
             for old, entry in REMOVED_MODULES.items()]
    return sorted(rows, key=lambda row: (row[0], row[1]))
