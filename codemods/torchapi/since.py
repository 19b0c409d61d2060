"""The torch version in which each spelling that a rule writes appeared: ``--min-torch`` decides with it
whether a fix may be written (``ctx.supports``), and a test checks every documented example's output
against it.

Keys: a qualified name (``torch.linalg.solve``), a keyword of a function (``torch.linalg.cholesky(upper=)``)
or of a tensor method (``.add_(alpha=)``). Sources: the PyTorch release notes and the docs of each version;
where they were unclear, the pull request that added it (noted).
"""
from __future__ import annotations

from typing import Dict, Iterable

from codemods.versions import parse

_INIT = ("xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_",
         "constant_", "eye_", "dirac_", "orthogonal_", "sparse_")
_FUNC = ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")
# The keyword-scalar overloads (``tensor.add(other, alpha=2)``: pytorch/pytorch#2789, Sept 2017); 0.4.0 kept the
# scalar-first ones as deprecated overloads "for backwards compatibility with 0.3" (pytorch/pytorch#5643).
_SCALAR_KEYWORDS = {
    **{f".{m}(alpha=)": "0.4" for m in ("add", "add_", "sub", "sub_")},
    **{f".{m}(value=)": "0.4" for m in ("addcmul", "addcmul_", "addcdiv", "addcdiv_")},
    **{f".{m}({k}=)": "0.4" for b in ("addmm", "addmv", "addr", "addbmm", "baddbmm") for m in (b, b + "_")
       for k in ("beta", "alpha")},
}

SINCE: Dict[str, str] = {
    # present in 0.4, the oldest torch the tool targets
    "torch.sigmoid": "0.4", "torch.tanh": "0.4", "torch.arange": "0.4", "torch.add": "0.4", "torch.sub": "0.4",
    "torch.addcmul": "0.4", "torch.addcdiv": "0.4", "torch.addmm": "0.4", "torch.addmv": "0.4", "torch.addr": "0.4",
    "torch.addbmm": "0.4", "torch.baddbmm": "0.4", "torch.nn.NLLLoss": "0.4", "torch.nn.Upsample": "0.4",
    "torch.nn.Upsample(align_corners=)": "0.4",  # 0.4.0 added align_corners
    "torch.nn.functional.upsample(align_corners=)": "0.4",
    **{f"torch.nn.init.{name}": "0.4" for name in _INIT},  # 0.4.0 release notes: in-place init functions
    "torch.nn.utils.clip_grad_norm_": "0.4",  # 0.4.0: clip_grad_norm deprecated for clip_grad_norm_
    "torch.nn.functional.interpolate": "0.4.1",  # 0.4.1 release notes: upsample deprecated for interpolate
    "torch.nn.functional.interpolate(align_corners=)": "0.4.1",
    "(reduction=)": "0.4.1",  # 0.4.1 release notes: size_average/reduce deprecated for reduction
    "(dim=)": "0.4",  # softmax's dim (0.3 already; the implicit dim warns since 0.3)
    "(retain_graph=)": "0.4", "(tensors=)": "0.4", "(grad_tensors=)": "0.4", "(device=)": "0.4",
    **_SCALAR_KEYWORDS,
    # 1.1: the LAPACK-named functions renamed: potrs -> cholesky_solve (pytorch/pytorch#15334, Dec 2018), gesv ->
    # solve (#18060), trtrs -> triangular_solve (#18213, both March 2019), btrifact/btriunpack -> lu/lu_unpack
    "torch.lu_unpack": "1.1", "torch.cholesky_solve": "1.1", "torch.cholesky_solve(upper=)": "1.1",
    # potri -> cholesky_inverse: #19498, merged 20 April 2019, days before 1.1.0: 1.2 to be safe
    "torch.cholesky_inverse": "1.2", "torch.cholesky_inverse(upper=)": "1.2",
    # 1.8: torch.linalg (release notes 1.8.0)
    "torch.outer": "1.8", "torch.linalg.cholesky": "1.8", "torch.linalg.solve": "1.8", "torch.linalg.qr": "1.8",
    "torch.linalg.qr(mode=)": "1.8", "torch.linalg.matrix_rank": "1.8", "torch.linalg.matrix_rank(hermitian=)": "1.8",
    "torch.linalg.cholesky(upper=)": "1.10",  # pytorch/pytorch#62434 (July 2021)
    "torch.linalg.multi_dot": "1.9",  # 1.9.0 release notes
    "torch.linalg.matrix_rank(atol=)": "1.11",  # 1.11: atol/rtol replace tol
    # pytorch/pytorch#63568 (Sept 2021)
    "torch.linalg.solve_triangular": "1.11", "torch.linalg.solve_triangular(upper=)": "1.11",
    "torch.linalg.solve_triangular(unitriangular=)": "1.11",
    # pytorch/pytorch#77637's note: torch.lu_solve in 1.12 -> linalg.lu_solve in 1.13
    "torch.linalg.lu_factor": "1.13", "torch.linalg.lu_factor_ex": "1.13", "torch.linalg.lu_solve": "1.13",
    "torch.linalg.lu_factor(pivot=)": "1.13", "torch.linalg.lu_factor_ex(pivot=)": "1.13",
    **{f"torch.func.{name}": "2.0" for name in _FUNC},  # functorch merged as torch.func in 2.0
    "torch.utils.data.default_collate": "1.11",  # pytorch/pytorch#69862; 1.10 raises ImportError
}


def needed(qualified: str, keywords: Iterable[str] = ()) -> str:
    """The torch version that a call of ``qualified`` (or ``.method``) with ``keywords`` needs: the newest of
    the name's and its keywords' (a keyword not listed needs nothing newer than the name)."""
    versions = [SINCE.get(qualified, "0.4")]
    for keyword in keywords:
        for key in (f"{qualified}({keyword}=)", f"({keyword}=)"):
            if key in SINCE:
                versions.append(SINCE[key])
                break
    return max(versions, key=parse)
