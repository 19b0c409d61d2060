"""TM401: every rename computes what the legacy call computed (side by side where the old call still runs;
against the documented result where it is gone), and each replacement's torch version is respected."""
import textwrap
import warnings

import pytest
import torch

from codemods.torchapi.deprecations import RENAMES, SPECIAL_RENAMES

from deprecated_support import PRELUDE, migrate, resolve, run, same


@pytest.mark.parametrize("new", sorted({r.new for r in RENAMES.values()} | {n for n, _ in SPECIAL_RENAMES.values()}
                                        | {"torch.linalg.lu_factor_ex"}))
def test_every_replacement_exists(new):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert callable(resolve(new))

@pytest.mark.parametrize("old", sorted(q for q, r in RENAMES.items() if "removed" in r.note))
def test_renamed_removed_functions_are_gone_on_this_torch(old):
    try:
        function = resolve(old)
    except AttributeError:
        return
    with pytest.raises((RuntimeError, TypeError)):
        function(torch.eye(3), torch.eye(3))

SIDE_BY_SIDE = [
    "result = F.sigmoid(x) + F.tanh(x)",
    "act = F.tanh\nresult = act(x)",
    *[f"w = torch.empty(4, 5)\nnn.init.{call}\nresult = w" for call in (
        "xavier_uniform(w)", "xavier_normal(w, gain=2.0)", "kaiming_uniform(w, a=0.1)",
        "kaiming_normal(w, mode='fan_out')", "uniform(w, -0.1, 0.1)", "normal(w, 0.0, 0.02)", "constant(w, 0.5)",
        "eye(w)", "orthogonal(w, nn.init.calculate_gain('relu'))", "sparse(w, 0.5)")],
    "w = torch.empty(4, 3, 3, 3)\nnn.init.dirac(w)\nresult = w",
    "m = nn.Linear(3, 2)\nm(torch.randn(4, 3)).sum().backward()\n"
    "n = torch.nn.utils.clip_grad_norm(m.parameters(), 0.1)\nresult = (n, m.weight.grad, m.bias.grad)",
    "result = F.upsample(x, scale_factor=2, mode='bilinear')",
    "result = F.upsample(x, size=(5, 7), mode='nearest')",
    "result = F.upsample_nearest(x, scale_factor=2)",
    "result = F.upsample_bilinear(x, size=(5, 7))",
    "result = F.upsample_bilinear(x, None, 3)",
    "result = nn.UpsamplingNearest2d(scale_factor=2)(x)",
    "result = nn.UpsamplingBilinear2d(size=(6, 5))(x)",
    "t = torch.randint(0, 3, (2, 4, 4))\nresult = nn.NLLLoss2d()(F.log_softmax(x[:, :3], 1), t)",
    "result = torch.ger(v1, v2)",
    "result = (torch.cholesky(A), torch.cholesky(A, True), torch.cholesky(A, upper=False))",
    "LU, piv = torch.lu(A)\nresult = torch.lu_solve(B, LU, piv)",
    "result = (torch.lu(A), torch.lu(A, pivot=True), torch.lu(A, get_infos=True))",
    "result = (torch.triangular_solve(B, U)[0], torch.triangular_solve(B, L, upper=False)[0],"
    " torch.triangular_solve(B, U, True, False, True)[0], torch.triangular_solve(B, U).solution)",
    "result = (torch.qr(a), torch.qr(a, some=False), torch.qr(a, True))",
    "result = torch.chain_matmul(a, b, c)",
    "result = (torch.range(0, 5), torch.range(1, 10, 3), torch.range(5, 0, -2), torch.range(-2, 2),"
    " torch.range(0, 4, dtype=torch.float64))",
    "import functorch\nresult = (functorch.vmap(torch.sum)(x), functorch.grad(lambda t: (t ** 2).sum())(v1))",
]


