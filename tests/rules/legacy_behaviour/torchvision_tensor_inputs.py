"""torchvision: `ToTensor` takes PIL images and arrays only (a tensor raises), while the other transforms take
tensors (0.8+); `Normalize` broadcasts its statistics in place (3-channel stats on a 1-channel image raise:
legacy torchvision zipped them, using the first); MNIST's `train_data`/`train_labels` are warning aliases of
`data`/`targets` and CIFAR's are gone (torchvision 0.2.2)."""
import warnings

import numpy as np
import pytest
import torch

transforms = pytest.importorskip("torchvision.transforms")
datasets = pytest.importorskip("torchvision.datasets")

from _check import raises  # noqa: E402

raises(lambda: transforms.ToTensor()(torch.rand(3, 4, 4)), "pic should be PIL Image or ndarray")
frame = (np.arange(48) % 256).astype(np.uint8).reshape(4, 4, 3)
converted = transforms.ToTensor()(frame)  # what TM512's unsafe fix passes instead of torch.from_numpy(frame)
assert converted.shape == (3, 4, 4) and torch.equal(converted, torch.from_numpy(frame).permute(2, 0, 1).float() / 255)
assert transforms.Normalize((0.5,), (0.5,))(torch.ones(1, 2, 2)).tolist() == [[[1.0, 1.0], [1.0, 1.0]]]

raises(lambda: transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.2))(torch.ones(1, 2, 2)), "doesn't match")

assert isinstance(vars(datasets.MNIST).get("train_data"), property)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    assert not hasattr(datasets.CIFAR10, "train_data") and not hasattr(datasets.CIFAR10, "train_labels")
