"""TM102: `volatile=True` becomes a `torch.no_grad()` region; helpers' volatile flags."""
import textwrap

import pytest
import torch

import codemods

from variable_support import HEADER, RULES, codes, execute, idempotent, legacy, migrate


def test_selecting_tm101_alone_leaves_volatile_calls_to_tm102():
    source = HEADER + "for x in loader:\n    y = model(Variable(x, volatile=True))\n    z = Variable(x)\n"
    outcome = migrate(source, [RULES[0]])
    assert "Variable(x, volatile=True)" in outcome.text and "z = x\n" in outcome.text
    assert "no_grad" not in outcome.text


# -- TM102: volatile --------------------------------------------------------------------------------
def test_volatile_loop_is_wrapped_once_for_several_sites():
    source = legacy("""
    def validate(val_loader, model):
        model.eval()
        for i, (input, target) in enumerate(val_loader):
            input_var = torch.autograd.Variable(input, volatile=True)
            target_var = torch.autograd.Variable(target, volatile=True)
            output = model(input_var)
            for k in range(2):
                extra = model(Variable(input, volatile=True))
            if i > 3:
                return output
    """)
    outcome = migrate(source)
    assert outcome.text.count("torch.no_grad()") == 1
    assert "    model.eval()\n    with torch.no_grad():\n        for i, (input, target) in" in outcome.text
    assert "Variable" not in outcome.text
    assert codes(outcome, applied=True).count("TM102") == 4
    idempotent(outcome)


def test_volatile_outside_a_loop_wraps_the_function_body_after_the_docstring():
    source = legacy("""
    def stylize(args):
        \"\"\"Apply the style.\"\"\"
        content = load_image(args.content)
        content = Variable(content, volatile=True)
        output = style_model(content)
        save(output.data[0])
    """)
    text = migrate(source).text
    assert "    \"\"\"Apply the style.\"\"\"\n    with torch.no_grad():\n        content = load_image" in text
    assert "content = content.detach()" in text


@pytest.mark.parametrize("context", [
    "with torch.no_grad():\n    {}\n",
    "with torch.set_grad_enabled(False):\n    {}\n",
    "@torch.no_grad()\ndef f(x):\n    {}\n",
    "def f(x):\n    with torch.autograd.no_grad():\n        {}\n",
])
def test_already_under_no_grad_is_not_wrapped_again(context):
    source = HEADER + context.format("y = model(Variable(x, volatile=True))")
    outcome = migrate(source)
    assert outcome.text.count("no_grad") + outcome.text.count("set_grad_enabled") == 1
    assert "Variable" not in outcome.text


def test_nested_regions_give_one_wrap():
    source = legacy("""
    def outer():
        for a in A:
            y = Variable(a, volatile=True)
            for b in B:
                z = Variable(b, volatile=True)
                print(model(y, z))
    """)
    outcome = migrate(source)
    assert outcome.text.count("torch.no_grad()") == 1
    assert "    with torch.no_grad():\n        for a in A:" in outcome.text


def test_volatile_flag_of_a_helper_wraps_the_callers_that_pass_true():
    """The pytorch/examples word language model: get_batch(..., evaluation=True) inside evaluate()."""
    source = legacy("""
    def get_batch(source, i, evaluation=False):
        data = Variable(source[i:i + 2], volatile=evaluation)
        target = Variable(source[i + 1:i + 3].view(-1))
        return data, target

    def evaluate(data_source):
        total = 0
        for i in range(0, 8, 2):
            data, targets = get_batch(data_source, i, evaluation=True)
            total += model(data).sum()
        return total

    def train():
        for i in range(0, 8, 2):
            data, targets = get_batch(train_data, i)
            model(data).sum().backward()

    def debug(flag):
        return get_batch(train_data, 0, evaluation=flag)
    """)
    outcome = migrate(source)
    text = outcome.text
    assert "    total = 0\n    with torch.no_grad():\n        for i in range(0, 8, 2):\n" in text
    assert text.count("torch.no_grad()") == 1
    assert "data = source[i:i + 2].detach()" in text
    flagged = [f for f in outcome.findings if not f.fixable]
    assert len(flagged) == 1 and "`flag` selects volatile" in flagged[0].message


def test_to_var_helper_and_method_callers():
    source = legacy("""
    def to_var(x, volatile=False):
        if torch.cuda.is_available():
            x = x.cuda()
        return Variable(x, volatile=volatile)

    class Solver:
        def sample(self, z):
            return self.G(self.prep(z, volatile=True))

        def prep(self, z, volatile=False):
            return Variable(z, volatile=volatile)

    fixed_z = to_var(torch.randn(4, 8), volatile=True)
    for images, _ in data_loader:
        loss = criterion(D(to_var(images)), ones)
        loss.backward()
    """)
    text = migrate(source).text
    assert "    def sample(self, z):\n        with torch.no_grad():\n            return self.G(" in text
    assert "with torch.no_grad():\n    fixed_z = to_var(torch.randn(4, 8))\n" in text  # the flag went
    assert "def to_var(x):" in text and "def prep(self, z, volatile=False):" in text  # a method: callers unknown
    assert text.count("torch.no_grad()") == 2 and "Variable" not in text


