"""TM302: 0.3 reductions and counters that were Python numbers stay numbers.

Rewrites are checked for their text and, with real torch, for computing what the legacy code computed
(the legacy `.data` forms still run on torch 2.x, so old and new run side by side)."""
import pytest
import torch

from data_support import applied, execute, migrate


def test_language_model_counter_stays_a_number_and_index_zero_goes():
    source = """
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    criterion = nn.CrossEntropyLoss()
    batches = [(torch.randn(5, 7), torch.randint(0, 7, (5,))) for _ in range(3)]

    def evaluate():
        total_loss = 0
        for x, y in batches:
            total_loss += len(x) * criterion(x, y).data
        return total_loss[0] / 15

    def train():
        total_loss = 0
        logged = []
        for x, y in batches:
            loss = criterion(x, y)
            total_loss += loss.data
            logged.append(total_loss[0] / 2)
            total_loss = 0
        return logged
    """
    outcome = migrate(source)
    assert "total_loss[0]" not in outcome.text and ".data" not in outcome.text
    assert applied(outcome).count("TM302") == 4
    migrated = execute(outcome.text)
    batches = migrated["batches"]
    expected = sum(len(x) * torch.nn.functional.cross_entropy(x, y).item() for x, y in batches) / 15
    assert migrated["evaluate"]() == pytest.approx(expected, rel=1e-12)
    assert isinstance(migrated["evaluate"](), float)
    assert migrated["train"]() == [torch.nn.functional.cross_entropy(x, y).item() / 2 for x, y in batches]
    with pytest.raises(IndexError):
        execute(source)["evaluate"]()  # the legacy counter on current torch


def test_counter_used_as_a_tensor_is_not_turned_into_a_number():
    source = "import torch.nn as nn\ncrit = nn.MSELoss()\ntotal = 0\ntotal += crit(a, b).data\nprint(total.item())\n"
    outcome = migrate(source)
    assert "TM302" not in applied(outcome)
    assert "total += crit(a, b).detach()" in outcome.text


def test_comparison_counts_are_python_ints_like_in_0_3():
    source = """
    import torch
    torch.manual_seed(0)
    output = torch.randn(50, 10, requires_grad=True)
    target = torch.randint(0, 10, (50,))
    correct = 0
    pred = output.data.max(1, keepdim=True)[1]
    correct += pred.eq(target.view_as(pred)).cpu().sum()
    _, predicted = torch.max(output.data, 1)
    correct += (predicted == target).sum()
    text = '{}/{}'.format(correct, 100)
    """
    outcome = migrate(source)
    legacy, migrated = execute(source), execute(outcome.text)
    assert isinstance(legacy["correct"], torch.Tensor)  # what 0.3 code silently gets today
    assert isinstance(migrated["correct"], int) and migrated["correct"] == int(legacy["correct"])
    assert migrated["text"] == f"{int(legacy['correct'])}/100"
    assert "output.max(1, keepdim=True)[1]" in outcome.text  # indices: no graph, `.data` simply goes


def test_reductions_of_data_are_numbers_only_where_used_as_numbers():
    outcome = migrate("import torch\nout, x = model(a), model(b)\nd = out.data.mean()\nprint('%.4f' % d)\n"
                      "n = p.grad.data.norm(2)\nprint(n.item())\ns = x.data.sum()\nreturn_value = [s]\n")
    assert "d = out.mean().item()" in outcome.text
    assert "n = p.grad.norm(2)\n" in outcome.text  # used as a tensor later: TM303, no `.item()`
    assert "s = x.data.sum()" not in outcome.text
