"""TM508: grid_sample/affine_grid keep `align_corners=True`."""
import textwrap

import torch

from current_support import execute, migrate


def test_grid_sample_rewrite_gives_the_legacy_values():
    source = """
    import torch
    import torch.nn.functional as F
    theta = torch.tensor([[[0.5, 0.0, 0.2], [0.0, 0.5, 0.0]]])
    image = torch.arange(16.0).view(1, 1, 4, 4)
    grid = F.affine_grid(theta, image.size())
    out = F.grid_sample(image, grid)
    """
    text = migrate(source).text
    legacy = torch.nn.functional.grid_sample(
        torch.arange(16.0).view(1, 1, 4, 4),
        torch.nn.functional.affine_grid(torch.tensor([[[0.5, 0.0, 0.2], [0.0, 0.5, 0.0]]]), (1, 1, 4, 4),
                                        align_corners=True), align_corners=True)
    assert torch.equal(execute(text)["out"], legacy)
    assert not torch.equal(execute(textwrap.dedent(source))["out"], legacy)
