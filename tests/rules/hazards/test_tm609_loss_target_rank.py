"""TM609: an (N, 1) input with an (N,) target raises for BCE and silently broadcasts to (N, N) for MSE/L1 on
current torch; the unsafe `squeeze(1)` fix gives the loss the intended pairs."""
import warnings

import pytest
import torch

from hazard_support import CASES, check, load, located, rewritten

BROADCAST = "Using a target size"


def test_bce_raises_and_regression_losses_broadcast():
    module = load(CASES / "loss_target_bad.py")
    for hazard in module.RAISING:
        with pytest.raises(ValueError, match="size"):
            hazard()
    for hazard in module.BROADCASTING:
        with pytest.warns(UserWarning, match=BROADCAST):
            hazard()


def test_squeeze_fix_runs_and_compares_each_prediction_with_its_target(tmp_path):
    module, outcome = rewritten(tmp_path, "loss_target_bad.py", {"TM609"})
    assert "criterion(D(x).squeeze(1), real)" in outcome.text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = [hazard() for hazard in module.RAISING + module.BROADCASTING]
    assert all(loss.dim() == 0 for loss in losses)
    torch.manual_seed(0)
    model = module.Regressor()
    x, y = torch.randn(5, 3), torch.randn(5)
    paired = ((model(x)[:, 0] - y) ** 2).mean()
    torch.testing.assert_close(torch.nn.functional.mse_loss(model(x).squeeze(1), y), paired)
    with pytest.warns(UserWarning, match=BROADCAST):
        assert not torch.allclose(torch.nn.functional.mse_loss(model(x), y), paired)


@pytest.mark.parametrize("source", [
    # the target's rank is not known
    "import torch\nimport torch.nn as nn\nD = nn.Linear(4, 1)\nloss = nn.BCEWithLogitsLoss()(D(x), labels)\n",
    # the input's shape is not known
    "import torch\nimport torch.nn as nn\nloss = nn.MSELoss()(model(x), torch.zeros(8))\n",
    # nn.Linear(k, 2): not a column
    "import torch\nimport torch.nn as nn\nD = nn.Linear(4, 2)\nloss = nn.MSELoss()(D(x), torch.zeros(8))\n",
    # a layer after the last Linear that is not element-wise
    "import torch\nimport torch.nn as nn\nD = nn.Sequential(nn.Linear(4, 1), nn.Flatten(0))\n"
    "loss = nn.MSELoss()(D(x), torch.zeros(8))\n",
    # the name is rebound to something else
    "import torch\nimport torch.nn as nn\nD = nn.Linear(4, 1)\nD = make()\nloss = nn.MSELoss()(D(x), torch.zeros(8))\n",
    # KLDiv / NLL are not element-wise comparisons of this kind
    "import torch\nimport torch.nn as nn\nD = nn.Linear(4, 1)\nloss = nn.NLLLoss()(D(x), torch.zeros(8))\n",
])
def test_unproven_shapes_are_left_alone(source):
    assert located(check(source)) == []


def test_target_view_and_unsqueeze_are_columns():
    flagged = ("import torch\nimport torch.nn.functional as F\nv = torch.randn(8)\n"
               "loss = F.l1_loss(v.unsqueeze(1), torch.zeros(v.size(0)))\n")
    assert located(check(flagged)) == [("TM609", 4)]
    assert located(check(flagged.replace("unsqueeze(1)", "unsqueeze(0)"))) == []


# A classifier shaped like real binary-classification code (written for this test): a stack ending in
# Linear(k, 1), a sigmoid module applied in forward, scored against a (N,) label vector.
BINARY = """import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.stack = nn.Sequential(nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, 1))
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        scores = self.stack(x)
        scores = self.sigmoid(scores)
        return scores


def run():
    model = Classifier(5)
    x = torch.randn(6, 5)
    labels = torch.empty(x.size(0)).random_(2)
    return nn.BCELoss()(model(x), labels)
"""


def test_a_local_classifier_ending_in_a_column_is_flagged_and_fails():
    assert located(check(BINARY)) == [("TM609", 21)]
    namespace = {}
    exec(compile(BINARY, "<binary>", "exec"), namespace)
    with pytest.raises(ValueError, match="different to the input size"):
        namespace["run"]()
    fixed = check(BINARY, unsafe_fixes=True).text
    assert "nn.BCELoss()(model(x).squeeze(1), labels)" in fixed
    namespace = {}
    exec(compile(fixed, "<fixed>", "exec"), namespace)
    assert namespace["run"]().dim() == 0
