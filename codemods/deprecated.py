"""TM4xx: deprecated and removed APIs, driven by the tables below (the README's tables come from them).

Legacy scripts call functions that were renamed (``F.sigmoid``, ``nn.init.xavier_uniform``,
``clip_grad_norm``), removed (``torch.gesv``, ``torch.potrf``, ``torch.btrifact``), or whose
arguments changed (``size_average=``/``reduce=`` became ``reduction=``; ``add_(value, other)``
became ``add_(other, alpha=value)``). Each table entry is one fact checked against torch 2.13
(``tests/rules/test_deprecated.py`` runs old and new calls side by side where the old still exists).
A rewrite is made only where it computes the same values; where that depends on something only
known at run time (a softmax without ``dim``, a non-literal ``size_average``), the call is reported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from codemods.base import Example, Rule
from codemods.names import dotted
from codemods.torchapi import LOSS_FUNCTIONS


@dataclass(frozen=True)
class Replacement:
    """``old(...)`` -> ``new(...)`` with the argument changes that keep its values.

    ``params``: the old function's positional parameters; positional arguments from index
    ``keep_positional`` on become keywords. ``keywords``: renamed keywords. ``defaults``: keywords
    added unless given (an old default that differs from the new one, or a mode the old name
    implied). ``prepend``: positional arguments inserted first. ``order``: the old positional
    arguments that stay positional, reordered. ``first_only``: the old call returned a tuple and
    only ``old(...)[0]`` is the new result. ``must_be_false``: arguments rewritten only when absent
    or literally ``False`` (then dropped). An entry with none of these is a plain
    rename, applied to every reference (``act=F.tanh`` too).
    """

    new: str
    note: str = ""
    params: Tuple[str, ...] = ()
    keep_positional: Optional[int] = None
    keywords: Tuple[Tuple[str, str], ...] = ()
    defaults: Tuple[Tuple[str, str], ...] = ()
    prepend: Tuple[str, ...] = ()
    order: Optional[Tuple[int, ...]] = None
    first_only: bool = False
    must_be_false: Tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        return not (self.params or self.keywords or self.defaults or self.prepend or self.order or self.first_only)


_INIT = ("xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "uniform", "normal", "constant",
         "eye", "dirac", "orthogonal", "sparse")
_FUNCTORCH = ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")
_LINEAR_MODES = ("linear", "bilinear", "trilinear")

# Deprecated or removed -> current, exact for every call it applies to.
RENAMES: Dict[str, Replacement] = {
    "torch.nn.functional.sigmoid": Replacement("torch.sigmoid", "deprecated alias"),
    "torch.nn.functional.tanh": Replacement("torch.tanh", "deprecated alias"),
    **{f"torch.nn.init.{name}": Replacement(f"torch.nn.init.{name}_", "deprecated since 0.4 (in-place)")
       for name in _INIT},
    "torch.nn.utils.clip_grad_norm": Replacement("torch.nn.utils.clip_grad_norm_", "deprecated since 0.4"),
    "torch.nn.utils.clip_grad.clip_grad_norm": Replacement("torch.nn.utils.clip_grad_norm_", "deprecated since 0.4"),
    "torch.nn.functional.upsample": Replacement("torch.nn.functional.interpolate", "deprecated since 0.4.1"),
    "torch.nn.functional.upsample_nearest": Replacement(
        "torch.nn.functional.interpolate", "what it calls", defaults=(("mode", "'nearest'"),)),
    "torch.nn.functional.upsample_bilinear": Replacement(
        "torch.nn.functional.interpolate", "what it calls: corners aligned",
        defaults=(("mode", "'bilinear'"), ("align_corners", "True"))),
    "torch.nn.UpsamplingNearest2d": Replacement("torch.nn.Upsample", "TorchFix table",
                                                defaults=(("mode", "'nearest'"),)),
    "torch.nn.UpsamplingBilinear2d": Replacement("torch.nn.Upsample", "TorchFix table: corners aligned",
                                                 defaults=(("mode", "'bilinear'"), ("align_corners", "True"))),
    "torch.nn.NLLLoss2d": Replacement("torch.nn.NLLLoss", "deprecated alias"),
    "torch.ger": Replacement("torch.outer", "TorchFix table"),
    "torch.btriunpack": Replacement("torch.lu_unpack", "removed in 1.x"),
    "torch.cholesky": Replacement("torch.linalg.cholesky", "TorchFix table", params=("input", "upper"),
                                  keep_positional=1),
    "torch.potrf": Replacement("torch.linalg.cholesky", "removed; potrf defaulted to upper=True",
                               params=("a", "upper"), keep_positional=1, defaults=(("upper", "True"),)),
    "torch.potrs": Replacement("torch.cholesky_solve", "removed; potrs defaulted to upper=True",
                               params=("b", "u", "upper"), keep_positional=2, defaults=(("upper", "True"),)),
    "torch.potri": Replacement("torch.cholesky_inverse", "removed; potri defaulted to upper=True",
                               params=("u", "upper"), keep_positional=1, defaults=(("upper", "True"),)),
    "torch.btrifact": Replacement("torch.linalg.lu_factor", "removed; same (LU, pivots)",
                                  params=("A", "pivot"), keep_positional=1),
    "torch.btrifact_with_info": Replacement("torch.linalg.lu_factor_ex", "removed; same (LU, pivots, infos)",
                                            params=("A", "pivot"), keep_positional=1),
    "torch.lu_solve": Replacement("torch.linalg.lu_solve", "TorchFix table: arguments reordered", order=(1, 2, 0)),
    "torch.matrix_rank": Replacement("torch.linalg.matrix_rank", "removed; same default tolerance",
                                     params=("input", "tol", "symmetric"), keep_positional=1,
                                     keywords=(("tol", "atol"), ("symmetric", "hermitian"))),
    "torch.gesv": Replacement("torch.linalg.solve", "removed; only the solution", order=(1, 0), first_only=True),
    "torch.solve": Replacement("torch.linalg.solve", "removed (TorchFix table); only the solution", order=(1, 0),
                               first_only=True),
    "torch.trtrs": Replacement("torch.linalg.solve_triangular", "removed; trtrs defaulted to upper=True",
                               params=("b", "A", "upper", "transpose", "unitriangular"), keep_positional=2,
                               order=(1, 0), defaults=(("upper", "True"),), first_only=True,
                               must_be_false=("transpose",)),
    "torch.triangular_solve": Replacement(
        "torch.linalg.solve_triangular", "TorchFix table; defaulted to upper=True",
        params=("b", "A", "upper", "transpose", "unitriangular"), keep_positional=2, order=(1, 0),
        defaults=(("upper", "True"),), first_only=True, must_be_false=("transpose",)),
    **{f"functorch.{name}": Replacement(f"torch.func.{name}", "TorchFix table") for name in _FUNCTORCH},
}

# Rewrites that need more than the table can say: old name -> (new name, what changes).
SPECIAL_RENAMES: Dict[str, Tuple[str, str]] = {
    "torch.qr": ("torch.linalg.qr", "`some=False` -> `mode='complete'`"),
    "torch.lu": ("torch.linalg.lu_factor", "`get_infos=True` -> `torch.linalg.lu_factor_ex`"),
    "torch.chain_matmul": ("torch.linalg.multi_dot", "the matrices become one list (two or more)"),
    "torch.range": ("torch.arange", "integer literals only: the end moves one step out; float literals keep "
                                    "the default float dtype"),
}

# Deprecated or removed with no exact drop-in replacement: reported (TM405).
REPORTED: Dict[str, str] = {
    "torch.symeig": "removed: `torch.linalg.eigh` (lower triangle by default; symeig used the upper) or "
                    "`torch.linalg.eigvalsh`",
    "torch.eig": "removed: `torch.linalg.eig` returns complex tensors (`torch.linalg.eigvals` for values)",
    "torch.lstsq": "removed: `torch.linalg.lstsq(A, B).solution` (arguments swapped, solution shape differs)",
    "torch.btrisolve": "removed: `torch.linalg.lu_solve(LU, pivots, B)` takes B as a batch of matrices "
                       "(btrisolve took vectors: add `.unsqueeze(-1)`)",
    "torch.gels": "removed: `torch.linalg.lstsq(A, B).solution` (arguments swapped, solution shape differs)",
    "torch.pstrf": "removed: no pivoted Cholesky in torch; `torch.linalg.cholesky` (no pivoting) or scipy",
    "torch.fft": "removed as a function in 1.8 (`torch.fft` is a module): `torch.fft.fftn` on complex tensors "
                 "(`torch.view_as_complex`/`view_as_real` convert the old (..., 2) layout)",
    "torch.ifft": "removed in 1.8: `torch.fft.ifftn` on complex tensors (old layout: `torch.view_as_complex`)",
    "torch.rfft": "removed in 1.8: `torch.view_as_real(torch.fft.rfftn(x, dim=...))` (`onesided=False`: "
                  "`torch.fft.fftn`)",
    "torch.irfft": "removed in 1.8: `torch.fft.irfftn(torch.view_as_complex(x), s=..., dim=...)`",
    "torch.svd": "deprecated: `torch.linalg.svd(A, full_matrices=not some)` returns `Vh`, not `V` "
                 "(`V = Vh.mH`)",
    "torch.norm": "deprecated: `torch.linalg.vector_norm` / `torch.linalg.matrix_norm` (`torch.norm`'s p/dim "
                  "rules differ for matrices)",
    "torch.testing.assert_allclose": "deprecated: `torch.testing.assert_close` (stricter: checks dtype, "
                                     "default tolerances differ)",
    "torch.nn.utils.weight_norm": "deprecated: `torch.nn.utils.parametrizations.weight_norm` "
                                  "(state_dict keys change: weight_g/weight_v -> parametrizations.weight.original0/1)",
    "torch.backends.cuda.sdp_kernel": "deprecated: `torch.nn.attention.sdpa_kernel` takes a list of backends",
    "torch.utils._pytree._register_pytree_node": "private and deprecated: "
                                                 "`torch.utils._pytree.register_pytree_node`",
}

# torch.nn.functional losses and torch.nn loss classes: positional parameters through `reduction`
# (torch 2.13 order), for `size_average=`/`reduce=` -> `reduction=` (TM402).
LOSS_PARAMETERS: Dict[str, Tuple[str, ...]] = {
    **{f"torch.nn.functional.{name}": params for name, params in {
        "binary_cross_entropy": ("input", "target", "weight", "size_average", "reduce", "reduction"),
        "binary_cross_entropy_with_logits": ("input", "target", "weight", "size_average", "reduce", "reduction"),
        "cosine_embedding_loss": ("input1", "input2", "target", "margin", "size_average", "reduce", "reduction"),
        "cross_entropy": ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction"),
        "hinge_embedding_loss": ("input", "target", "margin", "size_average", "reduce", "reduction"),
        "kl_div": ("input", "target", "size_average", "reduce", "reduction"),
        "l1_loss": ("input", "target", "size_average", "reduce", "reduction"),
        "margin_ranking_loss": ("input1", "input2", "target", "margin", "size_average", "reduce", "reduction"),
        "mse_loss": ("input", "target", "size_average", "reduce", "reduction"),
        "multi_margin_loss": ("input", "target", "p", "margin", "weight", "size_average", "reduce", "reduction"),
        "multilabel_margin_loss": ("input", "target", "size_average", "reduce", "reduction"),
        "multilabel_soft_margin_loss": ("input", "target", "weight", "size_average", "reduce", "reduction"),
        "nll_loss": ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction"),
        "poisson_nll_loss": ("input", "target", "log_input", "full", "size_average", "eps", "reduce", "reduction"),
        "smooth_l1_loss": ("input", "target", "size_average", "reduce", "reduction"),
        "soft_margin_loss": ("input", "target", "size_average", "reduce", "reduction"),
        "triplet_margin_loss": ("anchor", "positive", "negative", "margin", "p", "eps", "swap", "size_average",
                                "reduce", "reduction"),
    }.items()},
    **{f"torch.nn.{name}": params for name, params in {
        "BCELoss": ("weight", "size_average", "reduce", "reduction"),
        "BCEWithLogitsLoss": ("weight", "size_average", "reduce", "reduction"),
        "CosineEmbeddingLoss": ("margin", "size_average", "reduce", "reduction"),
        "CrossEntropyLoss": ("weight", "size_average", "ignore_index", "reduce", "reduction"),
        "HingeEmbeddingLoss": ("margin", "size_average", "reduce", "reduction"),
        "KLDivLoss": ("size_average", "reduce", "reduction"),
        "L1Loss": ("size_average", "reduce", "reduction"),
        "MSELoss": ("size_average", "reduce", "reduction"),
        "MarginRankingLoss": ("margin", "size_average", "reduce", "reduction"),
        "MultiLabelMarginLoss": ("size_average", "reduce", "reduction"),
        "MultiLabelSoftMarginLoss": ("weight", "size_average", "reduce", "reduction"),
        "MultiMarginLoss": ("p", "margin", "weight", "size_average", "reduce", "reduction"),
        "NLLLoss": ("weight", "size_average", "ignore_index", "reduce", "reduction"),
        "NLLLoss2d": ("weight", "size_average", "ignore_index", "reduce", "reduction"),
        "PoissonNLLLoss": ("log_input", "full", "size_average", "eps", "reduce", "reduction"),
        "SmoothL1Loss": ("size_average", "reduce", "reduction"),
        "SoftMarginLoss": ("size_average", "reduce", "reduction"),
        "TripletMarginLoss": ("margin", "p", "eps", "swap", "size_average", "reduce", "reduction"),
    }.items()},
}


# Keywords renamed with the same meaning: (method name, or qualified function) -> {old keyword: new keyword}.
# ``retain_variables`` was 0.3's name for ``retain_graph`` and is a TypeError since 1.0.
RENAMED_KEYWORDS: Dict[str, Dict[str, str]] = {
    "backward": {"retain_variables": "retain_graph"},  # Tensor.backward, any receiver
    "torch.autograd.backward": {"retain_variables": "retain_graph"},
    "torch.autograd.grad": {"retain_variables": "retain_graph"},
}


def table_rows() -> List[Tuple[str, str, str, str]]:
    """(rule code, old, current, note) for every table entry: the README's deprecated-API table."""
    rows = [("TM401", old, rep.new, rep.note) for old, rep in RENAMES.items()]
    rows += [("TM401", old, new, what) for old, (new, what) in SPECIAL_RENAMES.items()]
    rows += [("TM405", old, "reported", why) for old, why in REPORTED.items()]
    rows += [("TM407", f"{where}({old}=)", f"{where}({new}=)", "same meaning; the old keyword is a TypeError")
             for where, renames in RENAMED_KEYWORDS.items() for old, new in renames.items()]
    return sorted(rows, key=lambda row: (row[0], row[1]))


