"""TM407: keywords renamed with the same meaning (``retain_variables=`` -> ``retain_graph=``)."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.torchapi.deprecations import RENAMED_KEYWORDS


class RenamedKeyword(Rule):
    """Keywords that 0.4 renamed without a change of meaning (``RENAMED_KEYWORDS``): the old spelling
    raises TypeError on current PyTorch (``retain_variables=``, ``torch.cat(seq=)``, ``Module.cuda(device_id=)``)
    or warns that it goes (``torch.autograd.backward(grad_variables=)``). A method name counts on any
    receiver (only tensors have ``backward(retain_variables=)``; ``x.cuda(device_id=)`` was already a
    TypeError for a tensor in 0.3, so it is a module); a function counts by its qualified name. Where both
    spellings are given the call is reported: which one wins is not for the rule to decide."""

    code = "TM407"
    name = "renamed-keyword"
    summary = "keywords renamed with the same meaning: `backward(retain_variables=)` becomes `retain_graph=`"
    triggers = tuple(sorted({old for renames in RENAMED_KEYWORDS.values() for old in renames}))
    changes = (
        Example("loss.backward(retain_variables=True)\n", "loss.backward(retain_graph=True)\n"),
        Example("import torch\n\ng = torch.autograd.grad(y, x, retain_variables=keep)\n",
                "import torch\n\ng = torch.autograd.grad(y, x, retain_graph=keep)\n"),
        Example("model = Net().cuda(device_id=args.gpu)\n", "model = Net().cuda(device=args.gpu)\n"),
        Example("import torch\n\ntorch.autograd.backward([loss], grad_variables=[g])\n"
                "x = torch.cat(seq=parts, dim=1)\n",
                "import torch\n\ntorch.autograd.backward([loss], grad_tensors=[g])\n"
                "x = torch.cat(tensors=parts, dim=1)\n"),
        Example("loss.backward(retain_variables=True, retain_graph=False)\n"),
    )
    keeps = (
        "loss.backward(retain_graph=True)\n",
        "import torch\n\nkeep(retain_variables=True)\nx = torch.cat(parts, dim=1)\ny = np.stack(sequence=parts)\n",
        "model = Net().cuda(device=0)\nloader = make(device_id=0)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        renames = RENAMED_KEYWORDS.get(self.ctx.model.qualname(func) or "") or (
            RENAMED_KEYWORDS.get(func.attr.value) if isinstance(func, cst.Attribute) else None)
        if not renames:
            return
        given = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        for old, new in renames.items():
            if old not in given:
                continue
            if new in given:
                self.report(node, f"`{old}=` is `{new}=` since PyTorch 0.4 (a TypeError now), and both are given: "
                                  "keep one by hand")
            else:
                self.report(node, f"`{old}=` -> `{new}=` (renamed in PyTorch 0.4; the old keyword is a TypeError "
                                  "or deprecated)",
                            lambda updated, old=old, new=new: renamed_keyword(updated, old, new))


def renamed_keyword(call: cst.Call, old: str, new: str) -> cst.Call:
    args = [arg.with_changes(keyword=cst.Name(new)) if arg.keyword is not None and arg.keyword.value == old else arg
            for arg in call.args]
    return call.with_changes(args=args)


RULE = RenamedKeyword
