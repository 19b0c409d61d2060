"""A small classifier as tutorials write it (on CUDA where there is one): train, evaluate after
each epoch under no_grad, print and log metrics, save a checkpoint and a CSV log. Its output
also holds what legitimately differs between two runs: timings, a progress bar redrawn with
carriage returns, timestamps, a temporary path and an object address.
Tests derive wrong migrations from it (each replaces one marked line)."""
import argparse
import datetime
import logging
import os
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--tensorboard", action="store_true")
args = parser.parse_args()
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("classifier")

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
data, target = torch.randn(96, 8).to(device), torch.randint(0, 3, (96,)).to(device)
test_data, test_target = torch.randn(48, 8).to(device), torch.randint(0, 3, (48,)).to(device)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
writer = None
if args.tensorboard:
    from tensorboardX import SummaryWriter
    writer = SummaryWriter(tempfile.mkdtemp())


def normalize(x):
    return (x - x.mean()) / x.std()


def evaluate(epoch):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for start in range(0, 48, 24):
            x, y = test_data[start:start + 24], test_target[start:start + 24]
            output = model(normalize(x))  # evaluation input
            test_loss += F.cross_entropy(output, y, reduction="sum").item()
            correct += output.argmax(1).eq(y).sum().item()
    test_loss /= 48
    accuracy = correct / 48  # accuracy
    print("Test epoch {}: average loss {:.4f}, accuracy {}/48".format(epoch, test_loss, correct))
    log.info("epoch %d test loss %.4f", epoch, test_loss)
    if writer is not None:
        writer.add_scalar("test/loss", test_loss, epoch)
        writer.add_scalar("test/accuracy", accuracy, epoch)
    return accuracy


started = time.time()
for epoch in range(1, args.epochs + 1):
    model.train()
    epoch_start = time.time()
    for batch, start in enumerate(range(0, 96, 32)):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data[start:start + 32]), target[start:start + 32])
        loss.backward()
        optimizer.step()
        done = batch + 1
        sys.stderr.write("\r{:3d}%|{:<10}| {}/3 [00:0{}<00:00, {:.2f}it/s]".format(
            done * 100 // 3, "#" * (done * 10 // 3), done, batch, 3 / (time.time() - epoch_start + 1e-3)))
        print("epoch {} batch {} loss {:.6f}".format(epoch, batch, loss.item()))  # training log
    sys.stderr.write("\n")
    print("epoch {} took {:.3f}s".format(epoch, time.time() - epoch_start))
    accuracy = evaluate(epoch)
print("finished at", datetime.datetime.now(), "scratch", tempfile.mkdtemp(), "object", object())
print("positive", model(test_data[:1]).data[0][0].item() > 0.5)  # printed value
state = {"epoch": args.epochs, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
         "accuracy": accuracy}  # checkpoint
torch.save(state, "checkpoint.pt")
os.makedirs("logs", exist_ok=True)
with open("logs/metrics.csv", "w") as f:
    f.write("epoch,accuracy,seconds\n{},{:.4f},{:.2f}\n".format(args.epochs, accuracy, time.time() - started))
