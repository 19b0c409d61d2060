"""A training script that misbehaves in the way named by its argument, for the
harness's robustness tests. Every mode but `nostep` first makes one optimizer
step, so the record of a run that then dies must still hold that step."""
import ctypes
import os
import signal
import subprocess
import sys
import time

import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step():
    optimizer.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    optimizer.step()


def spawn_children():
    """Children the script never waits for: same group, forked, and one that escapes with setsid."""
    same_group = subprocess.Popen(["sleep", "300"])
    forked = os.fork()
    if forked == 0:
        time.sleep(300)
        os._exit(0)
    escaped = subprocess.Popen(["sleep", "300"], start_new_session=True)
    print("children", same_group.pid, forked, escaped.pid, flush=True)
    train_step()


def ignore_sigterm():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stubborn = subprocess.Popen([sys.executable, "-c",
                                 "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"])
    print("children", stubborn.pid, flush=True)
    while True:
        time.sleep(1)


def flood_output():
    line = "x" * 99 + "\n"
    for _ in range(40000):  # 4 MB
        sys.stdout.write(line)
    sys.stderr.write(line * 10000)  # 1 MB
    train_step()


MODES = {
    "oom": lambda: torch.empty(1 << 60),
    "segv": lambda: ctypes.string_at(0),
    "abort": os.abort,
    "children": spawn_children,
    "sigterm": ignore_sigterm,
    "output": flood_output,
    "stdin": lambda: input("continue? "),
    "nostep": lambda: model(torch.randn(8, 4)),
}

if __name__ == "__main__":
    if sys.argv[1] != "nostep":
        train_step()
    MODES[sys.argv[1]]()