@pytest.mark.parametrize("source", SIDE_BY_SIDE)
def test_rewrite_computes_what_the_legacy_call_computes(source):
    outcome = migrate(PRELUDE + source)
    assert [f for f in outcome.findings if f.applied], "nothing was rewritten"
    migrated = outcome.text[len(PRELUDE):] if outcome.text.startswith(PRELUDE) else outcome.text
    for old in ("F.sigmoid", "F.tanh", "clip_grad_norm(", "upsample", "Upsampling", "NLLLoss2d", "torch.ger",
                "torch.cholesky", "torch.lu(", "torch.lu_solve", "triangular_solve", "torch.qr", "chain_matmul",
                "torch.range", "functorch."):
        assert old not in migrated
    torch.manual_seed(0)
    legacy_result = run(source)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        namespace = {}
        exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(legacy_result, namespace["result"])


def test_removed_linear_algebra_functions_compute_their_documented_results():
    source = PRELUDE + textwrap.dedent("""
    U2 = torch.potrf(A)
    L2 = torch.potrf(A, False)
    X1 = torch.potrs(B, U2)
    Ainv = torch.potri(U2)
    X2 = torch.gesv(B, A)[0]
    X3 = torch.solve(B, A).solution
    X4 = torch.trtrs(B, U)[0]
    X5 = torch.trtrs(B, L, False)[0]
    LU, piv = torch.btrifact(A)
    LU2, piv2, info = torch.btrifact_with_info(A)
    P, Lo, Up = torch.btriunpack(LU, piv)
    r = torch.matrix_rank(A)
    r2 = torch.matrix_rank(A, 1e3, True)
    """)
    outcome = migrate(source)
    assert len([f for f in outcome.findings if f.applied]) == 13
    namespace = {}
    exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    n = namespace
    A, B, U, L = n["A"], n["B"], n["U"], n["L"]
    close = lambda x, y: torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-4)  # noqa: E731
    close(n["U2"].T @ n["U2"], A)
    assert torch.equal(n["U2"], n["U2"].triu())  # potrf: upper by default
    close(n["L2"] @ n["L2"].T, A)
    assert torch.equal(n["L2"], n["L2"].tril())
    close(A @ n["X1"], B)  # potrs(b, u): upper by default
    close(n["Ainv"], torch.inverse(A))
    close(A @ n["X2"], B)  # gesv(B, A): solves A X = B
    close(A @ n["X3"], B)
    close(U @ n["X4"], B)  # trtrs: upper by default
    close(L @ n["X5"], B)
    close(n["P"] @ n["Lo"] @ n["Up"], A)
    assert torch.equal(n["LU"], n["LU2"]) and torch.equal(n["piv"], n["piv2"]) and int(n["info"]) == 0
    assert int(n["r"]) == 3 and int(n["r2"]) == 0


@pytest.mark.parametrize("source", [
    "import torch\nx, lu = torch.gesv(b, A)\n",
    "import torch\nx = torch.trtrs(b, A, True, True)[0]\n",
    "import torch\nq, r = torch.qr(a, some=flag)\n",
    "import torch\nm = torch.chain_matmul(a)\n",
    "import torch\nr = torch.range(0, n)\n",
    "import torch.nn as nn\nup = nn.UpsamplingBilinear2d\n",
])
def test_calls_without_an_exact_rewrite_are_reported_and_left(source):
    outcome = migrate(source)
    assert outcome.text == source
    assert [f.code for f in outcome.findings] == ["TM401"]


def test_imports_follow_the_rename():
    outcome = migrate("from torch.nn.init import xavier_uniform as xu, constant\n\nxu(w)\nconstant(b, 0)\n")
    assert outcome.text == ("from torch.nn.init import constant_, xavier_uniform_\n\n"
                            "xavier_uniform_(w)\nconstant_(b, 0)\n")
    outcome = migrate("from torch.nn.functional import sigmoid, relu\n\ny = relu(sigmoid(x))\n")
    assert outcome.text == "from torch.nn.functional import relu\nimport torch\n\ny = relu(torch.sigmoid(x))\n"


def test_names_that_only_look_like_the_old_ones_stay():
    source = ("from torch.nn.functional import tanh\nimport torch.nn.functional as F\n\n"
              "y = x.tanh()\nz = f(tanh=1)\nw = obj.F.sigmoid(x)\n")
    outcome = migrate(source)
    assert outcome.text == source and not outcome.findings
