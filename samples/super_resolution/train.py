"""Train a tiny sub-pixel super-resolution CNN (PyTorch 0.3 example style).

Run this first: it saves the whole pickled model after every epoch as
model_epoch_<n>.pth in the current directory, which infer.py loads.

    python train.py                         # x2, 2 epochs, synthetic images, CPU
    python train.py --upscale_factor 4 --nEpochs 5
    python train.py --image_dir BSDS300/images   # real images: needs torchvision + PIL
"""
from __future__ import print_function
import argparse
from math import log10

import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data import DataLoader
from model import Net
from synthetic import SyntheticSRDataset

# Training settings
parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('--upscale_factor', type=int, default=2, help="super resolution upscale factor")
parser.add_argument('--batchSize', type=int, default=16, help='training batch size')
parser.add_argument('--testBatchSize', type=int, default=16, help='testing batch size')
parser.add_argument('--nEpochs', type=int, default=2, help='number of epochs to train for')
parser.add_argument('--lr', type=float, default=0.003, help='Learning Rate. Default=0.003')
parser.add_argument('--cuda', action='store_true', help='use cuda?')
parser.add_argument('--threads', type=int, default=0, help='number of threads for data loader to use')
parser.add_argument('--seed', type=int, default=123, help='random seed to use. Default=123')
parser.add_argument('--crop_size', type=int, default=32, help='high-resolution crop size')
parser.add_argument('--n_train', type=int, default=256, help='synthetic training images')
parser.add_argument('--n_test', type=int, default=32, help='synthetic test images')
parser.add_argument('--image_dir', type=str, default='', help='train on real images (needs torchvision); default: synthetic')
opt = parser.parse_args()

print(opt)

cuda = opt.cuda
if cuda and not torch.cuda.is_available():
    raise Exception("No GPU found, please run without --cuda")

torch.manual_seed(opt.seed)
if cuda:
    torch.cuda.manual_seed(opt.seed)

print('===> Loading datasets')
if opt.image_dir:
    from data import get_training_set, get_test_set
    train_set = get_training_set(opt.image_dir, opt.upscale_factor)
    test_set = get_test_set(opt.image_dir, opt.upscale_factor)
else:
    train_set = SyntheticSRDataset(opt.n_train, opt.crop_size, opt.upscale_factor)
    test_set = SyntheticSRDataset(opt.n_test, opt.crop_size, opt.upscale_factor)
training_data_loader = DataLoader(dataset=train_set, num_workers=opt.threads, batch_size=opt.batchSize, shuffle=True)
testing_data_loader = DataLoader(dataset=test_set, num_workers=opt.threads, batch_size=opt.testBatchSize, shuffle=False)

print('===> Building model')
model = Net(upscale_factor=opt.upscale_factor)
criterion = nn.MSELoss()

if cuda:
    model = model.cuda()
    criterion = criterion.cuda()

optimizer = optim.Adam(model.parameters(), lr=opt.lr)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = Variable(batch[0]), Variable(batch[1])
        if cuda:
            input = input.cuda()
            target = target.cuda()

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.data[0]
        loss.backward()
        optimizer.step()

        print("===> Epoch[{}]({}/{}): step {} loss {:.6f}".format(
            epoch, iteration, len(training_data_loader),
            (epoch - 1) * len(training_data_loader) + iteration - 1, loss.data[0]))

    print("===> Epoch {} Complete: Avg. Loss: {:.6f}".format(epoch, epoch_loss / len(training_data_loader)))


def test():
    avg_psnr = 0
    for batch in testing_data_loader:
        input, target = Variable(batch[0]), Variable(batch[1])
        if cuda:
            input = input.cuda()
            target = target.cuda()

        prediction = model(input)
        mse = criterion(prediction, target)
        psnr = 10 * log10(1 / mse.data[0])
        avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))


def checkpoint(epoch):
    model_out_path = "model_epoch_{}.pth".format(epoch)
    torch.save(model, model_out_path)
    print("Checkpoint saved to {}".format(model_out_path))

for epoch in range(1, opt.nEpochs + 1):
    train(epoch)
    test()
    checkpoint(epoch)
