"""One-file DCGAN on tiny 16x16 synthetic images (0.3/0.4-era style).

The "dataset" is procedurally generated: one soft bright blob per image at a
random place, scaled to [-1, 1] like the images DCGAN is usually trained on.

    python dcgan.py                    # 1 epoch of 16 steps on CPU
    python dcgan.py --niter 5 --outf out

Writes netG_epoch_<n>.pth / netD_epoch_<n>.pth (state dicts) and a PGM grid
of samples from a fixed noise batch into --outf (default: current directory).
"""
from __future__ import print_function
import argparse
import os
import random
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data
from torch.autograd import Variable

parser = argparse.ArgumentParser()
parser.add_argument('--batchSize', type=int, default=32, help='input batch size')
parser.add_argument('--imageSize', type=int, default=16, help='the height / width of the input image to network')
parser.add_argument('--nImages', type=int, default=512, help='number of synthetic training images')
parser.add_argument('--nz', type=int, default=16, help='size of the latent z vector')
parser.add_argument('--ngf', type=int, default=16)
parser.add_argument('--ndf', type=int, default=16)
parser.add_argument('--niter', type=int, default=1, help='number of epochs to train for')
parser.add_argument('--lr', type=float, default=0.0002, help='learning rate, default=0.0002')
parser.add_argument('--beta1', type=float, default=0.5, help='beta1 for adam. default=0.5')
parser.add_argument('--no-cuda', action='store_true', default=False, help='disables cuda')
parser.add_argument('--outf', default='.', help='folder to output images and model checkpoints')
parser.add_argument('--manualSeed', type=int, default=999, help='manual seed')

opt = parser.parse_args()
opt.cuda = not opt.no_cuda and torch.cuda.is_available()
print(opt)

try:
    os.makedirs(opt.outf)
except OSError:
    pass

print("Random Seed: ", opt.manualSeed)
random.seed(opt.manualSeed)
torch.manual_seed(opt.manualSeed)
if opt.cuda:
    torch.cuda.manual_seed_all(opt.manualSeed)

Tensor = torch.cuda.FloatTensor if opt.cuda else torch.FloatTensor


def synthetic_blobs(n, size):
    """n single-channel images, each one gaussian blob, in [-1, 1]."""
    grid = torch.linspace(-1, 1, size)
    cy = torch.rand(n, 1, 1) * 1.2 - 0.6
    cx = torch.rand(n, 1, 1) * 1.2 - 0.6
    r = torch.rand(n, 1, 1) * 0.3 + 0.2
    d2 = (grid.view(1, size, 1) - cy) ** 2 + (grid.view(1, 1, size) - cx) ** 2
    img = torch.exp(-d2 / (2 * r * r))
    return (img * 2 - 1).unsqueeze(1)


images = synthetic_blobs(opt.nImages, opt.imageSize)
dataset = torch.utils.data.TensorDataset(images, torch.zeros(opt.nImages))
dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize,
                                         shuffle=True, num_workers=0)

nz = int(opt.nz)
ngf = int(opt.ngf)
ndf = int(opt.ndf)
nc = 1


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal(m.weight.data, 1.0, 0.02)
        nn.init.constant(m.bias.data, 0)


class _netG(nn.Module):
    def __init__(self):
        super(_netG, self).__init__()
        self.main = nn.Sequential(
            # input is Z, going into a convolution
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # state size. (ngf*2) x 4 x 4
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            # state size. (ngf) x 8 x 8
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            # state size. (nc) x 16 x 16
        )

    def forward(self, input):
        return F.tanh(self.main(input))


netG = _netG()
netG.apply(weights_init)
print(netG)


class _netD(nn.Module):
    def __init__(self):
        super(_netD, self).__init__()
        self.main = nn.Sequential(
            # input is (nc) x 16 x 16
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf) x 8 x 8
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf*2) x 4 x 4
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
        )

    def forward(self, input):
        output = F.sigmoid(self.main(input))
        return output.view(-1, 1).squeeze(1)


netD = _netD()
netD.apply(weights_init)
print(netD)

criterion = nn.BCELoss()

fixed_noise = torch.FloatTensor(opt.batchSize, nz, 1, 1).normal_(0, 1)

if opt.cuda:
    netD.cuda()
    netG.cuda()
    criterion.cuda()
    fixed_noise = fixed_noise.cuda()

fixed_noise = Variable(fixed_noise)

# setup optimizer
optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))


def save_pgm(batch, path, nrow=8):
    """Write a batch of [-1, 1] images (N x 1 x H x W numpy array) as one PGM grid."""
    n, _, h, w = batch.shape
    ncol = (n + nrow - 1) // nrow
    canvas = [[0] * (nrow * w) for _ in range(ncol * h)]
    for k in range(n):
        r, c = (k // nrow) * h, (k % nrow) * w
        for y in range(h):
            for x in range(w):
                canvas[r + y][c + x] = int(round((batch[k, 0, y, x] + 1) * 127.5))
    with open(path, 'w') as f:
        f.write('P2\n%d %d\n255\n' % (nrow * w, ncol * h))
        for row in canvas:
            f.write(' '.join(str(max(0, min(255, v))) for v in row) + '\n')


step = 0
for epoch in range(opt.niter):
    for i, data in enumerate(dataloader, 0):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        # train with real
        netD.zero_grad()
        real_cpu, _ = data
        batch_size = real_cpu.size(0)
        real = Variable(real_cpu.type(Tensor))
        label = torch.full((batch_size,), 1)
        if opt.cuda:
            label = label.cuda()

        output = netD(real)
        errD_real = criterion(output, Variable(label))
        errD_real.backward()
        D_x = output.data.mean()

        # train with fake
        noise = Variable(Tensor(batch_size, nz, 1, 1).normal_(0, 1))
        fake = netG(noise)
        label.fill_(0)
        output = netD(Variable(fake.data))
        errD_fake = criterion(output, Variable(label))
        errD_fake.backward()
        D_G_z1 = output.data.mean()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(1)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, Variable(label))
        errG.backward()
        D_G_z2 = output.data.mean()
        optimizerG.step()

        print('[%d/%d][%d/%d] step %d loss_D %.6f loss_G %.6f D(x) %.4f D(G(z)) %.4f / %.4f'
              % (epoch, opt.niter, i, len(dataloader), step,
                 errD.data[0], errG.data[0], D_x, D_G_z1, D_G_z2))
        step += 1

    fake = netG(fixed_noise)
    save_pgm(fake.data.cpu().numpy(), '%s/fake_samples_epoch_%03d.pgm' % (opt.outf, epoch))

    # do checkpointing
    torch.save(netG.state_dict(), '%s/netG_epoch_%d.pth' % (opt.outf, epoch))
    torch.save(netD.state_dict(), '%s/netD_epoch_%d.pth' % (opt.outf, epoch))
