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
