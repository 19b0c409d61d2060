"""F.grid_sample/F.affine_grid: default align_corners False since 1.3 (legacy True); values differ."""
import torch
import torch.nn.functional as F

from _check import warns

theta = torch.tensor([[[0.5, 0.0, 0.2], [0.0, 0.5, 0.0]]])
image = torch.arange(16.0).view(1, 1, 4, 4)
grid = warns(lambda: F.affine_grid(theta, (1, 1, 4, 4)), "align_corners=False since 1.3")
current = warns(lambda: F.grid_sample(image, grid), "align_corners=False since 1.3")
legacy = F.grid_sample(image, F.affine_grid(theta, (1, 1, 4, 4), align_corners=True), align_corners=True)
assert not torch.allclose(current, legacy)
