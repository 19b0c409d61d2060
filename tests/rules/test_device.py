"""TM2xx: one ``torch.device`` instead of hard-coded CUDA; legacy constructors.

Whole scripts (flag at module level, in ``main()``, none), combinations with the
other families through ``codemods.all_rules()``, ``.cuda(async=True)`` through the
token pre-pass, and migrated code executed on this CPU-only machine with real
torch and compared with what the legacy constructors give on the CPU.
"""
import ast
import textwrap
import warnings

import pytest
import torch

import codemods
from codemods import asynckw, device
from codemods.engine import run_rules

FAMILY = [asynckw.AsyncKeyword, *device.RULES]


def migrate(source, rules=None, unsafe=False):
    """Migrate with the device family (or ``rules``): the result parses and a second run has nothing to do
    (with other families, which are not tested here, nothing for this family)."""
    outcome = run_rules(textwrap.dedent(source), rules or FAMILY, unsafe_fixes=unsafe)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, rules or FAMILY, unsafe_fixes=unsafe)
    assert not any(f.applied for f in again.findings if rules is None or f.code.startswith("TM2")), "not idempotent"
    assert rules is not None or again.text == outcome.text, "not idempotent"
    return outcome


def applied(outcome, code=None):
    return [f for f in outcome.findings if f.applied and (code is None or f.code == code)]


def diagnostics(outcome, code):
    return [f for f in outcome.findings if f.code == code and not f.applied]