def test_backward_in_the_region_is_reported_with_an_unsafe_fix():
    """fast-neural-style: a volatile feature extraction inside the training loop."""
    source = legacy("""
    def train_step(x):
        model(x).sum().backward()

    for x in train_loader:
        xc = Variable(x.clone(), volatile=True)
        features_xc = vgg(xc)
        f_xc_c = Variable(features_xc[1].data, requires_grad=False)
        loss = mse(net(Variable(x))[1], f_xc_c)
        loss.backward()

    for epoch in range(3):
        train_step(next(iter(loader)))
        sample = model(Variable(z, volatile=True))
    """)
    safe = migrate(source)
    assert "Variable(x.clone(), volatile=True)" in safe.text and "Variable(z, volatile=True)" in safe.text
    assert "no_grad" not in safe.text
    reports = [f for f in safe.findings if f.code == "TM102"]
    assert len(reports) == 2 and all(f.unsafe and not f.applied for f in reports)
    assert "calls `train_step()`, which calls `backward()`" in reports[1].message
    unsafe = migrate(source, unsafe=True)
    assert "xc = x.clone()" in unsafe.text and "sample = model(z.detach())" in unsafe.text
    assert "no_grad" not in unsafe.text and "Variable" not in unsafe.text


@pytest.mark.parametrize("source,reason", [
    ("def batches():\n    for x in loader:\n        yield model(Variable(x, volatile=True))\n", "yields"),
    ("f = lambda x: Variable(x, volatile=True)\n", "lambda"),
    ("y = Variable(x, volatile=not training)\n", "volatile=not training"),
])
def test_volatile_without_a_wrappable_region_is_reported(source, reason):
    outcome = migrate(HEADER + source)
    assert outcome.text == HEADER + source
    assert any(reason in f.message for f in outcome.findings)


def test_helpers_from_other_files():
    """`to_var` lives in utils.py: its flag is dropped there, and `volatile=True` at the call sites marks inference."""
    utils = HEADER + "def to_var(x, volatile=False):\n    if torch.cuda.is_available():\n        x = x.cuda()\n" \
                     "    return Variable(x, volatile=volatile)\n"
    outcome = migrate(utils)
    assert outcome.text.endswith("    return x.detach()\n") and "Variable" not in outcome.text
    assert [f.message for f in outcome.findings if not f.fixable] == [
        "`volatile=volatile`: callers that pass a true value (none in this file) must run their inference under "
        "`torch.no_grad()`"]
    main = """
    import torch
    from utils import to_var

    def test(model, loader):
        for images, labels in loader:
            out = model(to_var(images, volatile=True))
        return out

    def train(model, loader):
        for images, labels in loader:
            model(to_var(images, volatile=False)).sum().backward()
            with torch.no_grad():
                model(to_var(images, volatile=True))
    """
    text = migrate(main).text
    assert text.count("torch.no_grad()") == 2
    assert "def test(model, loader):\n    with torch.no_grad():\n        for images, labels in loader:" in text


def test_module_level_inference_code_is_wrapped_from_the_site_to_the_last_use():
    """word_language_model/generate.py: the volatile input is created before the generation loop."""
    source = legacy("""
    model.eval()
    ntokens = len(corpus.dictionary)
    hidden = model.init_hidden(1)
    input = Variable(torch.rand(1, 1).mul(ntokens).long(), volatile=True)
    if args.cuda:
        input.data = input.data.cuda()

    with open(args.outf, 'w') as outf:
        for i in range(args.words):
            output, hidden = model(input, hidden)

            word_idx = sample(output)
    print('done')
    """)
    outcome = migrate(source)
    expected = """
    hidden = model.init_hidden(1)
    with torch.no_grad():
        input = torch.rand(1, 1).mul(ntokens).long()
        if args.cuda:
            input.data = input.data.cuda()

        with open(args.outf, 'w') as outf:
            for i in range(args.words):
                output, hidden = model(input, hidden)

                word_idx = sample(output)
    print('done')
    """
    assert textwrap.dedent(expected) in outcome.text
    assert not [line for line in outcome.text.splitlines() if line != line.rstrip()], "no trailing whitespace"
    region = [f for f in outcome.findings if "module-level" in f.message]
    assert len(region) == 1 and "3 statements" in region[0].message
    idempotent(outcome)


