"""TM501: ``torch.load`` of a whole pickled object keeps ``weights_only=False`` (True by default since 2.6)."""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.analysis import Evaluator, Saved, has_keyword
from codemods.names import dotted
from codemods.syntax import (append_argument, argument, calls_in, code, enclosing_statement, keyword, method_name,
                             string)

SAFE_SAVES = frozenset({"state_dict", "item", "tolist"})  # what another file may save that weights_only loads


class LoadWeightsOnly(Rule):
    """``torch.load`` defaults to ``weights_only=True`` since PyTorch 2.6: it refuses whole pickled models
    (``torch.save(model)``), optimizers, ``argparse.Namespace`` and numpy values, which every legacy
    checkpoint script loaded with plain pickle. Where the file shows that the load reads such an object (the
    loaded value is used as a module, or this file writes the same path with ``torch.save`` of a module or
    another object), the legacy behaviour is kept explicitly with a comment; a load used as a state dict is
    left alone; a file this file writes with a state dict, tensors or plain values loads as it is; any other
    load is reported, never weakened silently. "Writes the same path": the same expression, variable,
    normalized string literal, argparse default (``args.save`` with ``default='model.pt'``) or ``open(...)``
    target. A literal path no ``torch.save`` of this file writes is looked up in the repository index: a data
    script of the tree that does ``torch.save(numpy_array, open('traindata.pt', 'wb'))`` counts as a writer
    (anything but a state dict or plain value keeps full unpickling). ``weights_only=`` needs torch 1.13."""

    code = "TM501"
    min_torch = "1.13"
    name = "load-weights-only"
    summary = "`torch.load` of a whole pickled model/object keeps `weights_only=False` (True by default since 2.6)"
    triggers = ("load(",)
    imports = ("torch",)
    changes = (
        Example(
            "import torch\nwith open(args.checkpoint, 'rb') as f:\n    model = torch.load(f)\nmodel.eval()\n",
            "import torch\nwith open(args.checkpoint, 'rb') as f:\n"
            "    # weights_only=False: it loads a whole pickled model, which weights_only=True (the default since "
            "torch 2.6) refuses\n    model = torch.load(f, weights_only=False)\nmodel.eval()\n",
        ),
        Example(
            "import torch\ntorch.save(model, 'net.pth')\nnet = torch.load('./net.pth')\n",
            "import torch\ntorch.save(model, 'net.pth')\n# weights_only=False: this file writes it with "
            "`torch.save(model)`, which weights_only=True (the default since torch 2.6) refuses\n"
            "net = torch.load('./net.pth', weights_only=False)\n",
        ),
        Example(
            "import torch\nparser.add_argument('--save', default='ckpt.pt')\n"
            "torch.save({'net': net.state_dict(), 'args': args}, args.save)\nstate = torch.load('ckpt.pt')\n",
            "import torch\nparser.add_argument('--save', default='ckpt.pt')\n"
            "torch.save({'net': net.state_dict(), 'args': args}, args.save)\n# weights_only=False: this file writes "
            "it with `torch.save({'net': net.state_dict(), 'args': args})`, which weights_only=True (the default "
            "since torch 2.6) refuses\nstate = torch.load('ckpt.pt', weights_only=False)\n",
        ),
        Example("import torch\ncheckpoint = torch.load(args.resume)\nstart = checkpoint['epoch']\n"),
    )
    keeps = (
        "import torch\nmodel.load_state_dict(torch.load('model.pt'))\n",
        "import torch\nsd = torch.load(path, map_location='cpu')\nnet.load_state_dict(sd)\n",
        "import torch\ntorch.save(net.state_dict(), 'w.pt')\nw = torch.load('w.pt')\n",
        "import torch\nm = torch.load(p, weights_only=False)\nm.eval()\n",
        "import torch, pickle\nm = torch.load(p, pickle_module=pickle)\n",
        "import numpy as np\nx = np.load('a.npy')\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        model = self.ctx.model
        if type(node.func) not in (cst.Name, cst.Attribute) or model.qualname(node.func) != "torch.load":
            return
        if not node.args or has_keyword(node, "weights_only", "pickle_module"):
            return
        evaluator = Evaluator(self.ctx)
        use = self._use(node, evaluator)
        if use == "state":
            return
        if use == "module":
            reason = "it loads a whole pickled model"
        else:
            kind, saved = self._saved(node, evaluator)
            if kind is Saved.SAFE:
                return
            reason = f"this file writes it with `torch.save({code(saved)})`" if saved is not None else None
            if kind is Saved.NONE:
                found = self._written_elsewhere(node)
                if found == "":
                    return  # another file of the tree writes a state dict or plain values there
                reason = found
        if reason is None:
            self.report(node, "`torch.load` loads weights only by default since PyTorch 2.6: a file holding a "
                              "whole model, an optimizer, an argparse Namespace or numpy values now fails to load",
                        hint="if this project wrote the file, pass `weights_only=False` (only for trusted files)")
            return
        self._report_with_comment(node, reason)

    def _use(self, node: cst.Call, evaluator: Evaluator) -> Optional[str]:
        """"module" / "state" when the loaded value is used as a module / a state dict."""
        model = self.ctx.model
        value: cst.CSTNode = node
        while True:
            up = model.parent(value)
            grand = model.parent(up) if up is not None else None
            if type(up) is cst.Arg and method_name(grand) == "load_state_dict":
                return "state"
            if type(up) is cst.Call and up.func is value:
                return "module"  # called
            if type(up) is cst.Attribute and type(grand) is cst.Call and grand.func is up:
                if up.attr.value in torchapi.MODULE_METHODS:
                    return "module"
                if up.attr.value in torchapi.MOVE_METHODS:
                    value = grand
                    continue
            break
        if type(up) is cst.Assign and len(up.targets) == 1 and dotted(up.targets[0].target):
            name = dotted(up.targets[0].target)
            facts = evaluator.facts
            if name in facts.module_names or name in facts.called_names:
                return "module"
            if name in facts.state_dict_args:
                return "state"
        return None

    def _saved(self, node: cst.Call, evaluator: Evaluator) -> Tuple[Saved, Optional[cst.CSTNode]]:
        """How this file's ``torch.save`` to the same path classifies the saved object."""
        model = self.ctx.model
        keys = evaluator.path_keys(argument(node, "f", 0).value, model.scope_of(node))
        best: Tuple[Saved, Optional[cst.CSTNode]] = (Saved.NONE, None)
        for save in evaluator.facts.saves:
            obj, target = argument(save, "obj", 0), argument(save, "f", 1)
            scope = model.scope_of(save)
            if obj is None or target is None or not keys & evaluator.path_keys(target.value, scope):
                continue
            kind = evaluator.saved(obj.value, scope)
            if best[0] is Saved.NONE or kind.value > best[0].value:
                best = (kind, obj.value)
        return best

    def _written_elsewhere(self, node: cst.Call) -> Optional[str]:
        """Why another file of the repository that ``torch.save``s to this literal path needs full unpickling
        (``""``: it writes only state dicts or plain values; ``None``: no file of the tree writes it)."""
        path = argument(node, "f", 0).value
        if type(path) is cst.Call and dotted(path.func) == "open" and path.args:
            path = path.args[0].value
        literal = string(path)
        writers = self.ctx.repo.writers(literal) if literal and self.ctx.repo is not None else []
        for name, obj in writers:
            try:
                saved = cst.parse_expression(obj)
            except cst.ParserSyntaxError:
                return f"`{name}` of this repository writes it with `torch.save({obj})`"
            if not (method_name(saved) in SAFE_SAVES or type(saved) in (cst.Integer, cst.Float, cst.SimpleString)):
                return f"`{name}` of this repository writes it with `torch.save({obj})`"
        return "" if writers else None

    def _report_with_comment(self, node: cst.Call, reason: str) -> None:
        model = self.ctx.model
        statement = enclosing_statement(model, model.parent(node))
        comment = (f"# weights_only=False: {reason}, which weights_only=True (the default since torch 2.6) "
                   f"refuses")

        def is_load(call: cst.Call) -> bool:
            return model.qualname(call.func) == "torch.load" and not has_keyword(call, "weights_only",
                                                                                 "pickle_module")

        position = next(i for i, call in enumerate(calls_in(statement, is_load)) if call is node)

        def fix(updated: cst.CSTNode) -> cst.CSTNode:
            if not isinstance(updated, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return updated
            loads = calls_in(updated, is_load)
            if position >= len(loads):
                return updated
            load = loads[position]
            updated = updated.deep_replace(load, append_argument(load, keyword("weights_only", cst.Name("False"))))
            return updated.with_changes(leading_lines=[*updated.leading_lines, cst.EmptyLine(comment=cst.Comment(
                comment))])

        self.report(statement, f"`torch.load` of a file that needs full unpickling: {reason}; since PyTorch 2.6 "
                               f"it needs `weights_only=False` (kept, with a comment)", fix,
                    hint="only for files this project writes: unpickling runs code from the file")


RULE = LoadWeightsOnly
