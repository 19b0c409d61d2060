"""TM507: torchvision renames."""
import pytest

from current_support import execute, migrate


def test_torchvision_alias_import_keeps_the_alias():
    source = "from torchvision.transforms import Scale as S, RandomSizedCrop\nt = [S(32), RandomSizedCrop(24, 3)]\n"
    assert migrate(source).text == ("from torchvision.transforms import Resize as S, RandomResizedCrop\n"
                                    "t = [S(32), RandomResizedCrop(24, interpolation=3)]\n")


def test_torchvision_bare_model_builder_gets_an_import():
    source = "from torchvision.models import resnet50\nnet = resnet50(pretrained=True)\n"
    assert migrate(source).text == ("from torchvision.models import ResNet50_Weights, resnet50\n"
                                    "net = resnet50(weights=ResNet50_Weights.IMAGENET1K_V1)\n")


def test_torchvision_rewrites_run_on_torchvision():
    transforms = pytest.importorskip("torchvision.transforms")
    source = ("import torchvision.transforms as transforms\nimport torchvision.utils as vutils\n"
              "t = transforms.Compose([transforms.Scale(8), transforms.RandomSizedCrop(4, 2)])\n"
              "grid = vutils.make_grid(torch.rand(2, 3, 4, 4), normalize=True, range=(0, 1))\n")
    done = execute(migrate(source).text)
    assert isinstance(done["t"].transforms[0], transforms.Resize)
    assert done["grid"].shape[0] == 3
