"""TM507: torchvision renames: ``Scale``, ``RandomSizedCrop``, ``range=``, ``pretrained=``."""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.analysis import has_keyword, torchvision_name
from codemods.names import dotted
from codemods.syntax import argument, code, keyword


class TorchvisionRenames(Rule):
    """torchvision removed the names legacy training scripts use. ``transforms.Scale`` and
    ``transforms.RandomSizedCrop`` are gone (same behaviour as ``Resize``/``RandomResizedCrop``; the second
    positional argument of ``RandomSizedCrop`` is ``interpolation=``); ``make_grid``/``save_image`` take
    ``value_range=`` instead of ``range=`` (a TypeError now). ``pretrained=True`` still works with a
    deprecation warning and means exactly ``weights=<Model>_Weights.IMAGENET1K_V1`` (the table is torchvision
    0.28's own mapping), so it is rewritten to that for the legacy-era models. Under an older ``--min-torch`` the
    spellings that torchvision did not have yet stay: ``value_range=`` (torchvision 0.9, torch 1.8) is reported,
    ``pretrained=`` (the only spelling before torchvision 0.13, torch 1.12) is left."""

    code = "TM507"
    min_torch = "0.4"
    name = "torchvision-renames"
    summary = "torchvision renames: `Scale`->`Resize`, `RandomSizedCrop`->`RandomResizedCrop`, `range=`, `pretrained=`"
    triggers = ("Scale", "RandomSizedCrop", "range=", "pretrained=")
    imports = ("torch",)
    changes = (
        Example("import torchvision.transforms as transforms\nt = transforms.Scale(256)\n",
                "import torchvision.transforms as transforms\nt = transforms.Resize(256)\n"),
        Example("from torchvision import transforms\nt = transforms.RandomSizedCrop(224, Image.BICUBIC)\n",
                "from torchvision import transforms\nt = transforms.RandomResizedCrop(224, interpolation=Image.BICUBIC)\n"),
        Example("from torchvision.transforms import Scale, ToTensor\nt = Scale(64)\n",
                "from torchvision.transforms import Resize, ToTensor\nt = Resize(64)\n"),
        Example("import torchvision.utils as vutils\nvutils.save_image(x, 'a.png', normalize=True, range=(-1, 1))\n",
                "import torchvision.utils as vutils\nvutils.save_image(x, 'a.png', normalize=True, value_range=(-1, 1))\n"),
        Example("from torchvision import models\nnet = models.resnet18(pretrained=True)\n",
                "from torchvision import models\nnet = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)\n"),
        Example("import torchvision.models as models\nnet = models.vgg16(pretrained=args.pretrained)\n",
                "import torchvision.models as models\nnet = models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1 "
                "if args.pretrained else None)\n"),
    )
    keeps = (
        "from torchvision import transforms\nt = transforms.Resize(256)\n",
        "import torchvision.transforms as T\nt = T.Compose([T.ToTensor(), T.Lambda(lambda x: x)])\n",
        "class Scale(object):\n    pass\ns = Scale()\n",
        "for i in range(3):\n    print(i)\n",
        "import timm\nm = timm.create_model('resnet18', pretrained=True)\n",
    )

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        up = self.ctx.model.parent(node)
        if type(up) is not cst.ImportFrom or up.module is None:
            return
        qualified = torchvision_name(f"{dotted(up.module)}.{dotted(node.name)}")
        if qualified in torchapi.TORCHVISION_RENAMES:
            new = torchapi.TORCHVISION_RENAMES[qualified][0]
            self.report(node, f"`{dotted(node.name)}` was removed from torchvision: `{new}`",
                        lambda updated: updated.with_changes(name=cst.Name(new)))

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> None:
        model = self.ctx.model
        up = model.parent(node)
        if type(up) is cst.ImportAlias or type(up) is cst.Attribute and up.value is node:
            return  # an import, or the inside of a longer chain
        if type(up) is cst.Attribute:
            return  # the attribute name of a chain
        qualified = torchvision_name(model.qualname(node))
        if qualified not in torchapi.TORCHVISION_RENAMES:
            return
        local = node.attr.value if type(node) is cst.Attribute else node.value
        legacy = qualified.rpartition(".")[2]
        if local != legacy:
            return  # an alias (`import Scale as S`): only the import changes
        new, keywords = torchapi.TORCHVISION_RENAMES[qualified]

        def rename(updated: cst.BaseExpression) -> cst.BaseExpression:
            if type(updated) is cst.Attribute:
                return updated.with_changes(attr=cst.Name(new))
            return updated.with_changes(value=new)

        self.report(node, f"`{legacy}` was removed from torchvision: `{new}`", rename)
        if keywords and type(up) is cst.Call and up.func is node:
            positional = [a for a in up.args if a.keyword is None and not a.star]
            if any(k and i < len(positional) for i, k in enumerate(keywords)):
                self.report(up, f"`{new}` takes these arguments by keyword", self._keywords(keywords))

    @staticmethod
    def _keywords(keywords: Tuple[Optional[str], ...]):
        def fix(updated: cst.Call) -> cst.Call:
            args, position = [], 0
            for arg in updated.args:
                if arg.keyword is None and not arg.star:
                    name = keywords[position] if position < len(keywords) else None
                    position += 1
                    if name:
                        arg = keyword(name, arg.value, like=arg)
                args.append(arg)
            return updated.with_changes(args=args)
        return fix

    def visit_Call(self, node: cst.Call) -> None:
        qualified = torchvision_name(self.ctx.model.qualname(node.func))
        if qualified is None:
            return
        renames = torchapi.TORCHVISION_KEYWORDS.get(qualified, {})
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in renames:
                new, needs = renames[arg.keyword.value]
                message = f"`{arg.keyword.value}=` is `{new}=` in current torchvision (a TypeError now)"
                if not self.ctx.supports(needs):
                    self.report(arg, message + f"; left: the torchvision of torch < {needs} only takes `range=`")
                    continue
                self.report(arg, message, lambda updated, new=new: updated.with_changes(keyword=cst.Name(new)))
        builder = qualified.rpartition(".")[2]
        if qualified.startswith("torchvision.models.") and builder in torchapi.PRETRAINED_WEIGHTS:
            pretrained = argument(node, "pretrained")
            if pretrained is not None and not has_keyword(node, "weights") and self.ctx.supports(
                    torchapi.PRETRAINED_WEIGHTS_TORCH):  # older: `pretrained=` is the only spelling (and still works)
                self.report(pretrained, "`pretrained=` is deprecated in torchvision (since 0.13): `weights=`",
                            self._weights(node.func, torchapi.PRETRAINED_WEIGHTS[builder]))

    def _weights(self, func: cst.BaseExpression, enum: str):
        def fix(updated: cst.Arg) -> cst.Arg:
            if type(func) is cst.Attribute:
                weights = f"{code(func.value)}.{enum}.IMAGENET1K_V1"
            else:
                self.ctx.add_import("torchvision.models", enum)
                weights = f"{enum}.IMAGENET1K_V1"
            value = updated.value
            if type(value) is cst.Name and value.value in ("True", "False"):
                text = weights if value.value == "True" else "None"
            else:
                text = f"{weights} if {code(value)} else None"
            return updated.with_changes(keyword=cst.Name("weights"), value=cst.parse_expression(text))
        return fix


RULE = TorchvisionRenames
