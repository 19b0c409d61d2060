"""TM512: `ToTensor` on a value the model proves is a tensor is reported (a TypeError on every torchvision);
`ToTensor()(torch.from_numpy(a))` passes the array instead (unsafe)."""
import numpy as np
import pytest
import torch

from current_support import codes, execute, migrate


@pytest.mark.parametrize("source", [
    "import torch\nimport torchvision.transforms as T\nx = T.ToTensor()(torch.rand(3, 8, 8))\n",
    "import torch\nfrom torchvision.transforms import functional as F\nimg = torch.zeros(1, 4, 4)\ny = F.to_tensor(img)\n",
    "import torch\nfrom torchvision import transforms\nt = transforms.ToTensor()\nbatch = torch.randn(2, 3, 4, 4)\n"
    "out = t(batch[0])\n",
    "import torch\nfrom torchvision import transforms as T\nprep = T.Compose([T.ToTensor(), T.Normalize((0.5,), (0.5,))])\n"
    "def load(n):\n    raw = torch.ByteTensor(n, 28, 28)\n    return prep(raw)\n",
])
def test_tensors_fed_to_to_tensor_are_reported_with_what_to_do(source):
    outcome = migrate(source, unsafe=True)
    assert outcome.text == source and codes(outcome) == ["TM512"]
    finding = outcome.findings[0]
    assert "PIL Image or ndarray" in finding.message and finding.hint
    assert ("ConvertImageDtype" in finding.hint) == ("ByteTensor" in source)


@pytest.mark.parametrize("source", [
    "import numpy as np\nfrom torchvision import transforms\nx = transforms.ToTensor()(np.zeros((4, 4, 3)))\n",
    "from torchvision import transforms\ndef f(image):\n    return transforms.ToTensor()(image)\n",
    "import torch\nfrom torchvision import transforms\nt = transforms.Compose([transforms.Resize(8), "
    "transforms.ToTensor()])\nx = t(torch.rand(3, 4, 4))\n",  # Resize takes the tensor; ToTensor then raises: unknown
    "import torch\nfrom torchvision import transforms\nt = transforms.ToTensor()\nt = other\nx = t(torch.rand(3))\n",
])
def test_inputs_not_proven_tensors_are_left_alone(source):
    outcome = migrate(source, unsafe=True)
    assert outcome.text == source and codes(outcome) == []


def test_from_numpy_argument_becomes_the_array_only_as_an_unsafe_fix():
    source = ("import numpy as np\nimport torch\nfrom torchvision import transforms\n"
              "frame = (np.arange(48) % 256).astype(np.uint8).reshape(4, 4, 3)\n"
              "x = transforms.ToTensor()(torch.from_numpy(frame))\n")
    assert migrate(source).text == source
    outcome = migrate(source, unsafe=True)
    assert "x = transforms.ToTensor()(frame)\n" in outcome.text and codes(outcome, applied=True) == ["TM512"]
    pytest.importorskip("torchvision.transforms")
    x = execute(outcome.text)["x"]
    frame = (np.arange(48) % 256).astype(np.uint8).reshape(4, 4, 3)
    assert torch.equal(x, torch.from_numpy(frame).permute(2, 0, 1).float() / 255)
