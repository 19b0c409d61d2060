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


def test_spellings_older_torchvision_lacks_stay_under_an_older_min_torch():
    source = ("import torchvision.utils as vutils\nfrom torchvision import models, transforms\n"
              "vutils.save_image(x, 'a.png', normalize=True, range=(-1, 1))\nnet = models.resnet18(pretrained=True)\n"
              "t = transforms.Scale(64)\n")
    old = migrate(source, min_torch=(1, 7))
    assert old.text == source.replace("Scale", "Resize")
    assert [f.code for f in old.findings if not f.applied] == ["TM507"]
    middle = migrate(source, min_torch=(1, 11)).text
    assert "value_range=(-1, 1)" in middle and "pretrained=True" in middle
    assert "weights=models.ResNet18_Weights.IMAGENET1K_V1" in migrate(source, min_torch=(1, 12)).text
