"""TM503: `.numpy()` of values that may require grad gets `.detach()`."""
import textwrap

import numpy as np
import pytest

from current_support import execute, migrate


def test_numpy_of_model_output_runs_and_matches_data():
    source = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.fc = nn.Linear(3, 2)
        def forward(self, x):
            return self.fc(x)
    model = Net()
    x = torch.ones(1, 3)
    out = model(x)
    out = out.cpu()
    img = out[0].numpy()
    w = model.fc.weight.numpy()
    """
    with pytest.raises(RuntimeError, match="requires grad"):
        execute(textwrap.dedent(source))
    outcome = migrate(source)
    assert "img = out[0].detach().numpy()" in outcome.text
    assert "w = model.fc.weight.detach().numpy()" in outcome.text
    done = execute(outcome.text)
    assert np.array_equal(done["img"], done["model"](done["x"]).data[0].numpy())


def test_numpy_leaves_data_alone():
    source = """
    import torch
    def evaluate(model, loader):
        model.eval()
        for images, labels in loader:
            grid = images.numpy()
            y = labels.cpu().numpy()
            noise = torch.randn(3).numpy()
            pred = model(images).max(1)[1].numpy()
            probs = model(images).data.numpy()
    """
    assert migrate(source).findings == []


def test_numpy_of_parameter_loop_and_requires_grad_tensor():
    source = """
    import torch
    for p in net.parameters():
        print(p.numpy())
    w = torch.randn(3, requires_grad=True)
    b = torch.zeros(3, requires_grad=False)
    h = (w * 2 + b).numpy()
    bb = b.numpy()
    """
    outcome = migrate(source)
    assert "print(p.detach().numpy())" in outcome.text
    assert "h = (w * 2 + b).detach().numpy()" in outcome.text
    assert "bb = b.numpy()" in outcome.text
