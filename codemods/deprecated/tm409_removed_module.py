"""TM409: removed modules (``torch._six``, ``torch.utils.serialization``, ``torchtext.legacy``, ...)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.base import Example, Rule
from codemods.deprecated.common import whole_reference
from codemods.syntax import expression
from codemods.names import dotted
from codemods.syntax import release_import
from codemods.torchapi.deprecations import removed_entry
from codemods.torchapi.since import needed

GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


class RemovedModule(Rule):
    """Modules that torch (and torchtext) removed, and private paths that moved
    (``codemods.torchapi.deprecations.REMOVED_MODULES``). ``torch._six`` went in 2.0; on Python 3 each of
    its names was a builtin or a standard-library object, which replaces it exactly (``string_classes`` ->
    ``(str, bytes)``, ``container_abcs`` -> ``collections.abc``, ``inf`` -> ``math.inf``, ``PY3`` ->
    ``True``); the import goes once nothing uses it. ``torch.utils.serialization.load_lua``,
    ``torch.legacy``, ``torch.utils.ffi`` and torchtext's legacy ``Field``/``BucketIterator`` API have no
    drop-in replacement: reported with what to use. The private ``torch.utils.data._utils.collate.default_collate``
    becomes the public ``torch.utils.data.default_collate`` (1.11; ``torch.utils.data.dataloader``'s before:
    both public). Imports under ``try``/``if``
    (``try: from torch._six import inf`` / ``except ImportError: ...``) are compatibility shims that already
    work: left alone, as are other modules named ``_six`` and the ``six`` package."""

    code = "TM409"
    name = "removed-module"
    summary = ("removed modules (`torch._six`, `torch.utils.serialization`, `torchtext.legacy`, ...): exact "
               "replacements written, the rest reported")
    triggers = ("_six", "serialization", "torchtext", "legacy", "trainer", "ffi", "DataLoaderIter",
                "numpy_type_map", "default_collate")
    imports = ("torch",)
    min_torch = "0.4"  # the builtins; the default_collate import checks its own 1.11
    changes = (
        Example("from torch._six import container_abcs, string_classes\n\n\ndef flat(x):\n"
                "    if isinstance(x, string_classes):\n        return [x]\n"
                "    if isinstance(x, container_abcs.Iterable):\n        return list(x)\n    return [x]\n",
                "import collections.abc\n\n\ndef flat(x):\n"
                "    if isinstance(x, (str, bytes)):\n        return [x]\n"
                "    if isinstance(x, collections.abc.Iterable):\n        return list(x)\n    return [x]\n"),
        Example("import torch\nfrom torch._six import inf\n\nbest = inf\nif norm_type == inf:\n    pass\n",
                "import torch\nimport math\n\nbest = math.inf\nif norm_type == math.inf:\n    pass\n"),
        Example("from torch.utils.data._utils.collate import default_collate\n\nbatch = default_collate(items)\n",
                "from torch.utils.data import default_collate\n\nbatch = default_collate(items)\n"),
        Example("from torch.utils.serialization import load_lua\n\nvgg = load_lua('vgg16.t7')\n"),
        Example("from torchtext.data import Field, BucketIterator\n\nTEXT = Field(lower=True)\n"),
    )
    keeps = (
        "try:\n    from torch._six import container_abcs\nexcept ImportError:\n"
        "    import collections.abc as container_abcs\nimport torch\n\nok = isinstance(x, container_abcs.Mapping)\n",
        "import torch\nfrom six import string_types\nfrom ._six import inf\nfrom utils._six import PY3\n\n"
        "ok = isinstance(x, string_types) and PY3 and inf > 0\n",
        "import torch\nfrom torch.utils.data import default_collate\nfrom torchtext.data.utils import get_tokenizer\n"
        "from torch.utils.data.dataloader import default_collate as collate\n"
        "import torch.utils.model_zoo as model_zoo\n",
        "import torch\n\nlegacy = torch.serialization.load(f)\n",
    )

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.ctx.imports.aliases:  # else ``qualname`` is None: told without the calls
            self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)

    def _reference(self, node: cst.CSTNode) -> None:
        model = self.ctx.model
        qualified = model.qualname(node)
        found = removed_entry(qualified) if qualified else None
        if found is None:
            return
        if not whole_reference(model, node):
            return
        key, entry = found
        target = node
        while type(target) is cst.Attribute and model.qualname(target) != key:
            target = target.value
        if model.qualname(target) != key:
            return
        owner, _ = model.lookup((dotted(target) or "").split(".")[0], model.scope_of(target))
        if entry.replacement is None or owner is not model.module_scope:
            self.report(target, f"`{key}`: {entry.note}" if entry.replacement is None else
                        f"`{key}` -> `{entry.replacement}` ({entry.note}); imported inside a function: by hand")
            return
        if entry.older is not None and type(target) is cst.Name:
            return  # imported by name: the import moves instead
        replacement = self._spelling(entry)
        if replacement is None:
            self.report(target, f"`{key}` -> `{entry.replacement}` ({entry.note})"
                                f"{self.ctx.too_new(needed(entry.replacement))}")
            return

        def fix(old):
            for module in entry.imports:
                self.ctx.add_import(module)
            release_import(self.ctx, target)
            new = expression(replacement)
            return new.with_changes(lpar=old.lpar, rpar=old.rpar) if old.lpar else new
        self.report(target, f"`{key}` -> `{replacement}` ({entry.note})", fix)

    def _spelling(self, entry) -> Optional[str]:
        """The replacement ``--min-torch`` allows: the current one, else the older one, else ``None``."""
        if self.ctx.supports(needed(entry.replacement)):
            return entry.replacement
        return entry.older

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or type(node.names) is cst.ImportStar or self._guarded(node):
            return
        module = dotted(node.module)
        found = [(alias, removed_entry(f"{module}.{dotted(alias.name)}")) for alias in node.names]
        found = [(alias, key, entry) for alias, hit in found if hit for key, entry in [hit]]
        if not found:
            return
        missing = [(key, entry) for _, key, entry in found if entry.replacement is None]
        if missing:
            self.report(node, "; ".join(f"`{key}`: {entry.note}" for key, entry in dict(missing).items()))
            return
        moved = [(alias, key, entry) for alias, key, entry in found if entry.older is not None]
        if moved:
            _, key, entry = moved[0]
            new_module = self._spelling(entry).rpartition(".")[0]
            self.report(node, f"`{key}`: {entry.note}",
                        (lambda imp: imp.with_changes(module=expression(new_module)))
                        if len(node.names) == 1 else None)
            return
        module_level = type(self.ctx.model.parent(self.ctx.model.parent(node))) is cst.Module
        names = ", ".join(f"`{dotted(alias.name)}`" for alias, _, _ in found)

        def fix(imp):
            for alias, _, _ in found:
                asname = alias.asname.name.value if alias.asname else None
                self.ctx.remove_import_if_unused(module, dotted(alias.name), asname)
            return imp
        self.report(node, f"{names}: {found[0][2].note.split(';')[0]}; the import goes once its uses are replaced",
                    fix if module_level else None)

    def visit_Import(self, node: cst.Import) -> None:
        if self._guarded(node):
            return
        for alias in node.names:
            found = removed_entry(dotted(alias.name))
            if found is not None and found[1].replacement is None:
                self.report(node, f"`{found[0]}`: {found[1].note}")
                return

    def _guarded(self, node: cst.CSTNode) -> bool:
        """Inside ``if`` or a ``try`` that catches the import's failure: a compatibility shim."""
        for up in self.ctx.model.ancestors(node):
            if type(up) is cst.If:
                return True
            if type(up) is cst.Try and any(h.type is None or (dotted(h.type) or "").rpartition(".")[2] in GUARDS
                                           or type(h.type) is cst.Tuple for h in up.handlers):
                return True
        return False


RULE = RemovedModule