def test_module_level_wrap_keeps_out_the_training_above_it_when_another_fix_adds_the_device():
    """TM201 adds the file's `device` above the code in the same pass; the wrap must still start at the volatile
    site. Found statements by position once, it took the device, the model and the training loop with it: its
    `loss.backward()` then failed under `torch.no_grad()`."""
    source = legacy("""
    model = torch.nn.Linear(2, 2).cuda()
    for x in loader:
        loss = model(Variable(x.cuda())).sum()
        loss.backward()
    out = model(Variable(torch.zeros(1, 2).cuda(), volatile=True))
    print(out.requires_grad)
    """)
    outcome = migrate(source, codemods.all_rules())
    expected = """
    model = torch.nn.Linear(2, 2).to(device)
    for x in loader:
        loss = model(x.to(device)).sum()
        loss.backward()
    with torch.no_grad():
        out = model(torch.zeros(1, 2).to(device))
        print(out.requires_grad)
    """
    assert textwrap.dedent(expected) in outcome.text
    assert outcome.text.index("device = torch.device(") < outcome.text.index("with torch.no_grad():")
    runs = outcome.text.replace('"cuda" if torch.cuda.is_available() else "cpu"', '"cpu"')
    namespace = execute(runs, loader=[torch.ones(3, 2)])
    assert namespace["out"].requires_grad is False
    idempotent(outcome, codemods.all_rules())


def test_module_level_loop_and_single_statement():
    source = HEADER + "for x in test_loader:\n    out = model(Variable(x, volatile=True))\n" \
                      "print(model(Variable(y, volatile=True)).sum())\n"
    text = migrate(source).text
    assert text == ("import torch\nwith torch.no_grad():\n    for x in test_loader:\n        out = model(x)\n"
                    "with torch.no_grad():\n    print(model(y.detach()).sum())\n")


def test_volatile_adds_torch_import_when_missing():
    source = "from torch.autograd import Variable\nfor x in loader:\n    y = net(Variable(x, volatile=True))\n"
    text = migrate(source).text
    assert text.startswith("import torch\n") and "with torch.no_grad():" in text
    execute(text.replace("loader", "[torch.ones(2)]").replace("net(", "torch.nn.Linear(2, 1)("))


def test_volatile_eval_loop_gives_the_same_values_without_a_graph():
    source = legacy("""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    test_loader = [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1])) for _ in range(3)]
    outputs = []
    def test():
        total = 0
        for data, target in test_loader:
            data, target = Variable(data, volatile=True), Variable(target)
            output = model(data)
            total += torch.nn.functional.cross_entropy(output, target).item()
            outputs.append(output)
        return total
    total = test()
    """)
    outcome = migrate(source)
    old, new = execute(source), execute(outcome.text)
    assert new["total"] == pytest.approx(old["total"])
    for before, after in zip(old["outputs"], new["outputs"]):
        torch.testing.assert_close(after, before)
        assert before.requires_grad, "volatile has no effect on current torch: the legacy run builds graphs"
        assert not after.requires_grad, "the migrated inference builds none"


TO_VAR = legacy("""\
    def to_var(x, volatile=False):
        return Variable(x, volatile=volatile)


    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [torch.randn(4, 3) for _ in range(3)]


    def train():
        for images in data:
            loss = model(to_var(images)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


    def sample():
        outs = []
        for images in data:
            outs.append(model(to_var(images, volatile=True)))
        return outs


    train()
    samples = sample()
    """)


def test_to_var_volatile_parameter_and_arguments_go_and_callers_get_no_grad():
    outcome = migrate(TO_VAR)
    idempotent(outcome)
    text = outcome.text
    assert "volatile" not in text and "Variable" not in text
    assert "def to_var(x):" in text and "to_var(images)" in text
    assert "with torch.no_grad():\n        for images in data:\n            outs.append" in text
    old, new = execute(TO_VAR), execute(text)
    for a, b in zip(old["samples"], new["samples"]):
        assert torch.equal(a, b)
        assert not b.requires_grad  # inference builds no graph again, as volatile did in 0.3
    for a, b in zip(old["model"].parameters(), new["model"].parameters()):
        assert torch.equal(a, b)


def test_volatile_parameter_used_otherwise_or_called_from_elsewhere_stays():
    used = legacy("""\
        def to_var(x, volatile=False):
            print(volatile)
            return Variable(x, volatile=volatile)


        y = to_var(torch.ones(2), volatile=True)
        """)
    assert "def to_var(x, volatile=False)" in migrate(used).text
    escaping = legacy("""\
        def to_var(x, volatile=False):
            return Variable(x, volatile=volatile)


        helpers = [to_var]
        y = to_var(torch.ones(2), volatile=True)
        """)
    assert "def to_var(x, volatile=False)" in migrate(escaping).text


def test_a_site_inside_another_sites_wrap_is_fixed_in_the_same_pass():
    """A class body has no statements to wrap, but a module-level wrap around it covers it: one pass does all
    (the second pass used to find the inner `Variable(..., volatile=True)` still there)."""
    source = legacy("""\
        a, b = torch.ones(2), torch.zeros(2)
        x = Variable(a, volatile=True)
        class Holder:
            y = Variable(b, volatile=True)
        print(x)
        """)
    outcome = migrate(source)
    idempotent(outcome)
    assert "Variable" not in outcome.text and "with torch.no_grad():" in outcome.text
    assert torch.equal(execute(outcome.text)["Holder"].y, torch.zeros(2))