def execute(source, **names):
    namespace = {"__name__": "migrated", **names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<migrated>", "exec"), namespace)
    return namespace


# -- whole scripts -----------------------------------------------------------------------
MODULE_FLAG = '''\
import argparse
import torch
import torch.nn as nn

args = argparse.Namespace(no_cuda=False, seed=1)
args.cuda = not args.no_cuda and torch.cuda.is_available()
torch.manual_seed(args.seed)
if args.cuda:
    torch.cuda.manual_seed(args.seed)

model = nn.Linear(4, 2)
if args.cuda:
    model.cuda()


def train(batches):
    total = 0.0
    for data, target in batches:
        if args.cuda:
            data, target = data.cuda(), target.cuda()
        loss = nn.functional.cross_entropy(model(data), target)
        total += loss.item()
    return total
'''


def test_module_level_flag_gives_one_device_right_after_it():
    outcome = migrate(MODULE_FLAG)
    assert outcome.text == MODULE_FLAG.replace(
        "args.cuda = not args.no_cuda and torch.cuda.is_available()\n",
        'args.cuda = not args.no_cuda and torch.cuda.is_available()\n'
        'device = torch.device("cuda" if args.cuda else "cpu")\n').replace(
        "if args.cuda:\n    model.cuda()\n", "model.to(device)\n").replace(
        "        if args.cuda:\n            data, target = data.cuda(), target.cuda()\n",
        "        data, target = data.to(device), target.to(device)\n")
    # the seed guard is not a transfer: it stays
    assert "if args.cuda:\n    torch.cuda.manual_seed(args.seed)" in outcome.text
    assert outcome.text.count("torch.device(") == 1


def test_module_level_flag_script_runs_on_cpu_with_the_legacy_values():
    batches = [(torch.randn(3, 4), torch.tensor([0, 1, 1])) for _ in range(2)]
    legacy = execute(MODULE_FLAG)  # runs on this machine: every guard is false
    migrated = execute(migrate(MODULE_FLAG).text)
    assert migrated["device"] == torch.device("cpu")
    assert migrated["train"](batches) == legacy["train"](batches)


MAIN_FLAG = '''\
import argparse
import torch
import torch.nn as nn


def main(argv):
    args = argparse.Namespace(no_cuda="--no-cuda" in argv)
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    if args.cuda:
        model = torch.nn.DataParallel(model).cuda()
    criterion = nn.MSELoss()
    if args.cuda:
        criterion = criterion.cuda()
    return train(model, criterion, args), validate(model, criterion, args)


def train(model, criterion, args):
    x, y = torch.ones(2, 3), torch.zeros(2, 1)
    if args.cuda:
        x = x.cuda(async=True)
        y = y.cuda(async=True)
    return criterion(model(x), y).item()


def validate(model, criterion, args):
    y = torch.zeros(2, 1).cuda(async=True)
    return criterion(model(torch.ones(2, 3).cuda()), y).item()
'''


def test_flag_in_main_reaches_train_through_args():
    outcome = migrate(MAIN_FLAG)
    text = outcome.text
    assert ('    args.cuda = not args.no_cuda and torch.cuda.is_available()\n'
            '    args.device = torch.device("cuda" if args.cuda else "cpu")\n') in text
    # not a pure transfer (DataParallel is built only with the flag): the guard stays
    assert "    if args.cuda:\n        model = torch.nn.DataParallel(model).to(args.device)\n" in text
    assert "    criterion = criterion.to(args.device)\n" in text
    assert ("    x = x.to(args.device, non_blocking=True)\n"
            "    y = y.to(args.device, non_blocking=True)\n") in text
    assert "y = torch.zeros(2, 1).to(args.device, non_blocking=True)" in text
    assert ".cuda(" not in text and "async" not in text
    assert {f.code for f in applied(outcome)} == {"TM201", "TM203"}


def test_flag_in_main_script_runs_on_cpu():
    legacy = execute(MAIN_FLAG.replace("async=True", "non_blocking=True"))
    with pytest.raises((AssertionError, RuntimeError)):  # validate() calls .cuda() without a guard
        legacy["main"]([])
    migrated = execute(migrate(MAIN_FLAG).text)
    train_loss, val_loss = migrated["main"]([])
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    expected = torch.nn.MSELoss()(model(torch.ones(2, 3)), torch.zeros(2, 1)).item()
    assert train_loss == val_loss == expected


def test_global_args_in_main_reaches_functions_reading_the_global():
    source = '''\
    import torch

    def main():
        global args
        args = parse()
        args.cuda = torch.cuda.is_available() and not args.no_cuda
        return train()

    def train():
        x = torch.ones(2)
        if args.cuda:
            x = x.cuda()
        return x
    '''
    text = migrate(source).text
    assert '    args.device = torch.device("cuda" if args.cuda else "cpu")\n' in text
    assert "    x = x.to(args.device)\n" in text and "if args.cuda:" not in text


FAST_NEURAL_STYLE = '''\
import argparse
import torch


def train(args):
    if args.cuda:
        torch.cuda.manual_seed(args.seed)
    net = torch.nn.Linear(2, 2)
    if args.cuda:
        net.cuda()
    return net


def stylize(args):
    image = torch.ones(1, 2)
    if args.cuda:
        image = image.cuda()
    return image


def main(argv):
    args = argparse.Namespace(cuda="--cuda" in argv, seed=1)
    if args.cuda and not torch.cuda.is_available():
        raise SystemExit("ERROR: cuda is not available, try running on CPU")
    return train(args)(stylize(args))
'''


def test_flag_object_passed_to_functions_gets_the_device_where_it_is_built():
    text = migrate(FAST_NEURAL_STYLE).text
    assert ('    args = argparse.Namespace(cuda="--cuda" in argv, seed=1)\n'
            '    args.device = torch.device("cuda" if args.cuda else "cpu")\n') in text
    assert "    net = torch.nn.Linear(2, 2)\n    net.to(args.device)\n" in text
    assert "    image = image.to(args.device)\n" in text
    assert "if args.cuda:\n        torch.cuda.manual_seed(args.seed)" in text
    assert execute(text)["main"]([]).shape == (1, 2)


def test_helper_without_the_flag_object_is_a_diagnostic():
    source = '''\
    import torch

    def main():
        use_cuda = torch.cuda.is_available()
        x = torch.ones(2)
        if use_cuda:
            x = x.cuda()
        return helper(x)

    def helper(t):
        return t.cuda()
    '''
    outcome = migrate(source)
    assert '    device = torch.device("cuda" if use_cuda else "cpu")\n' in outcome.text
    assert "        x = x.to(device)\n" not in outcome.text  # guard dropped, statement kept at its level
    assert "    x = x.to(device)\n" in outcome.text
    assert "return t.cuda()" in outcome.text
    (finding,) = diagnostics(outcome, "TM201")
    assert finding.line == 11 and "no `torch.device` is in scope" in finding.message


def test_no_flag_defines_the_device_after_the_imports():
    source = '''\
    """Style transfer."""
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    def train():
        vgg = nn.Linear(2, 2).cuda()
        x = Variable(torch.rand(4, 2)).cuda()
        return vgg(x)
    '''
    outcome = migrate(source)
    assert outcome.text.startswith(
        '"""Style transfer."""\nimport torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n\n'
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n')
    assert execute(outcome.text)["train"]().shape == (4, 2)


def test_flag_under_main_guard_and_torch_alias():
    source = '''\
    import torch as th

    def run(x):
        if use_cuda:
            x = x.cuda()
        return x * 2

    if __name__ == "__main__":
        use_cuda = th.cuda.is_available()
        print(run(th.ones(2)))
    '''
    text = migrate(source).text
    assert '    use_cuda = th.cuda.is_available()\n    device = th.device("cuda" if use_cuda else "cpu")\n' in text
    assert "    x = x.to(device)\n    return x * 2" in text


def test_conditionally_set_flag_is_not_used_and_guards_stay():
    source = '''\
    import torch
    cuda = False
    if torch.cuda.is_available():
        cuda = True
    if cuda:
        model.cuda()
    '''
    text = migrate(source).text
    assert 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in text
    assert "if cuda:\n    model.to(device)\n" in text


def test_reuses_an_existing_device_and_drops_matching_guards_only():
    source = '''\
    import torch
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    if use_cuda:
        model.cuda()
    if torch.cuda.is_available():
        x = x.cuda()
    '''
    text = migrate(source).text
    assert text.count("torch.device(") == 1
    assert "\nmodel.to(device)\nif torch.cuda.is_available():\n    x = x.to(device)\n" in text


def test_device_parameter_is_reused():
    source = '''\
    import torch
    def step(model, x, device):
        return model(x.cuda())
    '''
    text = migrate(source).text
    assert "return model(x.to(device))" in text and "torch.device(" not in text


def test_device_parameter_does_not_stop_a_file_device_for_other_code():
    source = "import torch\ngpu_id = 0\nm = net.cuda(gpu_id)\ndef f(x, device):\n    return x.cuda(device)\n"
    text = migrate(source).text
    assert 'torch_device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")' in text
    assert "m = net.to(torch_device)" in text and "return x.to(device)" in text


def test_is_available_guard_in_a_helper_goes_with_the_default_device():
    source = '''\
    import torch
    from torch.autograd import Variable

    def to_var(x):
        if torch.cuda.is_available():
            x = x.cuda()
        return Variable(x)
    '''
    outcome = migrate(source)
    assert "def to_var(x):\n    x = x.to(device)\n    return Variable(x)\n" in outcome.text
    assert torch.equal(execute(outcome.text)["to_var"](torch.ones(2)), torch.ones(2))


def test_name_clash_picks_another_name():
    source = '''\
    import torch
    for device in ["a", "b"]:
        print(device)
    x = torch.zeros(2).cuda()
    '''
    text = migrate(source).text
    assert 'torch_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in text
    assert "x = torch.zeros(2).to(torch_device)" in text
    assert 'for device in ["a", "b"]:' in text


def test_keyword_named_device_is_not_a_clash():
    text = migrate("import torch\ny = torch.zeros(2, device=x.device).cuda()\n").text
    assert "y = torch.zeros(2, device=x.device).to(device)" in text


# -- indices ---------------------------------------------------------------------------------
@pytest.mark.parametrize("source,string,diagnosed", [
    ("a = x.cuda(0)\nb = y.cuda()\n", "cuda:0", 0),
    ("a = x.cuda(device=1)\nb = y.cuda(1)\n", "cuda:1", 0),
    ("a = x.cuda(1)\nb = y.cuda()\n", "cuda", 1),  # keeping 1 would move y: diagnose x
    ("a = x.cuda(0)\nb = y.cuda(1)\n", "cuda", 1),
    ("a = x.cuda(torch.cuda.current_device())\n", "cuda", 0),
    ("torch.cuda.set_device(1)\na = x.cuda(0)\nb = y.cuda()\n", "cuda", 1),
    ("a = x.cuda(args.gpu)\nb = y.cuda()\n", "cuda", 1),
])
def test_gpu_index(source, string, diagnosed):
    outcome = migrate("import torch\n" + source)
    assert f'torch.device("{string}" if torch.cuda.is_available() else "cpu")' in outcome.text
    assert len(diagnostics(outcome, "TM201")) == diagnosed


def test_cuda_with_positional_async_keeps_non_blocking():
    text = migrate("import torch\ny = x.cuda(0, True)\n").text
    assert "y = x.to(device, non_blocking=True)" in text


# -- guards ----------------------------------------------------------------------------------
def test_guard_with_cpu_else_goes():
    source = "import torch\nuse_cuda = torch.cuda.is_available()\nif use_cuda:\n    model.cuda()\nelse:\n    model.cpu()\n"
    assert migrate(source).text.endswith('device = torch.device("cuda" if use_cuda else "cpu")\nmodel.to(device)\n')


@pytest.mark.parametrize("tail", [
    "if use_cuda:\n    model.cuda()\nelse:\n    other.cpu()\n",
    "if use_cuda:\n    model.cuda()\nelif x:\n    model.cpu()\n",
    "if use_cuda:\n    model.cuda()\n    print('gpu')\n",
    "if use_cuda:\n    out = model.cuda()\n",
    "if use_cuda:\n    net = nn.DataParallel(net).cuda()\n",
    "if use_cuda or force:\n    model.cuda()\n",
])
def test_guards_that_do_more_than_move_stay(tail):
    text = migrate("import torch\nuse_cuda = torch.cuda.is_available()\n" + tail).text
    assert "if use_cuda" in text and ".cuda(" not in text


def test_returning_guards_with_an_else_go():
    source = '''\
    import torch
    use_cuda = torch.cuda.is_available()

    def init_hidden(n):
        result = torch.zeros(1, n)
        if use_cuda:
            return result.cuda()
        else:
            return result

    def variable(ids):
        result = torch.tensor(ids)
        if use_cuda:
            return result.cuda()
        return result

    step = torch.zeros(2)
    step = step.cuda() if use_cuda else step
    other = (step.cuda() if use_cuda else step.cpu())
    '''
    text = migrate(source).text
    assert "    result = torch.zeros(1, n)\n    return result.to(device)\n" in text
    # without an else the code after the guard runs instead: the guard stays
    assert "    if use_cuda:\n        return result.to(device)\n    return result\n" in text
    assert "step = step.to(device)\nother = (step.to(device))\n" in text
    assert execute(text)["init_hidden"](3).shape == (1, 3)


def test_guard_header_comment_and_one_line_suite_survive():
    source = "import torch\nuse_cuda = torch.cuda.is_available()\n# move it\nif use_cuda:  # gpu\n    model.cuda()\nif use_cuda: x = x.cuda()\n"
    text = migrate(source).text
    assert text.endswith("# move it\n# gpu\nmodel.to(device)\nx = x.to(device)\n")


def test_is_cuda_guard_uses_the_tensors_device():
    source = '''\
    import torch
    def mask(lengths, n):
        r = torch.arange(n).unsqueeze(0)
        if lengths.is_cuda:
            r = r.cuda()
        return r < lengths.unsqueeze(1)
    '''
    outcome = migrate(source)
    assert "    r = r.to(lengths.device)\n" in outcome.text and "torch.device(" not in outcome.text
    assert execute(outcome.text)["mask"](torch.tensor([1, 3]), 3).tolist() == [[True, False, False], [True, True, True]]


def test_suppressed_use_adds_no_device():
    source = "import torch\nx = torch.ones(2).cuda()  # torch-migrate: ignore[TM201]\n"
    outcome = migrate(source)
    assert outcome.text == source


def test_file_defining_its_own_cuda_method_is_unsafe_only():
    source = "import torch\nclass Batch:\n    def cuda(self):\n        return self\nb = Batch().cuda()\n"
    assert migrate(source).text == source
    assert "b = Batch().to(device)" in migrate(source, unsafe=True).text


# -- torch.cuda types ------------------------------------------------------------------------
def test_type_selection_is_replaced_at_every_use():
    source = '''\
    import torch
    opt.cuda = not opt.no_cuda and torch.cuda.is_available()
    Tensor = torch.cuda.FloatTensor if opt.cuda else torch.FloatTensor
    LongTensor = torch.cuda.LongTensor if opt.cuda else torch.LongTensor

    def batch(x, n):
        noise = Tensor(n, 4).normal_(0, 1)
        labels = LongTensor([1, 0])
        return x.type(Tensor), noise, labels
    '''
    text = migrate(source).text
    assert "Tensor =" not in text
    assert "noise = torch.empty(n, 4, device=device).normal_(0, 1)" in text
    assert "labels = torch.tensor([1, 0], dtype=torch.long, device=device)" in text
    assert "return x.to(device, torch.float32), noise, labels" in text


def test_type_selection_used_otherwise_is_kept_with_a_diagnostic():
    source = '''\
    import torch
    use_cuda = torch.cuda.is_available()
    dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
    x = torch.zeros(2).type(dtype)
    build(dtype)
    '''
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source)
    assert "used other than" in diagnostics(outcome, "TM202")[0].message


def test_type_selection_script_runs_on_cpu_like_legacy():
    source = '''\
    import torch
    cuda = torch.cuda.is_available()
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    torch.manual_seed(3)
    noise = Tensor(2, 3).normal_(0, 1)
    ints = torch.arange(4).type(Tensor)
    '''
    legacy, migrated = execute(textwrap.dedent(source)), execute(migrate(source).text)
    for name in ("noise", "ints"):
        assert migrated[name].dtype == legacy[name].dtype
        assert torch.equal(migrated[name], legacy[name])


def test_cuda_constructors_and_type_run_on_cpu():
    source = '''\
    import torch
    from torch.cuda import LongTensor
    a = torch.cuda.FloatTensor(2, 3).fill_(1.5)
    b = LongTensor([[1, 2], [3, 4]])
    c = torch.arange(3).type(torch.cuda.ByteTensor)
    d = torch.arange(3).type('torch.cuda.DoubleTensor')
    '''
    with pytest.raises(TypeError):  # "type torch.cuda.FloatTensor not available"
        execute(textwrap.dedent(source))
    text = migrate(source).text
    assert "from torch.cuda import" not in text
    migrated = execute(text)
    expected = {"a": torch.FloatTensor(2, 3).fill_(1.5), "b": torch.LongTensor([[1, 2], [3, 4]]),
                "c": torch.arange(3).type(torch.ByteTensor), "d": torch.arange(3).type(torch.DoubleTensor)}
    for name, value in expected.items():
        assert migrated[name].dtype == value.dtype and torch.equal(migrated[name], value), name


# -- legacy constructors: same dtype and values as the legacy call on the CPU ------------------
@pytest.mark.parametrize("type_name", sorted(device.TENSOR_TYPES))
@pytest.mark.parametrize("args", ["[1, 0, 1]", "[[1, 2], [3, 0]]", "(2, 1)", "[]", "list(range(3))", "[1] * 3"])
def test_data_constructor_matches_legacy(type_name, args):
    call = f"torch.{type_name}({args})"
    outcome = migrate(f"import torch\nt = {call}\n")
    assert "torch.tensor(" in outcome.text and f"dtype=torch.{device.TENSOR_TYPES[type_name]}" in outcome.text
    legacy = eval(call)
    new = execute(outcome.text)["t"]
    assert new.dtype == legacy.dtype and torch.equal(new, legacy)


@pytest.mark.parametrize("type_name", sorted(device.TENSOR_TYPES) + ["Tensor"])
@pytest.mark.parametrize("args", ["2, 3", "4", "x.size()", "x.size(0), 2", "*x.shape", "len(x)", ""])
def test_size_constructor_matches_legacy(type_name, args):
    source = f"import torch\nx = torch.zeros(3, 2)\nt = torch.{type_name}({args}).zero_()\n"
    outcome = migrate(source)
    assert "torch.empty(" in outcome.text
    legacy = execute(source)["t"]
    new = execute(outcome.text)["t"]
    assert new.dtype == legacy.dtype and new.shape == legacy.shape and torch.equal(new, legacy)


def test_float_values_truncate_like_the_legacy_long_constructor():
    outcome = migrate("import torch\nt = torch.LongTensor([1.7, -2.7])\n")
    assert torch.equal(execute(outcome.text)["t"], torch.LongTensor([1.7, -2.7]))


def test_default_dtype_change_keeps_float32_explicit():
    source = "import torch\ntorch.set_default_dtype(torch.float64)\nt = torch.FloatTensor(2, 3).zero_()\nu = torch.Tensor(2)\n"
    try:
        outcome = migrate(source)
        assert "torch.empty(2, 3, dtype=torch.float32)" in outcome.text and "torch.empty(2)" in outcome.text
        migrated = execute(outcome.text)
        assert migrated["t"].dtype == torch.float32 and migrated["u"].dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_names_resolved_through_their_bindings():
    source = '''\
    import torch
    def f(lines, x):
        count = 0
        for line in lines:
            count += len(line)
        ids = []
        ids += [1, 2]
        rev = ids[::-1]
        return torch.LongTensor(count), torch.LongTensor(ids), torch.LongTensor(rev), torch.FloatTensor(args.batch_size)
    parser.add_argument('--batch-size', type=int, default=4)
    '''
    text = migrate(source).text
    assert ("return torch.empty(count, dtype=torch.long), torch.tensor(ids, dtype=torch.long), "
            "torch.tensor(rev, dtype=torch.long), torch.empty(args.batch_size)") in text


@pytest.mark.parametrize("arg", ["array", "np.ones(3)", "t", "batch[0]", "x.numpy()"])
def test_unknown_single_argument_is_a_diagnostic(arg):
    source = f"import torch\ndef f(array, t, batch, x):\n    return torch.FloatTensor({arg})\n"
    outcome = migrate(source, unsafe=True)
    assert outcome.text == source
    assert "may be a size or data" in diagnostics(outcome, "TM204")[0].message


def test_numpy_memory_sharing_is_why_arrays_are_not_rewritten():
    np = pytest.importorskip("numpy")
    array = np.zeros(3, dtype=np.float32)
    torch.FloatTensor(array)[0] = 5  # the legacy constructor shares the array's memory ...
    assert array[0] == 5
    torch.tensor(array, dtype=torch.float32)[1] = 5  # ... torch.tensor copies it
    assert array[1] == 0


def test_initialised_unknown_argument_is_an_unsafe_size():
    source = "import torch\ndef labels(n):\n    return torch.LongTensor(n).random_(0, 10)\n"
    assert migrate(source).text == source
    outcome = migrate(source, unsafe=True)
    assert "torch.empty(n, dtype=torch.long).random_(0, 10)" in outcome.text
    torch.manual_seed(5)
    legacy = torch.LongTensor(7).random_(0, 10)
    torch.manual_seed(5)
    assert torch.equal(execute(outcome.text)["labels"](7), legacy)


def test_constructor_with_keywords_or_references_is_left_alone():
    source = "import torch\na = torch.FloatTensor(2, device='cpu')\nb = isinstance(a, torch.FloatTensor)\n"
    outcome = migrate(source)
    assert outcome.text == source and not outcome.findings


# -- CUDA-only calls ----------------------------------------------------------------------------
def test_cuda_only_calls_are_guarded_and_run_on_cpu():
    source = "import torch\ntorch.cuda.set_device(0)\ntorch.cuda.synchronize()\nx = 1\n"
    with pytest.raises((AttributeError, AssertionError, RuntimeError)):
        execute(source)
    text = migrate(source).text
    assert text.count("if torch.cuda.is_available():\n") == 2
    assert execute(text)["x"] == 1


def test_set_default_tensor_type_to_a_cuda_type_is_guarded():
    source = "import torch\ntorch.set_default_tensor_type('torch.cuda.FloatTensor')\nx = torch.zeros(2)\n"
    with pytest.raises(TypeError):
        execute(source)
    text = migrate(source).text
    assert "if torch.cuda.is_available():\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n" in text
    assert execute(text)["x"].device.type == "cpu"


def test_storages_in_map_location_get_the_device_as_a_keyword():
    import io
    buffer = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, buffer)
    source = "import torch\nstate = torch.load(buffer, map_location=lambda storage, loc: storage.cuda(0))\n"
    with pytest.raises((AssertionError, RuntimeError, TypeError)):  # no CUDA to map the storages to
        buffer.seek(0)
        execute(source, buffer=buffer)
    text = migrate(source).text
    assert "map_location=lambda storage, loc: storage.to(device=device)" in text
    buffer.seek(0)
    assert torch.equal(execute(text, buffer=buffer)["state"]["w"], torch.arange(3.0))


