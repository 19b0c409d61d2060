"""TM703: legacy torchvision normalised channel by channel with `zip`, so RGB statistics on a 1-channel
image used the first mean and std; the fix keeps exactly those. torchvision itself runs where it is
installed (its CUDA wheel cannot load on the CPU torch of CI machines); the arithmetic runs everywhere."""
import pytest
import torch
from ecosystem_support import applied, migrate

SCRIPT = """
from torchvision import datasets, transforms

normalize = transforms.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
train_tf = transforms.Compose([transforms.RandomCrop(28, padding=2), transforms.ToTensor(),
                               transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
train = datasets.FashionMNIST('data', train=True, transform=train_tf)
test = datasets.FashionMNIST('data', train=False, transform=train_tf)
"""


def legacy_normalize(tensor, mean, std):
    """torchvision 0.2's `Normalize`: in place, one channel per `zip` step."""
    for t, m, s in zip(tensor, mean, std):
        t.sub_(m).div_(s)
    return tensor


def current_normalize(tensor, mean, std):
    """What torchvision's `F.normalize` computes now: in place with broadcast statistics, so three of them on
    one channel raise."""
    mean, std = torch.as_tensor(mean), torch.as_tensor(std)
    return tensor.clone().sub_(mean[:, None, None]).div_(std[:, None, None])


def test_the_first_channel_statistics_give_the_legacy_values():
    outcome = migrate(SCRIPT)
    assert applied(outcome) == ["TM703"]  # `normalize` is not in a Compose that reaches the dataset
    assert "transforms.Normalize((0.485,), (0.229,))" in outcome.text
    image = torch.rand(1, 28, 28)
    with pytest.raises(RuntimeError, match="broadcast shape"):
        current_normalize(image, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    expected = legacy_normalize(image.clone(), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    assert torch.equal(current_normalize(image, (0.485,), (0.229,)), expected)


def test_torchvision_itself_agrees():
    transforms = pytest.importorskip("torchvision.transforms")
    image = torch.rand(1, 28, 28)
    with pytest.raises(RuntimeError):
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))(image.clone())
    fixed = transforms.Normalize((0.485,), (0.229,))(image.clone())
    assert torch.equal(fixed, legacy_normalize(image.clone(), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)))


def test_an_rgb_dataset_beside_it_keeps_the_statistics():
    source = SCRIPT + "imagenet = datasets.ImageFolder('imgs', transform=train_tf)\n"
    assert migrate(source).findings == []
