"""Real-image data for train.py --image_dir DIR (DIR/train/*.png, DIR/test/*.png).

Needs torchvision and PIL, which the synthetic default does not; this module
is only imported when --image_dir is given.  Kept as it was written for
torchvision 0.2 (transforms.Scale was renamed Resize later).
"""
from os import listdir
from os.path import join

import torch.utils.data as data
from PIL import Image
from torchvision.transforms import Compose, CenterCrop, ToTensor, Scale


def is_image_file(filename):
    return any(filename.endswith(extension) for extension in [".png", ".jpg", ".jpeg"])


def load_img(filepath):
    img = Image.open(filepath).convert('YCbCr')
    y, _, _ = img.split()
    return y


class DatasetFromFolder(data.Dataset):
    def __init__(self, image_dir, input_transform=None, target_transform=None):
        super(DatasetFromFolder, self).__init__()
        self.image_filenames = [join(image_dir, x) for x in listdir(image_dir) if is_image_file(x)]

        self.input_transform = input_transform
        self.target_transform = target_transform

    def __getitem__(self, index):
        input = load_img(self.image_filenames[index])
        target = input.copy()
        if self.input_transform:
            input = self.input_transform(input)
        if self.target_transform:
            target = self.target_transform(target)

        return input, target

    def __len__(self):
        return len(self.image_filenames)


def calculate_valid_crop_size(crop_size, upscale_factor):
    return crop_size - (crop_size % upscale_factor)


def input_transform(crop_size, upscale_factor):
    return Compose([
        CenterCrop(crop_size),
        Scale(crop_size // upscale_factor),
        ToTensor(),
    ])


def target_transform(crop_size):
    return Compose([
        CenterCrop(crop_size),
        ToTensor(),
    ])


def get_training_set(image_dir, upscale_factor, crop_size=256):
    crop_size = calculate_valid_crop_size(crop_size, upscale_factor)
    return DatasetFromFolder(join(image_dir, "train"),
                             input_transform=input_transform(crop_size, upscale_factor),
                             target_transform=target_transform(crop_size))


def get_test_set(image_dir, upscale_factor, crop_size=256):
    crop_size = calculate_valid_crop_size(crop_size, upscale_factor)
    return DatasetFromFolder(join(image_dir, "test"),
                             input_transform=input_transform(crop_size, upscale_factor),
                             target_transform=target_transform(crop_size))
