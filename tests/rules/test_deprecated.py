"""TM4xx: every table entry is checked with real torch 2.x.

Where the legacy call still exists, old and migrated code run side by side on the same inputs and
must give the same values; for functions already removed (``torch.gesv``, ``torch.potrf``, ...) the
migrated code is checked against what the legacy function was documented to compute.
"""
import ast
import importlib
import itertools
import textwrap
import warnings

import pytest
import torch

import codemods
from codemods import deprecated
from codemods.deprecated import (FUNCTION_SIGNATURES, LOSS_PARAMETERS, METHOD_SIGNATURES, RENAMED_KEYWORDS, RENAMES, REPORTED,
                                 SPECIAL_RENAMES)
from codemods.engine import run_rules

PRELUDE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(2, 3, 4, 4)
a, b, c = torch.randn(3, 3), torch.randn(3, 3), torch.randn(3, 3)
v1, v2 = torch.randn(3), torch.randn(4)
A = a @ a.T + 3 * torch.eye(3)
U = torch.linalg.cholesky(A, upper=True)
L = U.T
B = torch.randn(3, 2)
"""


def migrate(source, rules=None, unsafe=False):
    outcome = run_rules(source, rules or deprecated.RULES, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    assert run_rules(outcome.text, rules or deprecated.RULES, unsafe_fixes=unsafe).text == outcome.text
    return outcome


def run(source):
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(PRELUDE + textwrap.dedent(source), "<script>", "exec"), namespace)
    return namespace["result"]


def same(left, right):
    if isinstance(left, (tuple, list)):
        assert len(left) == len(right)
        for x, y in zip(left, right):
            same(x, y)
    elif isinstance(left, torch.Tensor):
        torch.testing.assert_close(left, right, rtol=0, atol=0)
    else:
        assert left == right


def resolve(qualified):
    module, *rest = qualified.split(".")
    obj = importlib.import_module(module)
    for part in rest:
        obj = getattr(obj, part)
    return obj


# -- the tables name real API ----------------------------------------------------------------------
@pytest.mark.parametrize("new", sorted({r.new for r in RENAMES.values()} | {n for n, _ in SPECIAL_RENAMES.values()}
                                        | {"torch.linalg.lu_factor_ex"}))
def test_every_replacement_exists(new):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert callable(resolve(new))


@pytest.mark.parametrize("qualified", sorted(q for q, why in REPORTED.items() if why.startswith("removed")))
def test_reported_removed_functions_are_gone_on_this_torch(qualified):
    try:
        function = resolve(qualified)
    except AttributeError:
        return
    if not callable(function):
        return  # `torch.fft` is a module now
    with pytest.raises((RuntimeError, TypeError)):
        function(torch.eye(3), torch.eye(3))


@pytest.mark.parametrize("old", sorted(q for q, r in RENAMES.items() if "removed" in r.note))
def test_renamed_removed_functions_are_gone_on_this_torch(old):
    try:
        function = resolve(old)
    except AttributeError:
        return
    with pytest.raises((RuntimeError, TypeError)):
        function(torch.eye(3), torch.eye(3))


def test_table_rows_cover_every_entry_once():
    rows = deprecated.table_rows()
    keywords = sum(len(renames) for renames in RENAMED_KEYWORDS.values())
    assert len({row[1] for row in rows}) == len(rows) == (len(RENAMES) + len(SPECIAL_RENAMES) + len(REPORTED)
                                                          + keywords)


def test_retain_variables_is_a_type_error_and_retain_graph_keeps_the_graph():
    """TM407's premise on the installed torch: the old keyword fails, the new one means what it meant."""
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(TypeError):
        y.backward(retain_variables=True)
    y.backward(retain_graph=True)
    y.backward()  # the graph was kept for a second pass
    assert torch.equal(x.grad, 4 * x.detach())


def test_reported_and_renamed_tables_do_not_overlap():
    assert not set(REPORTED) & (set(RENAMES) | set(SPECIAL_RENAMES))


# -- renames: old and new side by side ------------------------------------------------------------
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
    "with torch.cpu.amp.autocast():\n    r1 = torch.mm(a, b)\n"
    "with torch.cpu.amp.autocast(True, torch.bfloat16):\n    r2 = torch.mm(a, b)\nresult = (r1, r2)",
    "import functorch\nresult = (functorch.vmap(torch.sum)(x), functorch.grad(lambda t: (t ** 2).sum())(v1))",
]


@pytest.mark.parametrize("source", SIDE_BY_SIDE)
def test_rewrite_computes_what_the_legacy_call_computes(source):
    outcome = migrate(PRELUDE + source)
    assert [f for f in outcome.findings if f.applied], "nothing was rewritten"
    migrated = outcome.text[len(PRELUDE):] if outcome.text.startswith(PRELUDE) else outcome.text
    for old in ("F.sigmoid", "F.tanh", "clip_grad_norm(", "upsample", "Upsampling", "NLLLoss2d", "torch.ger",
                "torch.cholesky", "torch.lu(", "torch.lu_solve", "triangular_solve", "torch.qr", "chain_matmul",
                "torch.range", "cpu.amp", "functorch."):
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


