"""TM6xx: autograd hazards that ``torch-migrate check`` reports.

Removing ``Variable`` is mechanical; what breaks migrated training runs are the
autograd mistakes around it (the seed field notes in ``shared/SEEDS.md``):
state carried into the next iteration with its graph, in-place writes to
leaves, ``list(tensor)`` in a parameter list, ``retain_graph=True`` patches,
anomaly detection left on, ``.grad`` of non-leaves, ``requires_grad`` on
tensors that nothing optimises; and the later breakages around them: loss
targets whose shape no longer broadcasts, backward after an optimizer step,
``DataParallel`` checkpoints loaded into bare models.

One rule per module (``tm601_recurrent_state.py``, ...), found by ``codemods.family_rules``. Every rule is
a static analysis built to stay silent on correct code: a value is only treated as a tensor, a leaf, a
parameter or a module when the file shows it. The family's own domain logic stands on the semantic model
(``ctx.model``: parents, grad modes): ``analysis.py`` (``Facts``: bindings and uses in execution order,
no-grad regions, frozen modules, backward calls), ``flow.py`` (each scope's statements in order),
``carry.py`` (TM601), ``origins.py`` (TM604, TM607), ``fixes.py`` (the unsafe fixes they share). When the
file does not tell, the rule says nothing. Fixes change behaviour, so every fix is unsafe.
"""
from __future__ import annotations

from typing import Dict, Tuple

# The hazards' rows of the README's behaviour table (``migrate.docs`` renders every family's
# ``BEHAVIOUR_CHANGES``); each ``script`` in ``tests/rules/legacy_behaviour/`` shows the change on this torch.
BEHAVIOUR_CHANGES: Tuple[Dict[str, str], ...] = (
    {"change": "element-wise losses of an (N, 1) input and an (N,) target: `BCELoss`/`BCEWithLogitsLoss` raise "
               "('Using a target size that is different to the input size'); `MSELoss`/`L1Loss`/`SmoothL1Loss` "
               "broadcast to (N, N) with only a UserWarning (0.3 broadcast with a warning)",
     "version": "0.4", "handling": "TM609", "script": "loss_target_rank.py"},
    {"change": "`optimizer.step()` between a forward and a backward through the stepped parameters raises 'one of the "
               "variables needed for gradient computation has been modified by an inplace operation' (the GAN loop "
               "that computed `D(fake)` for the generator before the discriminator's step)",
     "version": "1.5", "handling": "TM610", "script": "step_before_backward.py"},
    {"change": "a `DataParallel`/`DistributedDataParallel` model's state dict has `module.` keys: a bare model refuses "
               "it, and the reverse ('Missing key(s) in state_dict'; `strict=False` loads nothing); "
               "`consume_prefix_in_state_dict_if_present` strips the prefix",
     "version": "every version (1.9 added the helper)", "handling": "TM611", "script": "dataparallel_prefix.py"},
)
