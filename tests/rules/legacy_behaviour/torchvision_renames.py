"""torchvision: Scale/RandomSizedCrop removed, make_grid range= renamed, pretrained= deprecated (still works)."""
import inspect

import pytest

transforms = pytest.importorskip("torchvision.transforms")
models = pytest.importorskip("torchvision.models")
utils = pytest.importorskip("torchvision.utils")

assert not hasattr(transforms, "Scale") and not hasattr(transforms, "RandomSizedCrop")
assert list(inspect.signature(transforms.RandomResizedCrop).parameters)[:4] == ["size", "scale", "ratio",
                                                                               "interpolation"]
assert "value_range" in inspect.signature(utils.make_grid).parameters
assert "range" not in inspect.signature(utils.make_grid).parameters
assert models.ResNet18_Weights.IMAGENET1K_V1 and models.VGG16_Weights.IMAGENET1K_V1
with pytest.warns(UserWarning, match="pretrained"):
    net = models.resnet18(pretrained=False)
assert net.fc.out_features == 1000
