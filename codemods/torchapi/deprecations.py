"""Deprecated, renamed and removed torch API: the facts behind the TM4xx rules (and the README's
deprecated-API table). Each entry was checked against torch 2.13 (``tests/rules/deprecated/`` runs old
and new calls side by side where the old one still exists); the torch version each replacement needs
is in ``codemods.torchapi.since``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple


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
    def written_keywords(self) -> Tuple[str, ...]:
        """Every keyword a rewrite may write (for the torch version it needs)."""
        renames = dict(self.keywords)
        keep = len(self.params) if self.keep_positional is None else self.keep_positional
        named = [renames.get(p, p) for p in self.params[keep:] if p not in self.must_be_false]
        return tuple(dict.fromkeys([*named, *renames.values(), *(k for k, _ in self.defaults)]))

    @property
    def plain(self) -> bool:
        return not (self.params or self.keywords or self.defaults or self.prepend or self.order or self.first_only)


_INIT = ("xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "uniform", "normal", "constant",
         "eye", "dirac", "orthogonal", "sparse")
_FUNCTORCH = ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")
LINEAR_MODES = ("linear", "bilinear", "trilinear")

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
    "torch.btriunpack": Replacement("torch.lu_unpack", "removed in 1.x (renamed in 1.1 with btrifact -> lu)"),
    "torch.cholesky": Replacement("torch.linalg.cholesky", "TorchFix table; 1.8 without `upper` (`upper=` "
                                  "since 1.10: pytorch/pytorch#62434)", params=("input", "upper"),
                                  keep_positional=1),
    "torch.potrf": Replacement("torch.linalg.cholesky", "removed; potrf defaulted to upper=True",
                               params=("a", "upper"), keep_positional=1, defaults=(("upper", "True"),)),
    "torch.potrs": Replacement("torch.cholesky_solve", "removed; potrs defaulted to upper=True",
                               params=("b", "u", "upper"), keep_positional=2, defaults=(("upper", "True"),)),
    "torch.potri": Replacement("torch.cholesky_inverse", "removed; potri defaulted to upper=True (renamed "
                               "in April 2019, pytorch/pytorch#19498: 1.1 or 1.2)",
                               params=("u", "upper"), keep_positional=1, defaults=(("upper", "True"),)),
    "torch.btrifact": Replacement("torch.linalg.lu_factor", "removed; same (LU, pivots)",
                                  params=("A", "pivot"), keep_positional=1),
    "torch.btrifact_with_info": Replacement("torch.linalg.lu_factor_ex", "removed; same (LU, pivots, infos)",
                                            params=("A", "pivot"), keep_positional=1),
    "torch.lu_solve": Replacement("torch.linalg.lu_solve", "TorchFix table: arguments reordered", order=(1, 2, 0)),
    "torch.matrix_rank": Replacement("torch.linalg.matrix_rank", "removed; same default tolerance (1.8 without `tol`; "
                                     "`atol=` since 1.11)",
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


# Keywords renamed with the same meaning (TM407): (method name, or qualified function) -> {old: new}. 0.3
# spellings: ``retain_variables`` (a TypeError since 1.0), ``torch.autograd.backward``'s ``variables`` and
# ``grad_variables`` (deprecated since 0.4), ``torch.cat(seq=)``/``torch.stack(sequence=)`` and
# ``Module.cuda(device_id=)`` (``x.cuda(device_id=)`` on a tensor was already a TypeError in 0.3).
RENAMED_KEYWORDS: Dict[str, Dict[str, str]] = {
    "backward": {"retain_variables": "retain_graph"},  # Tensor.backward, any receiver
    "torch.autograd.backward": {"retain_variables": "retain_graph", "variables": "tensors",
                                "grad_variables": "grad_tensors"},
    "torch.autograd.grad": {"retain_variables": "retain_graph"},
    "torch.cat": {"seq": "tensors"},
    "torch.stack": {"sequence": "tensors"},
    "cuda": {"device_id": "device"},  # nn.Module.cuda, any receiver
}

# Keywords removed, not renamed (TM408): qualified callable -> (the parameters that 0.3 took by those names,
# in positional order; they become positional arguments) ...
POSITIONAL_KEYWORDS: Dict[str, Tuple[str, ...]] = {
    "torch.utils.data.TensorDataset": ("data_tensor", "target_tensor"),  # `*tensors` since 0.4
    "torch.utils.data.dataset.TensorDataset": ("data_tensor", "target_tensor"),
}
# ... and keywords that are gone and did nothing the current default does not (dropped when literally
# False; ``verbose=True`` only printed each change of learning rate: dropped by an unsafe fix).
LR_SCHEDULERS = ("LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
                 "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
                 "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR")
# Positional parameters in the order legacy torch took them, where they have moved since: ReduceLROnPlateau's
# fifth was ``verbose`` until 1.x (the 1.0 docs) and is ``threshold`` now (the 1.12 docs put verbose last).
LEGACY_POSITIONAL: Dict[str, Tuple[str, ...]] = {
    "torch.optim.lr_scheduler.ReduceLROnPlateau": ("optimizer", "mode", "factor", "patience", "verbose", "threshold",
                                                   "threshold_mode", "cooldown", "min_lr", "eps"),
}
DROPPED_KEYWORDS: Dict[str, Tuple[str, str]] = {
    **{f"torch.optim.lr_scheduler.{name}": ("verbose", "deprecated in 2.2, removed since: a TypeError")
       for name in LR_SCHEDULERS},
}


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




# -- removed modules (TM409) ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Removed:
    """A removed (or moved) module or module member. ``replacement``: the expression that stands for it
    exactly (``None``: reported, with ``note`` saying what to use); ``imports``: the modules that
    expression needs; ``older``: the spelling to write when ``--min-torch`` predates the replacement."""

    replacement: Optional[str]
    note: str
    imports: Tuple[str, ...] = ()
    older: Optional[str] = None


_SIX = "`torch._six` was removed in 2.0"
_TORCHTEXT = ("torchtext's legacy `Field`/`Iterator` API moved to `torchtext.legacy` in 0.9 and was removed in 0.12: "
              "tokenize with `torchtext.data.utils.get_tokenizer`, build the vocabulary with "
              "`torchtext.vocab.build_vocab_from_iterator`, batch with `torch.utils.data.DataLoader` and a "
              "`collate_fn`")
_TORCHTEXT_LEGACY = ("Field", "RawField", "LabelField", "NestedField", "ReversibleField", "SubwordField", "Iterator",
                     "BucketIterator", "BPTTIterator", "TabularDataset", "Example", "Batch", "Pipeline", "Dataset")
# Longest dotted prefix wins: ``torch._six.inf`` before ``torch._six``.
REMOVED_MODULES: Dict[str, Removed] = {
    "torch._six": Removed(None, f"{_SIX}: use the Python 3 builtins or standard library it aliased"),
    "torch._six.string_classes": Removed("(str, bytes)", f"{_SIX}; it was `(str, bytes)` on Python 3"),
    "torch._six.int_classes": Removed("int", f"{_SIX}; it was `int` on Python 3"),
    "torch._six.container_abcs": Removed("collections.abc", f"{_SIX}; it was `collections.abc`",
                                         ("collections.abc",)),
    "torch._six.inf": Removed("math.inf", f"{_SIX}; it was `math.inf`", ("math",)),
    "torch._six.nan": Removed("math.nan", f"{_SIX}; it was `math.nan`", ("math",)),
    "torch._six.PY3": Removed("True", f"{_SIX}; always true on Python 3"),
    "torch._six.PY37": Removed("True", f"{_SIX}; true on every Python current torch runs on"),
    "torch._six.PY2": Removed("False", f"{_SIX}; always false on Python 3"),
    "torch._six.queue": Removed("queue", f"{_SIX}; it was the `queue` module", ("queue",)),
    "torch._six.FileNotFoundError": Removed("FileNotFoundError", f"{_SIX}; it was the builtin"),
    "torch._six.istuple": Removed(None, f"{_SIX}: `isinstance(x, tuple)` (it also accepted torch.return_types)"),
    "torch._six.with_metaclass": Removed(None, f"{_SIX}: `class C(Base, metaclass=Meta)`"),
    "torch.utils.serialization.load_lua": Removed(None, "removed in 1.0: no replacement in torch; the `torchfile` "
                                               "package reads Lua Torch7 files (`torchfile.load`), then "
                                               "`torch.from_numpy` the arrays"),
    "torch.legacy": Removed(None, "removed in 1.0 (Lua-style `torch.legacy.nn`): rebuild the model with `torch.nn`"),
    "torch.utils.trainer": Removed(None, "removed in 1.0: write the training loop"),
    "torch.utils.ffi": Removed(None, "removed in 1.0: build C/C++ extensions with `torch.utils.cpp_extension`"),
    "torch.utils.data.dataloader.DataLoaderIter": Removed(
        None, "renamed `_DataLoaderIter` in 1.0 and split in 1.2: use `iter(loader)`"),
    "torch.utils.data.dataloader._DataLoaderIter": Removed(None, "removed in 1.2: use `iter(loader)`"),
    "torch.utils.data.dataloader.numpy_type_map": Removed(
        None, "removed in 1.2: `torch.as_tensor` / `torch.from_numpy` convert numpy values"),
    # TorchFix's TOR104; `torch.utils.data.dataloader.default_collate` is public (pytorch/pytorch#69445) and stays.
    "torch.utils.data._utils.collate.default_collate": Removed(
        "torch.utils.data.default_collate", "private (it may move); public as `torch.utils.data.default_collate` "
        "since 1.11 (pytorch/pytorch#69862), as `torch.utils.data.dataloader.default_collate` before",
        older="torch.utils.data.dataloader.default_collate"),
    "torchtext.legacy": Removed(None, _TORCHTEXT),
    **{f"torchtext.data.{name}": Removed(None, _TORCHTEXT) for name in _TORCHTEXT_LEGACY},
}


def removed_entry(qualified: str) -> Optional[Tuple[str, Removed]]:
    """(the table key, its entry) for ``qualified`` or the longest dotted prefix of it in ``REMOVED_MODULES``."""
    parts = qualified.split(".")
    for end in range(len(parts), 0, -1):
        key = ".".join(parts[:end])
        if key in REMOVED_MODULES:
            return key, REMOVED_MODULES[key]
    return None
