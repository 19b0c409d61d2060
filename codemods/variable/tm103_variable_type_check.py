"""TM103: `type(h) == Variable` / `isinstance(h, Variable)` become `isinstance(h, torch.Tensor)`."""
from __future__ import annotations

from codemods.base import Example
from codemods.variable.analysis import FactKind
from codemods.variable.common import VariableFamilyRule

class VariableTypeCheck(VariableFamilyRule):
    """``Variable`` as a type: ``type(h) == Variable`` is always False on current PyTorch.

    Tensors are Variables since 0.4: ``type(t)`` is ``torch.Tensor``, so the
    classic ``repackage_hidden`` helper (``if type(h) == Variable: ...``) falls
    through to iterating a tensor and crashes. ``isinstance(h, Variable)``
    still works but only through a compatibility metaclass. Both become
    ``isinstance(h, torch.Tensor)``; ``Variable`` in a tuple of types and in
    annotations becomes ``torch.Tensor``.
    """

    code = "TM103"
    name = "variable-type-check"
    summary = "`type(h) == Variable` / `isinstance(h, Variable)` become `isinstance(h, torch.Tensor)`"
    triggers = ("Variable",)
    min_torch = "0.4"  # ``torch.Tensor`` is the type of every tensor
    kinds = {
        FactKind.TYPE_COMPARISON: (lambda d: "`type(x)` never equals `Variable` on current PyTorch (it is "
                                   "`torch.Tensor`): `isinstance(x, torch.Tensor)`",
                                   "tensors are Variables since 0.4; `type(t)` is `torch.Tensor`"),
        FactKind.TYPE_TUPLE: (lambda d: "`Variable` in a tuple of types: `torch.Tensor` is the same test on current "
                              "PyTorch", "tensors are Variables since 0.4"),
        FactKind.TYPE_REFERENCE: (lambda d: f"`Variable` in {d['where']}: `torch.Tensor` is the same test on current "
                                  "PyTorch", "tensors are Variables since 0.4"),
    }
    changes = (
        Example(
            "import torch\nfrom torch.autograd import Variable\n\ndef repackage_hidden(h):\n"
            "    if type(h) == Variable:\n        return h.detach()\n"
            "    return tuple(repackage_hidden(v) for v in h)\n",
            "import torch\n\ndef repackage_hidden(h):\n    if isinstance(h, torch.Tensor):\n"
            "        return h.detach()\n    return tuple(repackage_hidden(v) for v in h)\n",
        ),
        Example(
            "from torch.autograd import Variable\nok = isinstance(h, Variable)\n"
            "both = isinstance(h, (Variable, tuple))\nnot_var = type(h) is not Variable\n",
            "import torch\n\nok = isinstance(h, torch.Tensor)\nboth = isinstance(h, (torch.Tensor, tuple))\n"
            "not_var = not isinstance(h, torch.Tensor)\n",
        ),
        Example(
            "import torch\nimport torch.autograd as ag\n\ndef f(x: ag.Variable) -> bool:\n"
            "    return isinstance(x, (torch.Tensor, ag.Variable))\n",
            "import torch\n\ndef f(x: torch.Tensor) -> bool:\n    return isinstance(x, torch.Tensor)\n",
        ),
    )
    keeps = (
        "import torch\nif isinstance(h, torch.Tensor):\n    h = h.detach()\n",
        "from sympy import Variable\nok = isinstance(v, Variable)\n",
        "from torch.autograd import Variable\ntype = lambda x: x\nok = type(h) == Variable\n",
    )


RULE = VariableTypeCheck
