"""TM702: the legacy split attributes of torchvision datasets become `data`/`targets` where the receiver is
provably such a dataset (the same object either way, so only the spelling changes)."""
from ecosystem_support import applied, migrate

SCRIPT = """
import torchvision

mnist = torchvision.datasets.MNIST('data', train=False)
images = mnist.test_data.unsqueeze(1).float() / 255
labels = mnist.test_labels
cifar = torchvision.datasets.CIFAR100('data')
pixels, classes = cifar.train_data, cifar.train_labels
svhn = torchvision.datasets.SVHN('data')
svhn_labels = svhn.train_labels
"""


def test_mnist_and_cifar_attributes_are_renamed_and_svhn_is_left():
    outcome = migrate(SCRIPT)
    assert applied(outcome) == ["TM702"] * 4
    assert "mnist.data.unsqueeze(1)" in outcome.text and "labels = mnist.targets" in outcome.text
    assert "pixels, classes = cifar.data, cifar.targets" in outcome.text
    assert "svhn.train_labels" in outcome.text
