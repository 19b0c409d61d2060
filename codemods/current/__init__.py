"""TM5xx: behaviour changes after 0.4 that still break legacy training scripts on current PyTorch.

Removing ``Variable`` is not enough: between 0.4 and 2.x defaults and semantics changed again
(``torch.load`` loads weights only, ``torch.full`` infers its dtype, ``/`` on integer tensors divides
truly, masks are ``bool``, schedulers step after the optimizer, legacy autograd Functions raise,
torchvision renamed its transforms). Each rule keeps the legacy meaning where it is certain and reports
where it is not.

One rule per module (``tm501_load_weights_only.py``, ...), found by ``codemods.family_rules``. The rules
stand on the file's semantic model (``ctx.model``) and on ``analysis.py`` (what a value was in the legacy
era: dtypes, modules, values that may require grad, checkpoints, layouts). ``behaviour.py`` holds
``BEHAVIOUR_CHANGES``, the table of every change and how it is handled, rendered into the README.
"""
from codemods.current.behaviour import BEHAVIOUR_CHANGES

__all__ = ["BEHAVIOUR_CHANGES"]
