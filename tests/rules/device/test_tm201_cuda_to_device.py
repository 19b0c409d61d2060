"""TM201: `.cuda()` becomes `.to(device)` with one `torch.device` from the script's flag (whole scripts)."""

import pytest
import torch

from device_support import applied, diagnostics, execute, migrate


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


def test_a_comprehension_variable_does_not_hide_the_module_device():
    """Python 3 comprehensions bind their own names: ``[device for device in ds]`` leaves ``device`` alone."""
    source = '''\
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    def f(x, ds):
        names = [device for device in ds]
        return x.cuda(), names
    '''
    text = migrate(source).text
    assert "return x.to(device), names" in text
    moved, names = execute(text)["f"](torch.ones(2), ["a"])
    assert moved.device.type == "cpu" and names == ["a"]


def test_a_class_attribute_is_not_a_module_device():
    """``Config.device`` is no name of the module: ``.cuda()`` there gets a device of its own, not a NameError."""
    source = '''\
    import torch
    class Config:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.zeros(2).cuda()
    '''
    text = migrate(source).text
    assert 'torch_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in text
    assert execute(text)["x"].device.type == "cpu"
