"""TM205: CUDA-only calls are guarded."""

import pytest

from device_support import execute, migrate


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