def legacy_reduction(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    """``torch.nn._reduction.legacy_get_string``: the ``reduction`` a legacy pair meant (``None`` = default)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


# Old positional signatures that no current overload accepts: number of positional arguments ->
# (old positional indices kept, in order; (keyword, old index) pairs). Method forms, then torch.* forms.
_ADD = {2: ((1,), (("alpha", 0),))}
_ADDC = {3: ((1, 2), (("value", 0),))}
_ADDMM = {3: ((1, 2), (("beta", 0),)), 4: ((2, 3), (("beta", 0), ("alpha", 1)))}
METHOD_SIGNATURES: Dict[str, Dict[int, Tuple[Tuple[int, ...], Tuple[Tuple[str, int], ...]]]] = {
    **{name: _ADD for name in ("add", "add_", "sub", "sub_")},
    **{name: _ADDC for name in ("addcmul", "addcmul_", "addcdiv", "addcdiv_")},
    **{name: _ADDMM for base in ("addmm", "addmv", "addr", "addbmm", "baddbmm") for name in (base, base + "_")},
}
FUNCTION_SIGNATURES: Dict[str, Dict[int, Tuple[Tuple[int, ...], Tuple[Tuple[str, int], ...]]]] = {
    **{name: {3: ((0, 2), (("alpha", 1),))} for name in ("add", "sub")},
    **{name: {4: ((0, 2, 3), (("value", 1),))} for name in ("addcmul", "addcdiv")},
    **{name: {4: ((1, 2, 3), (("beta", 0),)), 5: ((1, 3, 4), (("beta", 0), ("alpha", 2)))}
       for name in ("addmm", "addmv", "addr", "addbmm", "baddbmm")},
}
# Methods that only tensors have: a receiver built with them is a tensor (for `x.add(a, b)`).
TENSOR_METHODS = frozenset({"mul", "mul_", "div", "div_", "add", "add_", "sub", "sub_", "clone", "detach", "view",
                            "sqrt", "exp", "pow", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "t", "cuda", "cpu",
                            "float", "double", "new", "expand_as", "view_as", "squeeze", "unsqueeze", "contiguous"})
SOFTMAX_FUNCTIONS = ("torch.nn.functional.softmax", "torch.nn.functional.log_softmax", "torch.nn.functional.softmin")
SOFTMAX_MODULES = ("torch.nn.Softmax", "torch.nn.LogSoftmax", "torch.nn.Softmin")
UPSAMPLE = ("torch.nn.functional.upsample", "torch.nn.Upsample")


# -- argument helpers -----------------------------------------------------------------------------
def _keyword(name: str, value: cst.BaseExpression, like: Optional[cst.Arg] = None) -> cst.Arg:
    arg = cst.Arg(value=value, keyword=cst.Name(name),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    return arg.with_changes(comma=like.comma, whitespace_after_arg=like.whitespace_after_arg) if like else arg


def _with_args(call: cst.Call, args: List[cst.Arg]) -> cst.Call:
    """``call`` with ``args``; the original last argument's trailing comma (or none) ends the new list."""
    last_comma = call.args[-1].comma if call.args else cst.MaybeSentinel.DEFAULT
    fixed = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            fixed.append(arg.with_changes(comma=last_comma))
        elif isinstance(arg.comma, cst.MaybeSentinel):
            fixed.append(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            fixed.append(arg)
    return call.with_changes(args=fixed)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _literal(node: cst.BaseExpression):
    """``True``/``False``/``None``/0/1 as Python values; ``...`` (Ellipsis) when not a literal."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Integer) and node.value in ("0", "1"):
        return bool(int(node.value))
    return ...


def _argument(call: cst.Call, params: Sequence[str], name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    positional = [a for a in call.args if a.keyword is None and not a.star]
    index = params.index(name) if name in params else len(positional)
    return positional[index] if index < len(positional) else None


def modern_signature(call: cst.Call, *, tensor_receiver: bool = False,
                     qualified: Optional[str] = None) -> Optional[cst.Call]:
    """The current spelling of a removed positional form (``x.add_(v, t)`` -> ``x.add_(t, alpha=v)``).

    Sound by arity: no current overload of these takes that many positional arguments (``alpha``,
    ``value``, ``beta`` are keyword-only now), so a call of that arity that still runs binds the
    deprecated overload, whose meaning this spells out. ``x.add(a, b)``/``x.sub(a, b)`` without
    an underscore are also methods of non-tensors (meters, sets): only with ``tensor_receiver``.
    """
    if any(a.star for a in call.args) or any(a.keyword is not None and a.keyword.value != "out" for a in call.args):
        return None
    if qualified is not None:
        module, _, name = qualified.rpartition(".")
        table = FUNCTION_SIGNATURES.get(name) if module == "torch" else None
    elif isinstance(call.func, cst.Attribute):
        name = call.func.attr.value
        table = METHOD_SIGNATURES.get(name)
        if name in ("add", "sub") and not tensor_receiver:
            return None
    else:
        return None
    positional = [a for a in call.args if a.keyword is None]
    spec = table.get(len(positional)) if table else None
    if spec is None:
        return None
    order, keywords = spec
    outs = [a for a in call.args if a.keyword is not None]
    args = [positional[i] for i in order] + [_keyword(k, positional[i].value) for k, i in keywords] + outs
    return _with_args(call, args)


def _visibly_tensor(node: cst.CSTNode, qualname) -> bool:
    """``p.data``, ``exp_avg.mul(b)``, ``torch.zeros(3)``: an expression that is a tensor by its form."""
    if isinstance(node, cst.Attribute):
        return node.attr.value in ("data", "grad", "weight", "bias")
    if isinstance(node, cst.Call):
        if isinstance(node.func, (cst.Name, cst.Attribute)) and (qualname(node.func) or "").startswith("torch."):
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in TENSOR_METHODS
    return False


class _Spelling:
    """How a rule writes a qualified name in this file, and which import the old name came from."""

    def __init__(self, rule: Rule):
        self.ctx = rule.ctx

    def new(self, qualified: str, old: cst.CSTNode) -> cst.BaseExpression:
        """Call from a fix: the local spelling of ``qualified``, scheduling an import if needed.

        The old reference's own prefix is kept when it reaches the new name
        (``torch.nn.utils.clip_grad_norm`` -> ``torch.nn.utils.clip_grad_norm_``, not ``nn.utils...``).
        """
        head = (dotted(old) or "").split(".")[0]
        base = self.ctx.imports.aliases.get(head)
        if base is not None and not isinstance(old, cst.Name) and qualified.startswith(base + "."):
            return cst.parse_expression(head + qualified[len(base):])
        spelled = self.ctx.imports.local_name(qualified)
        if spelled is None:
            module, _, obj = qualified.rpartition(".")
            if isinstance(old, cst.Name) and obj != old.value and obj not in self.ctx.imports.aliases:
                self.ctx.add_import(module, obj)
                spelled = obj
            else:
                self.ctx.add_import(qualified.split(".")[0])
                spelled = qualified
        return cst.parse_expression(spelled)

    def forget(self, old: cst.CSTNode) -> None:
        """Call from a fix: drop the import the old reference used, if nothing else uses it."""
        head = (dotted(old) or "").split(".")[0]
        full = self.ctx.imports.aliases.get(head)
        if full is None:
            return
        if isinstance(old, cst.Name) and "." in full:
            module, _, obj = full.rpartition(".")
            self.ctx.remove_import_if_unused(module, obj, head if head != obj else None)
        else:
            self.ctx.remove_import_if_unused(full, None, head if head != full else None)


def _in_import(ancestors: Sequence[cst.CSTNode]) -> bool:
    return any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in ancestors)


class RenamedFunction(Rule):
    """Functions renamed or removed since 0.3, replaced by their current equivalent with the
    argument changes that keep the values (``RENAMES``, ``SPECIAL_RENAMES``): ``F.sigmoid`` ->
    ``torch.sigmoid``, ``nn.init.xavier_uniform`` -> ``xavier_uniform_``, ``clip_grad_norm`` ->
    ``clip_grad_norm_``, ``F.upsample*`` -> ``F.interpolate`` (``upsample_bilinear`` aligned
    corners), ``torch.potrf`` -> ``torch.linalg.cholesky(upper=True)``, ``torch.gesv(B, A)[0]`` ->
    ``torch.linalg.solve(A, B)``, TorchFix's deprecated symbols with an exact replacement. Where
    the arguments do not allow an exact rewrite (``torch.gesv`` used for its LU too, ``torch.qr``
    with a computed ``some``), the call is reported and left alone."""

    code = "TM401"
    name = "renamed-function"
    summary = ("renamed or removed functions (`F.sigmoid`, `nn.init.xavier_uniform`, `clip_grad_norm`, "
               "`F.upsample`, `torch.gesv`, ...) become their current equivalents")
    triggers = tuple(sorted({q.rpartition(".")[2] for q in (*RENAMES, *SPECIAL_RENAMES)}))
    requires = ("torch",)
    changes = (
        Example("import torch\nimport torch.nn.functional as F\n\ny = F.sigmoid(x) + F.tanh(x)\n",
                "import torch\n\ny = torch.sigmoid(x) + torch.tanh(x)\n"),
        Example("import torch.nn as nn\n\nnn.init.xavier_uniform(w, gain=nn.init.calculate_gain('relu'))\n"
                "nn.init.constant(b, 0)\n",
                "import torch.nn as nn\n\nnn.init.xavier_uniform_(w, gain=nn.init.calculate_gain('relu'))\n"
                "nn.init.constant_(b, 0)\n"),
        Example("import torch\n\ntorch.nn.utils.clip_grad_norm(model.parameters(), 0.25)\n",
                "import torch\n\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)\n"),
        Example("import torch.nn.functional as F\n\ny = F.upsample_bilinear(x, scale_factor=2)\n",
                "import torch.nn.functional as F\n\n"
                "y = F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)\n"),
        Example("import torch\n\nx = torch.gesv(b, A)[0]\nU = torch.potrf(A)\n",
                "import torch\n\nx = torch.linalg.solve(A, b)\nU = torch.linalg.cholesky(A, upper=True)\n"),
        Example("from torch.nn.init import kaiming_normal\n\nkaiming_normal(w)\n",
                "from torch.nn.init import kaiming_normal_\n\nkaiming_normal_(w)\n"),
        Example("from torch.nn.functional import tanh\n\nact = tanh\n",
                "import torch\n\nact = torch.tanh\n"),
        Example("import torch\n\nx, lu = torch.gesv(b, A)\n"),
    )
    keeps = (
        "import torch\n\ny = torch.sigmoid(x)\nz = torch.nn.functional.interpolate(x, scale_factor=2)\n",
        "def sigmoid(x):\n    return x\n\n\ny = sigmoid(3)\n",
        "import torch.nn as nn\n\nnn.init.xavier_uniform_(w)\n",
        "import numpy as np\n\nr = np.tanh(x)\n",
    )

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)

    def _reference(self, node: cst.CSTNode) -> None:
        parent = self.ctx.parent(1)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # the whole chain is the reference
        qualified = self.ctx.qualname(node)
        if qualified is None or qualified not in RENAMES or _in_import(self.ctx.ancestors):
            return
        if isinstance(node, cst.Name) and (
                (isinstance(parent, cst.Attribute) and parent.attr is node)
                or (isinstance(parent, cst.Arg) and parent.keyword is node)):
            return  # `x.tanh`, `f(tanh=...)`: not the imported name
        replacement = RENAMES[qualified]
        if not replacement.plain:
            if not (isinstance(parent, cst.Call) and parent.func is node):
                self.report(node, f"`{qualified}` is {replacement.note}: `{replacement.new}` (call it with the "
                                  "adjusted arguments; not rewritten as a reference)")
            return
        spelling = _Spelling(self)

        def fix(updated):
            new = spelling.new(replacement.new, node)
            spelling.forget(node)
            return new
        self.report(node, f"`{qualified}` ({replacement.note}) -> `{replacement.new}`", fix)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return
        qualified = self.ctx.qualname(func)
        if qualified is None:
            return
        if qualified in SPECIAL_RENAMES:
            self._special(node, qualified)
            return
        replacement = RENAMES.get(qualified)
        if replacement is None or replacement.plain:
            return
        rewritten = _rewrite_arguments(node, replacement)
        target, parent = node, self.ctx.parent(1)
        if replacement.first_only:
            if _first_of(parent, node):
                target = parent
            else:
                rewritten = None
        if rewritten is None:
            self.report(node, f"`{qualified}` ({replacement.note}): `{replacement.new}`, but these arguments or "
                              "this use of the result have no exact rewrite")
            return
        spelling = _Spelling(self)

        def fix(updated):
            call = updated.value if target is not node else updated
            if not isinstance(call, cst.Call):
                return updated
            new_call = _rewrite_arguments(call, replacement)
            if new_call is None:
                return updated
            spelling.forget(func)
            new_call = new_call.with_changes(func=spelling.new(replacement.new, func))
            if target is node:
                return new_call
            return new_call.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        self.report(target, f"`{qualified}` ({replacement.note}) -> `{replacement.new}`", fix)

    def _special(self, node: cst.Call, qualified: str) -> None:
        new, what = SPECIAL_RENAMES[qualified]
        build = _SPECIAL_BUILDERS[qualified]
        if build(node) is None:
            self.report(node, f"`{qualified}` is deprecated: `{new}` ({what}); not rewritten for these arguments")
            return
        spelling = _Spelling(self)

        def fix(updated):
            result = build(updated)
            if result is None:
                return updated
            call, new_name = result
            spelling.forget(node.func)
            return call.with_changes(func=spelling.new(new_name, node.func))
        self.report(node, f"`{qualified}` is deprecated: `{new}` ({what})", fix)


def _first_of(parent: Optional[cst.CSTNode], call: cst.Call) -> bool:
    """``call(...)[0]`` or ``call(...).solution``."""
    if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1:
        index = parent.slice[0].slice
        return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0"
    return isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value == "solution"


def _rewrite_arguments(call: cst.Call, rep: Replacement) -> Optional[cst.Call]:
    """The arguments of ``rep.new`` for ``call``'s arguments, or ``None`` if there is no exact rewrite."""
    if any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    keep = len(positional) if rep.keep_positional is None else rep.keep_positional
    if (rep.params and len(positional) > len(rep.params)) or len(positional) < len(rep.order or ()):
        return None
    if rep.order is not None and (len(rep.order) != keep or (keywords and not rep.params)):
        return None
    head = [positional[i] for i in rep.order] if rep.order is not None else positional[:keep]
    named = [(rep.params[i], a) for i, a in enumerate(positional) if i >= keep]
    named += [(a.keyword.value, a) for a in keywords]
    for name in rep.must_be_false:
        given = [a for n, a in named if n == name]
        if given and _literal(given[0].value) is not False:
            return None
        named = [(n, a) for n, a in named if n != name]
    renames = dict(rep.keywords)
    converted = [_keyword(renames.get(name, name), a.value, a) for name, a in named]
    given = {a.keyword.value for a in converted}
    added = [_keyword(name, cst.parse_expression(source)) for name, source in rep.defaults if name not in given]
    prepended = [cst.Arg(value=cst.parse_expression(source)) for source in rep.prepend]
    return _with_args(call, prepended + head + converted + added)


def _build_qr(call: cst.Call):
    some = _argument(call, ("input", "some"), "some")
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > 2 or any(
            a.keyword is not None and a.keyword.value not in ("some", "out") for a in call.args):
        return None
    value = True if some is None else _literal(some.value)
    if value is ...:
        return None
    args = [a for a in call.args if a is not some]
    if value is False:
        args.append(_keyword("mode", cst.SimpleString("'complete'")))
    return _with_args(call, args), "torch.linalg.qr"


def _build_lu(call: cst.Call):
    params = ("A", "pivot", "get_infos")
    if any(a.star for a in call.args) or len([a for a in call.args if a.keyword is None]) > 3 or any(
            a.keyword is not None and a.keyword.value not in params for a in call.args):
        return None
    infos = _argument(call, params, "get_infos")
    value = False if infos is None else _literal(infos.value)
    if value is ...:
        return None
    pivot = _argument(call, params, "pivot")
    args = [a for a in call.args if a.keyword is None][:1]
    if pivot is not None:
        args.append(_keyword("pivot", pivot.value))
    return _with_args(call, args), "torch.linalg.lu_factor_ex" if value else "torch.linalg.lu_factor"


def _build_chain_matmul(call: cst.Call):
    matrices = [a for a in call.args if a.keyword is None]
    others = [a for a in call.args if a.keyword is not None]
    if len(matrices) < 2 or any(a.star for a in call.args) or any(a.keyword.value != "out" for a in others):
        return None
    elements = [cst.Element(value=a.value) for a in matrices]
    return _with_args(call, [cst.Arg(value=cst.List(elements=elements)), *others]), "torch.linalg.multi_dot"


def _build_range(call: cst.Call):
    """``torch.range(a, b[, s])`` with integer literals -> ``torch.arange(a., b + 1.[, s.])`` (end included,
    float literals: the default float dtype, like ``torch.range``)."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if not 2 <= len(positional) <= 3 or keywords - {"dtype", "device", "requires_grad"} or any(
            a.star for a in call.args):
        return None
    values = []
    for arg in positional:
        node, sign = arg.value, 1
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            node, sign = node.expression, -1
        if not isinstance(node, cst.Integer):
            return None
        values.append(sign * int(node.evaluated_value))
    step = values[2] if len(values) == 3 else 1
    if step == 0:
        return None
    values[1] += 1 if step > 0 else -1
    suffix = "" if "dtype" in keywords else "."
    args = [a.with_changes(value=cst.parse_expression(f"{v}{suffix}")) for a, v in zip(positional, values)]
    return _with_args(call, args + [a for a in call.args if a.keyword is not None]), "torch.arange"


_SPECIAL_BUILDERS = {"torch.qr": _build_qr, "torch.lu": _build_lu, "torch.chain_matmul": _build_chain_matmul,
                     "torch.range": _build_range}


class SizeAverageReduce(Rule):
    """``size_average=``/``reduce=`` on losses were replaced by ``reduction=`` (0.4.1) and now warn.
    The legacy pair maps exactly as ``torch.nn._reduction.legacy_get_string`` does (``None`` counts
    as ``True``; both true: ``'mean'``, only ``reduce``: ``'sum'``, else ``'none'``); the legacy pair
    overrides an explicit ``reduction``. ``'mean'`` (the default) is not written out. Positional
    arguments from ``size_average`` on become keywords. A non-literal value is reported, with an
    unsafe fix for ``size_average`` alone (``'mean' if x else 'sum'``, wrong if ``x`` is ``None``)."""

    code = "TM402"
    min_torch = "0.4.1"
    name = "size-average-reduce"
    summary = "`size_average=`/`reduce=` on losses become the equivalent `reduction=`"
    triggers = ("size_average", "reduce", "Loss(", "loss(")
    requires = ("torch",)
    changes = (
        Example("import torch.nn.functional as F\n\nloss = F.nll_loss(output, target, size_average=False)\n",
                "import torch.nn.functional as F\n\nloss = F.nll_loss(output, target, reduction='sum')\n"),
        Example("import torch.nn as nn\n\ncriterion = nn.CrossEntropyLoss(size_average=True, reduce=False)\n"
                "mse = nn.MSELoss(size_average=True)\n",
                "import torch.nn as nn\n\ncriterion = nn.CrossEntropyLoss(reduction='none')\nmse = nn.MSELoss()\n"),
        Example("import torch.nn as nn\n\ncriterion = nn.NLLLoss(weight, False, -1)\n",
                "import torch.nn as nn\n\ncriterion = nn.NLLLoss(weight, ignore_index=-1, reduction='sum')\n"),
        Example("import torch.nn as nn\n\ncriterion = nn.BCELoss(size_average=args.avg)\n",
                "import torch.nn as nn\n\ncriterion = nn.BCELoss(reduction='mean' if args.avg else 'sum')\n",
                unsafe=True),
    )
    keeps = (
        "import torch.nn as nn\n\ncriterion = nn.NLLLoss(reduction='sum')\n",
        "import numpy as np\n\nm = np.mean(x, keepdims=True)\nf(size_average=False)\n",
        "from functools import reduce\n\ntotal = reduce(add, xs)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        qualified = self.ctx.qualname(node.func)
        params = LOSS_PARAMETERS.get(qualified or "")
        if params is None:
            return
        size_average, reduce = _argument(node, params, "size_average"), _argument(node, params, "reduce")
        if (size_average is None and reduce is None) or any(a.star for a in node.args) \
                or len([a for a in node.args if a.keyword is None]) > len(params):
            return
        sa_value = None if size_average is None else _literal(size_average.value)
        reduce_value = None if reduce is None else _literal(reduce.value)
        if reduce_value is ... or (sa_value is ... and reduce_value is False):
            self.report(node, "`size_average`/`reduce` computed at run time: set `reduction=` "
                              "('mean', 'sum' or 'none') by hand")
            return
        if sa_value is ...:
            expression = _code(size_average.value)
            reduction = f"'mean' if {expression} else 'sum'"
            self.report(node, f"`size_average={expression}`: `reduction={reduction}` (if it is never None)",
                        lambda updated: _reduction_call(updated, params, reduction), unsafe=True)
            return
        reduction = repr(legacy_reduction(sa_value, reduce_value))
        self.report(node, f"`size_average`/`reduce` -> `reduction={reduction}`",
                    lambda updated: _reduction_call(updated, params, reduction))


def _reduction_call(call: cst.Call, params: Tuple[str, ...], reduction: str) -> cst.Call:
    index = params.index("size_average")
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keep = positional[:index]
    converted = [_keyword(params[i], a.value, a) for i, a in enumerate(positional)
                 if index <= i < len(params) and params[i] not in ("size_average", "reduce", "reduction")]
    rest = [a for a in call.args if a.keyword is not None
            and a.keyword.value not in ("size_average", "reduce", "reduction")]
    stars = [a for a in call.args if a.star]
    added = [] if reduction == "'mean'" else [_keyword("reduction", cst.parse_expression(reduction))]
    args = keep + converted + rest + added + stars
    if not args:
        return call.with_changes(args=())
    return _with_args(call, args)


class OldPositionalSignature(Rule):
    """0.3 put the scalar first: ``add_(value, other)``, ``addcmul_(value, t1, t2)``,
    ``addmm(beta, M, alpha, m1, m2)``. These overloads are deprecated (``add_`` warns) and may go;
    the current forms take the scalar as a keyword (``add_(other, alpha=value)``). The criterion is
    arity, which is sound: no current overload takes that many positional arguments, so a call of
    that arity that runs at all runs the legacy overload (``METHOD_SIGNATURES``,
    ``FUNCTION_SIGNATURES``). ``x.add(a, b)``/``x.sub(a, b)`` without an underscore are also
    methods of other objects (torchnet meters, sets): rewritten only when ``x`` is visibly a tensor
    (``p.data``, ``exp_avg.mul(b)``, a ``torch.*`` call)."""

    code = "TM403"
    name = "old-positional-signature"
    summary = ("scalar-first signatures `add_(value, t)`, `addcmul_(value, t1, t2)`, `addmm(beta, M, alpha, a, b)` "
               "become keyword forms")
    triggers = ("add", "sub(", "sub_(")
    changes = (
        Example("exp_avg.mul_(beta1).add_(1 - beta1, grad)\nexp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)\n"
                "p.data.addcdiv_(-step_size, exp_avg, denom)\n",
                "exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)\n"
                "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n"
                "p.data.addcdiv_(exp_avg, denom, value=-step_size)\n"),
        Example("import torch\n\ny = torch.add(x, 0.5, z)\nm = torch.addmm(0.5, M, 2, a, b)\n",
                "import torch\n\ny = torch.add(x, z, alpha=0.5)\nm = torch.addmm(M, a, b, beta=0.5, alpha=2)\n"),
        Example("avg = p.data.mul(0.9).add(0.1, q.data)\n", "avg = p.data.mul(0.9).add(q.data, alpha=0.1)\n"),
    )
    keeps = (
        "x.add_(y, alpha=2)\ny = x.add(z)\nmeter.add(loss, n)\ns.add(item)\n",
        "import numpy as np\n\nz = np.add(a, b)\n",
        "import torch\n\nm = torch.addmm(M, a, b)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
            else None
        if name is None or (name not in METHOD_SIGNATURES and name not in FUNCTION_SIGNATURES):
            return
        qualified = self.ctx.qualname(func)
        tensor = isinstance(func, cst.Attribute) and _visibly_tensor(func.value, self.ctx.qualname)
        if qualified is None and not isinstance(func, cst.Attribute):
            return
        if modern_signature(node, tensor_receiver=tensor, qualified=qualified) is None:
            return
        self.report(node, f"`{name}` with the scalar first (removed overload): the scalar becomes a keyword",
                    lambda updated: modern_signature(updated, tensor_receiver=tensor, qualified=qualified) or updated)


class RenamedKeyword(Rule):
    """Keywords that were renamed without a change of meaning (``RENAMED_KEYWORDS``): the old
    spelling raises TypeError on current PyTorch. A method name counts on any receiver (only
    tensors have ``backward(retain_variables=)``); a function counts by its qualified name."""

    code = "TM407"
    name = "renamed-keyword"
    summary = "keywords renamed with the same meaning: `backward(retain_variables=)` becomes `retain_graph=`"
    triggers = tuple(sorted({old for renames in RENAMED_KEYWORDS.values() for old in renames}))
    changes = (
        Example("loss.backward(retain_variables=True)\n", "loss.backward(retain_graph=True)\n"),
        Example("import torch\n\ng = torch.autograd.grad(y, x, retain_variables=keep)\n",
                "import torch\n\ng = torch.autograd.grad(y, x, retain_graph=keep)\n"),
        Example("loss.backward(retain_variables=True, retain_graph=False)\n"),
    )
    keeps = (
        "loss.backward(retain_graph=True)\n",
        "import torch\n\nkeep(retain_variables=True)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        renames = RENAMED_KEYWORDS.get(self.ctx.qualname(func) or "") or (
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
                self.report(node, f"`{old}=` -> `{new}=` (renamed in PyTorch 0.4; the old keyword is a TypeError)",
                            lambda updated, old=old, new=new: _renamed_keyword(updated, old, new))


def _renamed_keyword(call: cst.Call, old: str, new: str) -> cst.Call:
    args = [arg.with_changes(keyword=cst.Name(new)) if arg.keyword is not None and arg.keyword.value == old else arg
            for arg in call.args]
    return call.with_changes(args=args)


class ImplicitSoftmaxDim(Rule):
    """``F.softmax(x)``, ``F.log_softmax(x)``, ``F.softmin(x)`` and ``nn.Softmax()`` without ``dim``
    use the legacy implicit choice (dim 0 for 0-, 1- and 3-dim inputs, else 1) and warn. The right
    ``dim`` depends on the input's rank, unknown statically: reported, with ``dim=1`` as an unsafe
    fix (the legacy choice for 2- and 4-dim inputs, e.g. batch x classes; it differs silently for a
    3-dim input and raises for a 1-dim one)."""

    code = "TM404"
    name = "implicit-softmax-dim"
    summary = "softmax/log_softmax/softmin without `dim` (legacy implicit dim) are reported; `dim=1` is an unsafe fix"
    triggers = ("softmax", "Softmax", "softmin", "Softmin")
    requires = ("torch",)
    changes = (
        Example("import torch.nn.functional as F\n\np = F.log_softmax(self.fc(x))\n",
                "import torch.nn.functional as F\n\np = F.log_softmax(self.fc(x), dim=1)\n", unsafe=True),
        Example("import torch.nn as nn\n\nact = nn.Softmax()\n", "import torch.nn as nn\n\nact = nn.Softmax(dim=1)\n",
                unsafe=True),
    )
    keeps = (
        "import torch.nn.functional as F\n\np = F.softmax(x, dim=-1)\nq = F.log_softmax(x, 1)\n",
        "import torch\n\np = torch.softmax(x, 1)\n",
        "import torch.nn as nn\n\nact = nn.Softmax(1)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        qualified = self.ctx.qualname(node.func)
        if qualified in SOFTMAX_FUNCTIONS:
            params: Tuple[str, ...] = ("input", "dim")
        elif qualified in SOFTMAX_MODULES:
            params = ("dim",)
        else:
            return
        if any(a.star for a in node.args):
            return
        dim = _argument(node, params, "dim")
        if dim is not None and _literal(dim.value) is not None:
            return
        short = qualified.rpartition(".")[2]
        self.report(node, f"`{short}` without `dim`: the legacy implicit dim (0 for 0-, 1-, 3-dim inputs, else 1) "
                          "is deprecated; pass `dim=` (`dim=1` for batch x classes)",
                    lambda updated: _set_keyword(updated, "dim", "1"), unsafe=True)


def _set_keyword(call: cst.Call, name: str, source: str) -> cst.Call:
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    return _with_args(call, args + [_keyword(name, cst.parse_expression(source))])


class DeprecatedNoRewrite(Rule):
    """Deprecated or removed functions with no exact drop-in replacement (``REPORTED``, from
    TorchFix's deprecated symbol table and the 0.3 linear-algebra names): the replacement
    returns something else (``V`` vs ``Vh``, complex eigenvalues) or changes saved state
    (``weight_norm``), so each is reported with what to use instead."""

    code = "TM405"
    name = "deprecated-no-rewrite"
    summary = ("deprecated or removed functions without an exact replacement (`torch.symeig`, `torch.svd`, "
               "`weight_norm`, ...) are reported")
    triggers = tuple(sorted({q.rpartition(".")[2] for q in REPORTED}))
    requires = ("torch",)
    changes = (
        Example("import torch\n\ne, v = torch.symeig(A, eigenvectors=True)\n"),
        Example("import torch.nn as nn\n\nlayer = nn.utils.weight_norm(nn.Linear(3, 4))\n"),
    )
    keeps = (
        "import torch\n\ne, v = torch.linalg.eigh(A)\n",
        "import numpy as np\n\nn = np.linalg.norm(x)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        qualified = self.ctx.qualname(node.func)
        if qualified in REPORTED:
            self.report(node, f"`{qualified}` {REPORTED[qualified]}")


class LegacyUpsampleCorners(Rule):
    """In 0.3, ``nn.Upsample``/``F.upsample`` with a linear mode aligned corners; 0.4.0 added
    ``align_corners`` with default ``False`` (different values for the same call). A legacy call
    without ``align_corners`` therefore computes something else today. Whether the script was
    written for 0.3 (then ``align_corners=True`` restores it) or for a later version is not
    visible: reported, with ``align_corners=True`` as an unsafe fix."""

    code = "TM406"
    name = "legacy-upsample-corners"
    summary = ("linear-mode `F.upsample`/`nn.Upsample` without `align_corners` (0.3 aligned corners) are reported; "
               "`align_corners=True` is an unsafe fix")
    triggers = ("upsample", "Upsample")
    requires = ("torch",)
    changes = (
        Example("import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2, mode='bilinear')\n",
                "import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)\n",
                unsafe=True),
        Example("import torch.nn.functional as F\n\ny = F.upsample(x, size=(8, 8), mode='bilinear')\n",
                "import torch.nn.functional as F\n\ny = F.upsample(x, size=(8, 8), mode='bilinear', "
                "align_corners=True)\n", unsafe=True),
    )
    keeps = (
        "import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2)\n"
        "up2 = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)\n",
        "import torch.nn.functional as F\n\ny = F.interpolate(x, scale_factor=2, mode='bilinear')\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, (cst.Name, cst.Attribute)) or self.ctx.qualname(node.func) not in UPSAMPLE:
            return
        params = ("input", "size", "scale_factor", "mode", "align_corners")
        if self.ctx.qualname(node.func) == "torch.nn.Upsample":
            params = params[1:]
        mode, corners = _argument(node, params, "mode"), _argument(node, params, "align_corners")
        if corners is not None or mode is None or not isinstance(mode.value, cst.SimpleString) \
                or mode.value.evaluated_value not in _LINEAR_MODES or any(a.star for a in node.args):
            return
        self.report(node, f"mode={mode.value.value} without `align_corners`: 0.3 aligned corners, the default "
                          "since 0.4.0 does not (different values); `align_corners=True` if this is 0.3 code",
                    lambda updated: _set_keyword(updated, "align_corners", "True"), unsafe=True)


RULES = [RenamedFunction, SizeAverageReduce, OldPositionalSignature, ImplicitSoftmaxDim, DeprecatedNoRewrite,
         LegacyUpsampleCorners, RenamedKeyword]
