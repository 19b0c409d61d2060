"""Fit a degree-4 polynomial with raw tensors and hand-written gradient descent.

The way the 0.3 "Variables and autograd" tutorials did it: the parameters are
Variables that require grad, no nn.Module, no optimizer; each step reads
`loss.data[0]`, updates `w.data` in place and zeroes the gradients by hand.

    python manual_regression.py
    python manual_regression.py --steps 500 --lr 0.2
"""
from __future__ import print_function
import argparse
import torch
from torch.autograd import Variable as V

parser = argparse.ArgumentParser(description='Polynomial regression with manual SGD')
parser.add_argument('--steps', type=int, default=60, help='number of gradient steps')
parser.add_argument('--batch-size', type=int, default=32, help='points per step')
parser.add_argument('--lr', type=float, default=0.1, help='learning rate')
parser.add_argument('--seed', type=int, default=1, help='random seed')
args = parser.parse_args()

torch.manual_seed(args.seed)

dtype = torch.FloatTensor
# dtype = torch.cuda.FloatTensor  # Uncomment this to run on GPU

POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target[0]


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair, x uniform in [-1, 1]."""
    random = torch.rand(batch_size) * 2 - 1
    x = make_features(random)
    y = f(x)
    return V(x.type(dtype), requires_grad=False), V(y.type(dtype), requires_grad=False)


# Randomly initialized weights; requires_grad=True means we want gradients for them.
w = V(torch.randn(POLY_DEGREE, 1), requires_grad=True)
b = V(torch.zeros(1).type(dtype), requires_grad=True)

for t in range(args.steps):
    batch_x, batch_y = get_batch(args.batch_size)

    # Forward pass: the model is just a matrix product plus a bias
    y_pred = batch_x.mm(w) + b

    # Compute and print loss; loss.data[0] is the scalar value held by the loss.
    loss = (y_pred - batch_y).pow(2).mean()
    print('step {} loss {:.6f}'.format(t, loss.data[0]))

    # Backward pass: computes the gradient of loss with respect to w and b
    loss.backward()

    # Update weights using gradient descent; w.data and w.grad.data are Tensors.
    w.data -= args.lr * w.grad.data
    b.data -= args.lr * b.grad.data

    # Manually zero the gradients after updating weights
    w.grad.data.zero_()
    b.grad.data.zero_()

print('==> Learned function:\t' + poly_desc(w.data.view(-1), b.data))
print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
