"""Synthetic grey-level "photos" for the super-resolution sample (no download)."""
import math

import torch
import torch.utils.data as data


def smooth_images(n, size):
    """n x 1 x size x size images in [0, 1]: a few random plane waves each."""
    ys = torch.linspace(0, 1, size).view(1, size, 1)
    xs = torch.linspace(0, 1, size).view(1, 1, size)
    img = torch.zeros(n, size, size)
    for _ in range(3):
        fy = torch.rand(n, 1, 1) * 4
        fx = torch.rand(n, 1, 1) * 4
        phase = torch.rand(n, 1, 1) * 2 * math.pi
        img += torch.sin(2 * math.pi * (fy * ys + fx * xs) + phase)
    img = img.div_(6).add_(0.5).clamp_(0, 1)
    return img.unsqueeze(1)


def downsample(hr, factor):
    """Box-filter downsampling of an N x C x H x W batch by an integer factor."""
    n, c, h, w = hr.size()
    return hr.contiguous().view(n, c, h // factor, factor, w // factor, factor).mean(5).mean(3)


class SyntheticSRDataset(data.Dataset):
    """(low-res input, high-res target) pairs."""

    def __init__(self, n, crop_size, upscale_factor):
        super(SyntheticSRDataset, self).__init__()
        self.target = smooth_images(n, crop_size)
        self.input = downsample(self.target, upscale_factor)

    def __getitem__(self, index):
        return self.input[index], self.target[index]

    def __len__(self):
        return self.target.size(0)