# -- with the other families --------------------------------------------------------------------
IMAGENET_STYLE = '''\
import argparse
import torch
import torch.nn as nn
from torch.autograd import Variable


def main(argv):
    global args
    args = argparse.Namespace(no_cuda="--no-cuda" in argv)
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    criterion = nn.CrossEntropyLoss()
    if args.cuda:
        model.cuda()
        criterion = criterion.cuda()
    return [validate(model, criterion) for _ in range(2)]


def validate(model, criterion):
    input = torch.ones(4, 3)
    target = torch.LongTensor([0, 1, 1, 0])
    if args.cuda:
        input = input.cuda(async=True)
    target = target.cuda(async=True)
    input_var = Variable(input, volatile=True)
    target_var = Variable(target, volatile=True)
    loss = criterion(model(input_var), target_var)
    return loss.item()
'''


def lines(text):
    """The stripped lines of ``text``: other families may re-indent (``with torch.no_grad():``)."""
    return {line.strip() for line in text.splitlines()}


def test_async_script_through_all_rules_runs_on_cpu():
    outcome = migrate(IMAGENET_STYLE, rules=codemods.all_rules())
    text = outcome.text
    assert "async" not in text and ".cuda(" not in text
    assert {'args.device = torch.device("cuda" if args.cuda else "cpu")',
            "input = input.to(args.device, non_blocking=True)",
            "target = target.to(args.device, non_blocking=True)",
            "target = torch.tensor([0, 1, 1, 0], dtype=torch.long)"} <= lines(text)
    assert "if args.cuda:" not in text
    assert {"TM201", "TM203", "TM204"} <= {f.code for f in applied(outcome)}
    losses = execute(text)["main"]([])
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    expected = torch.nn.CrossEntropyLoss()(model(torch.ones(4, 3)), torch.tensor([0, 1, 1, 0])).item()
    assert losses == [expected, expected]


