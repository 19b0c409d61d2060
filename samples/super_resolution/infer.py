"""Super-resolve a few synthetic test images with a model saved by train.py.

Run train.py first (in the same directory): with its defaults it leaves
model_epoch_2.pth in the current directory, which is what --model defaults to.

    python train.py && python infer.py
    python infer.py --model model_epoch_1.pth --output_filename sr.pgm
"""
from __future__ import print_function
import argparse
from math import log10

import numpy as np
import torch
import torch.autograd as ag

from synthetic import smooth_images, downsample

# Inference settings
parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('--model', type=str, default='model_epoch_2.pth', help='model file to use')
parser.add_argument('--n_images', type=int, default=4, help='how many synthetic images to super-resolve')
parser.add_argument('--input_size', type=int, default=16, help='low-resolution input size')
parser.add_argument('--output_filename', type=str, default='out.pgm', help='where to save the last output image')
parser.add_argument('--cuda', action='store_true', help='use cuda')
parser.add_argument('--seed', type=int, default=7, help='random seed for the synthetic images')
opt = parser.parse_args()

print(opt)

torch.manual_seed(opt.seed)

model = torch.load(opt.model)
if opt.cuda:
    model = model.cuda()
upscale_factor = model.upscale_factor

hr_images = smooth_images(opt.n_images, opt.input_size * upscale_factor)
lr_images = downsample(hr_images, upscale_factor)

for i in range(opt.n_images):
    y = lr_images[i]
    input = ag.Variable(y, volatile=True).view(1, -1, y.size(1), y.size(2))
    if opt.cuda:
        input = input.cuda()

    out = model(input)
    out = out.cpu()
    out_img_y = out.data[0].numpy()

    mse = ((out_img_y - hr_images[i].numpy()) ** 2).mean()
    print('image {} step {} loss {:.6f} psnr {:.4f} dB'.format(i, i, mse, 10 * log10(1 / mse)))

# a look at what the first layer learned
filters = model.conv1.weight.data.cpu().numpy()
print('conv1 filters {} mean |w| {:.6f}'.format(filters.shape, np.abs(filters).mean()))

out_img_y *= 255.0
out_img_y = out_img_y.clip(0, 255)
out_img_y = np.uint8(np.round(out_img_y[0]))
with open(opt.output_filename, 'w') as f:
    f.write('P2\n{} {}\n255\n'.format(out_img_y.shape[1], out_img_y.shape[0]))
    for row in out_img_y:
        f.write(' '.join(str(v) for v in row) + '\n')
print('output image saved to', opt.output_filename)
