"""The device family with the other families: `async=`, all rules together, a GPU placement check, byte identity."""
import textwrap

import pytest
import torch

import codemods
from codemods.engine import run_rules
from device_support import applied, execute, migrate


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


@pytest.mark.parametrize("example", [e for r in codemods.family_rules("device") for e in r.changes if e.after],
                         ids=lambda e: e.before.splitlines()[-1][:40])
def test_defined_device_is_the_statement_reported(example):
    """The plan builds the device's definition as a tree (not parsed from its text): it prints as reported."""
    outcome = migrate(example.before, unsafe=example.unsafe)
    reported = [f.message.split("`")[1] for f in outcome.findings if f.message.startswith("one device for the file")]
    assert all(line in lines(outcome.text) for line in reported)