# -- TM402 ---------------------------------------------------------------------------------------
def test_legacy_pair_mapping_is_torch_own():
    from torch.nn._reduction import legacy_get_string
    for size_average, reduce in itertools.product([None, True, False], repeat=2):
        assert deprecated.legacy_reduction(size_average, reduce) == legacy_get_string(size_average, reduce,
                                                                                       emit_warning=False)


@pytest.mark.parametrize("size_average,reduce", [pair for pair in itertools.product(["None", "True", "False", None],
                                                                                  repeat=2) if pair != (None, None)])
@pytest.mark.parametrize("template", [
    "logp = F.log_softmax(torch.randn(5, 4), 1)\nt = torch.tensor([0, 1, 2, 3, 0])\n"
    "result = F.nll_loss(logp, t{args})",
    "result = nn.MSELoss({args0})(a, b)",
    "result = F.binary_cross_entropy(torch.sigmoid(a), torch.rand(3, 3), torch.rand(3){args})",
    "result = nn.KLDivLoss({args0})(F.log_softmax(a, 1), F.softmax(b, 1))",
])
def test_reduction_gives_the_legacy_loss(template, size_average, reduce):
    pairs = [(k, v) for k, v in (("size_average", size_average), ("reduce", reduce)) if v is not None]
    args = ", ".join(f"{k}={v}" for k, v in pairs)
    source = template.format(args=", " + args, args0=args)
    outcome = migrate(PRELUDE + source)
    assert "size_average" not in outcome.text and "reduce=" not in outcome.text
    torch.manual_seed(0)
    legacy = run(source)
    torch.manual_seed(0)
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message=".*size_average")  # the migrated call no longer warns
        exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(legacy, namespace["result"])


def test_positional_legacy_arguments_become_keywords():
    source = ("logp = F.log_softmax(torch.randn(5, 4), 1)\nt = torch.tensor([0, 1, 2, -1, 0])\n"
              "result = (nn.NLLLoss(None, False, -1)(logp, t), F.nll_loss(logp, t, None, True, -1, False),"
              " F.mse_loss(a, b, False), nn.CrossEntropyLoss(torch.ones(4), False, reduction='none')(logp, t.abs()))")
    outcome = migrate(PRELUDE + source)
    assert "nn.NLLLoss(None, ignore_index=-1, reduction='sum')" in outcome.text
    assert "F.nll_loss(logp, t, None, ignore_index=-1, reduction='none')" in outcome.text
    assert "F.mse_loss(a, b, reduction='sum')" in outcome.text
    assert "nn.CrossEntropyLoss(torch.ones(4), reduction='sum')" in outcome.text  # the pair overrides
    namespace = {}
    exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(run(source), namespace["result"])


def test_computed_size_average_is_unsafe_and_computed_reduce_only_reported():
    outcome = migrate("import torch.nn as nn\nc = nn.L1Loss(size_average=avg)\nd = nn.L1Loss(reduce=r)\n")
    assert [(f.code, f.fixable) for f in outcome.findings] == [("TM402", True), ("TM402", False)]
    assert not any(f.applied for f in outcome.findings)


def test_every_loss_in_the_table_accepts_its_parameters_on_this_torch():
    import inspect
    for qualified, params in LOSS_PARAMETERS.items():
        signature = list(inspect.signature(resolve(qualified)).parameters)
        if qualified.startswith("torch.nn.") and qualified[9:10].isupper():
            signature = list(inspect.signature(resolve(qualified).__init__).parameters)[1:]
        assert signature[:len(params)] == list(params), qualified


# -- TM403 ---------------------------------------------------------------------------------------
SHAPES = {
    "add": ("(3,)", "(3,)"), "sub": ("(3,)", "(3,)"), "addcmul": ("(3,)", "(3,)", "(3,)"),
    "addcdiv": ("(3,)", "(3,)", "(3,)"), "addmm": ("(2, 2)", "(2, 3)", "(3, 2)"), "addmv": ("(2,)", "(2, 3)", "(3,)"),
    "addr": ("(2, 3)", "(2,)", "(3,)"), "addbmm": ("(2, 2)", "(4, 2, 3)", "(4, 3, 2)"),
    "baddbmm": ("(4, 2, 2)", "(4, 2, 3)", "(4, 3, 2)"),
}