def test_all_rules_leave_the_device_rewrites_intact():
    source = '''\
    import torch
    from torch.autograd import Variable
    use_cuda = torch.cuda.is_available()
    model = torch.nn.Linear(2, 1)
    if use_cuda:
        model.cuda()
    x = Variable(torch.FloatTensor([[1, 2]]))
    if use_cuda:
        x = x.cuda()
    y = model(x)
    '''
    outcome = migrate(source, rules=codemods.all_rules())
    assert {'device = torch.device("cuda" if use_cuda else "cpu")', "model.to(device)", "x = x.to(device)"} <= lines(
        outcome.text)
    assert "torch.tensor([[1, 2]], dtype=torch.float32)" in outcome.text and "if use_cuda:" not in outcome.text
    assert execute(outcome.text)["y"].shape == (1, 1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: legacy and migrated placement compared")
def test_migrated_placement_matches_legacy_on_a_gpu():
    source = '''\
    import torch
    use_cuda = torch.cuda.is_available()
    torch.cuda.set_device(0)
    model = torch.nn.Linear(2, 2)
    if use_cuda:
        model.cuda()
    a = torch.ones(2).cuda(non_blocking=True)
    b = torch.cuda.FloatTensor(2, 3).fill_(1)
    c = torch.arange(3).type(torch.cuda.LongTensor)
    d = torch.cuda.ByteTensor([1, 0])
    y = model(a)
    '''
    legacy, migrated = execute(textwrap.dedent(source)), execute(migrate(source).text)
    for name in "abcdy":
        assert migrated[name].device == legacy[name].device and migrated[name].dtype == legacy[name].dtype, name
        assert torch.equal(migrated[name], legacy[name]), name
    assert next(migrated["model"].parameters()).device == next(legacy["model"].parameters()).device


def test_unchanged_file_is_byte_identical():
    source = "import torch\r\nx = torch.zeros(2).to('cpu')  # fine\r\n"
    assert run_rules(source, codemods.all_rules()).text == source