def _old_calls():
    """Every legacy arity of the two tables, with the scalars first: ``t0.addmm(0.5, 0.25, t1, t2)``."""
    calls = []
    for name, table in METHOD_SIGNATURES.items():
        tensors = [f"t{i}" for i in range(1, len(SHAPES[name.rstrip('_')]))]
        for count in table:
            calls.append(f"t0.{name}({', '.join(['0.5', '0.25'][:count - len(tensors)] + tensors)})")
    for name, table in FUNCTION_SIGNATURES.items():
        tensors = [f"t{i}" for i in range(1, len(SHAPES[name]))]
        for count in table:
            if name in ("add", "sub", "addcmul", "addcdiv"):
                args = ["t0", "0.5", *tensors]
            else:
                args = ["0.5", "t0", *(["0.25"] if count == 5 else []), *tensors]
            calls.append(f"torch.{name}({', '.join(args)})")
    return calls


OLD_CALLS = _old_calls()


@pytest.mark.parametrize("call", OLD_CALLS)
def test_old_positional_forms_compute_the_same(call):
    name = call.split("(")[0].split(".")[-1].rstrip("_")
    setup = "torch.manual_seed(0)\n" + "".join(
        f"t{i} = torch.randn{shape}\n" for i, shape in enumerate(SHAPES[name]))
    source = setup + f"result = {call.replace('t0.', 't0.clone().')}\n"
    outcome = migrate(PRELUDE + source, rules=[deprecated.OldPositionalSignature])
    assert [f.code for f in outcome.findings] == ["TM403"], call
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated overload is hit any more
        exec(compile(outcome.text, "<migrated>", "exec"), namespace)
    same(run(source), namespace["result"])


def test_add_without_underscore_needs_a_visible_tensor():
    outcome = migrate("meter.add(loss.item(), n)\ns.sub(a, b)\navg = p.data.mul(0.9).add(0.1, q.data)\n")
    assert outcome.text == "meter.add(loss.item(), n)\ns.sub(a, b)\navg = p.data.mul(0.9).add(q.data, alpha=0.1)\n"


# -- TM404, TM406 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,matches", [((2, 5), True), ((2, 3, 4, 5), True), ((2, 3, 4), False)])
def test_softmax_unsafe_dim_matches_the_legacy_choice_for_2_and_4_dim_inputs(shape, matches):
    source = f"x = torch.randn{shape}\nresult = F.log_softmax(x)"
    assert migrate(PRELUDE + source).text == PRELUDE + source  # reported only
    fixed = migrate(PRELUDE + source, unsafe=True).text
    assert fixed.endswith("F.log_softmax(x, dim=1)")
    namespace = {}
    exec(compile(fixed, "<migrated>", "exec"), namespace)
    legacy = run(source)
    assert torch.equal(legacy, namespace["result"]) is matches


def test_upsample_rename_is_exact_today_and_the_unsafe_fix_restores_0_3_corners():
    source = "result = F.upsample(x, scale_factor=2, mode='bilinear')"
    safe = migrate(PRELUDE + source)
    assert [(f.code, f.applied) for f in safe.findings] == [("TM401", True), ("TM406", False)]
    unsafe = migrate(PRELUDE + source, unsafe=True)
    assert unsafe.text.endswith("F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)")
    namespace = {}
    exec(compile(unsafe.text, "<migrated>", "exec"), namespace)
    assert torch.equal(namespace["result"], run("result = F.upsample_bilinear(x, scale_factor=2)"))
    assert not torch.equal(namespace["result"], run(source))  # today's default differs from 0.3


@pytest.mark.parametrize("qualified", sorted(REPORTED))
def test_reported_functions_are_flagged_not_rewritten(qualified):
    module, _, name = qualified.rpartition(".")
    source = f"import {module}\n\nr = {qualified}(x)\n"
    outcome = migrate(source)
    assert outcome.text == source
    assert [f.code for f in outcome.findings] == ["TM405"]


# -- with the other families ---------------------------------------------------------------------
def test_legacy_script_through_every_rule():
    source = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.autograd import Variable

    criterion = nn.NLLLoss(size_average=False)

    def train(model, x, y, lr):
        out = F.log_softmax(model(Variable(x)), dim=1)
        loss = criterion(out, Variable(y))
        loss.backward()
        torch.nn.utils.clip_grad_norm(model.parameters(), 0.5)
        for p in model.parameters():
            p.data.add_(-lr, p.grad.data)
        return loss.data[0]
    """)
    outcome = run_rules(source, codemods.all_rules())
    text = outcome.text
    compile(text, "<migrated>", "exec")
    assert run_rules(text, codemods.all_rules()).text == text
    for expected in ("nn.NLLLoss(reduction='sum')", "clip_grad_norm_(model.parameters(), 0.5)",
                     "p.add_(p.grad, alpha=-lr)", "with torch.no_grad():", "return loss.item()"):
        assert expected in text
    assert ".data" not in text
    namespace = {}
    exec(compile(text, "<migrated>", "exec"), namespace)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    value = namespace["train"](model, torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), 0.1)
    assert isinstance(value, float)
