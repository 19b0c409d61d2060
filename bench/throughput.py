"""Throughput of `rewrite` and `check` on a generated corpus, as ratios from one run.

    python bench/throughput.py [--files 2000] [--jobs 2] [--repeat 3] [--no-torchfix]

Builds a corpus (legacy scripts from samples/ and generated variants, already
modern scripts, files that never import torch, a few 3,000-line files), then
times on the same machine and with the same number of processes:
  floor           libcst parse + codegen of every file, largest first (the least any libcst tool can do)
  cold rewrite    `torch-migrate rewrite` of a fresh copy with an empty cache (to a fixed point)
  second rewrite  `torch-migrate rewrite` again on the tree it just rewrote (its cache)
  check after     `torch-migrate check` of that rewritten tree (the same cache)
  cold check      `torch-migrate check` of a fresh copy with an empty cache
  second check    `torch-migrate check` again on the unchanged tree
  torchfix        TorchFix 0.7 `--fix` (installed into bench/.venv-torchfix on first use;
                  it pins libcst < 1.6, so it cannot share our environment)
(the floor and each cold run with its warm runs --repeat times, interleaved, the fastest run of each
counting; TorchFix, far slower, once) and prints each time, the ratios issue 20 targets, and the peak RSS
of the largest process (main or worker) for the corpus and for the largest file alone.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / "bench" / ".venv-torchfix"

LEGACY = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Net{i}(nn.Module):
    def __init__(self):
        super(Net{i}, self).__init__()
        self.fc1 = nn.Linear(20, 50)
        self.fc2 = nn.Linear(50, 2)
        nn.init.xavier_uniform(self.fc1.weight)

    def forward(self, x):
        x = F.sigmoid(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def train{i}(model, optimizer, loader, use_cuda):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        if use_cuda:
            data, target = data.cuda(), target.cuda()
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target, size_average=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm(model.parameters(), 0.5)
        optimizer.step()
        if batch_idx % 10 == 0:
            print("loss {{:.4f}}".format(loss.data[0]))


def test{i}(model, loader):
    correct = 0
    for data, target in loader:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        pred = output.data.max(1, keepdim=True)[1]
        correct += pred.eq(target.data.view_as(pred)).cpu().sum()
    return correct
'''

MODERN = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model{i}(nn.Module):
    def __init__(self, width: int = 64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Linear(width, 4))

    def forward(self, x):
        return self.body(x)


def train{i}(model, loader, device, epochs=1):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    return loss.item()


@torch.no_grad()
def evaluate{i}(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        pred = model(x.to(device)).argmax(dim=1)
        correct += (pred == y.to(device)).sum().item()
        total += y.numel()
    return correct / max(total, 1)
'''

PLAIN = '''"""Helpers that have nothing to do with torch."""
import json
import os
from collections import defaultdict


def load_config{i}(path):
    with open(path) as handle:
        return json.load(handle)


def group_by_suffix{i}(names):
    groups = defaultdict(list)
    for name in names:
        groups[os.path.splitext(name)[1]].append(name)
    return dict(groups)


class Registry{i}:
    def __init__(self):
        self.items = {{}}

    def register(self, key, value):
        if key in self.items:
            raise KeyError(key)
        self.items[key] = value
        return value

    def __len__(self):
        return len(self.items)
'''


def build_corpus(root: Path, files: int, seed: int = 0) -> dict:
    """40% legacy (samples/ and generated), 25% modern, 35% no torch, plus four 3,000-line files."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    samples = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples").rglob("*.py"))]
    kinds = {"legacy": 0, "modern": 0, "plain": 0, "large": 0}
    for i in range(files):
        draw = rng.random()
        if draw < 0.40:
            kind = "legacy"
            text = samples[i % len(samples)] if samples and i % 3 == 0 else LEGACY.format(i=i)
        elif draw < 0.65:
            kind, text = "modern", MODERN.format(i=i)
        else:
            kind, text = "plain", PLAIN.format(i=i)
        kinds[kind] += 1
        folder = root / f"pkg{i % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{kind}_{i}.py").write_text(text, encoding="utf-8")
    for j in range(4):
        blocks = [LEGACY.format(i=f"{j}_{k}").split("\n\n\n", 1)[1] for k in range(70)]
        header = LEGACY.split("\n\n\n", 1)[0]
        (root / f"large_{j}.py").write_text(header + "\n\n\n" + "\n\n".join(blocks), encoding="utf-8")
        kinds["large"] += 1
    return kinds


FLOOR = r'''
import os, sys, pathlib, multiprocessing as mp
import libcst as cst

def one(path):
    cst.parse_module(pathlib.Path(path).read_text(encoding="utf-8")).code
    return 1

if __name__ == "__main__":
    # largest first, one file per task: a 3,000-line file drawn last would leave the other workers idle
    paths = sorted((str(p) for p in pathlib.Path(sys.argv[1]).rglob("*.py")), key=lambda p: -os.stat(p).st_size)
    with mp.get_context("fork").Pool(int(sys.argv[2])) as pool:
        sum(pool.imap_unordered(one, paths, chunksize=1))
'''

MEASURE = r'''
import resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_maxrss, status, usage.ru_utime + usage.ru_stime)
'''


def measure(command, env) -> tuple:
    """(seconds, peak RSS in MiB of the largest process in the tree, exit status, CPU seconds of the tree)."""
    output = subprocess.run([sys.executable, "-c", MEASURE, *command], env=env, capture_output=True, text=True,
                            check=True).stdout.split()
    return float(output[0]), int(output[1]) / 1024, int(output[2]), float(output[3])


def torchfix_binary() -> Path:
    binary = VENV / "bin" / "torchfix"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "torchfix==0.7.0"], check=True)
    return binary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each of ours and of the floor; the fastest counts")
    parser.add_argument("--no-torchfix", action="store_true", help="skip TorchFix (needs the package registry once)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="tm-bench-"))
    try:
        corpus = work / "corpus"
        kinds = build_corpus(corpus, args.files)
        lines = sum(p.read_text(encoding="utf-8").count("\n") for p in corpus.rglob("*.py"))
        print(f"corpus: {sum(kinds.values())} files, {lines} lines: {kinds}; jobs={args.jobs}")
        copies = {name: work / name for name in ("rewrite", "check", "torchfix")}  # the trees each command works on
        for copy in copies.values():
            shutil.copytree(corpus, copy)
        env = dict(os.environ, TORCH_MIGRATE_CACHE_DIR=str(work / "cache"))  # each run below names its own
        tool = [sys.executable, "-m", "migrate"]
        subprocess.run([*tool, "rules"], env=env, check=True, stdout=subprocess.DEVNULL)  # installed and working
        # pip compiled TorchFix's bytecode when it installed it; an editable install (and an environment with
        # PYTHONDONTWRITEBYTECODE) would recompile ours in every timed run, so it is compiled here the same way.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "codemods"), str(ROOT / "migrate")],
                       check=True)
        jobs = ["-j", str(args.jobs)]
        largest = max(corpus.rglob("*.py"), key=lambda p: p.stat().st_size)

        def cache_env(name: str) -> dict:
            return dict(env, TORCH_MIGRATE_CACHE_DIR=str(work / f"cache-{name}"))

        def fresh(name: str) -> Path:
            """An untouched copy of the corpus and an empty cache, for another cold run."""
            shutil.rmtree(copies[name], ignore_errors=True)
            shutil.rmtree(work / f"cache-{name}", ignore_errors=True)
            shutil.copytree(corpus, copies[name])
            return copies[name]

        def cold_and_warm(command: str) -> list:
            """A cold run of a fresh copy, then the warm runs that reuse its tree and its cache."""
            tree, cache = str(fresh(command)), cache_env(command)
            runs = [(f"cold {command}", [*tool, command, "-q", *jobs, tree])]
            runs.append((f"second {command}", [*tool, command, "-q", *jobs, tree]))
            if command == "rewrite":
                runs.append(("check after", [*tool, "check", "-q", *jobs, tree]))
            return [(name, measure(argv, cache)) for name, argv in runs]

        times: dict = {}
        for _ in range(args.repeat):  # interleaved, so that a machine that slows down slows every run alike
            runs = [("floor", measure([sys.executable, "-c", FLOOR, str(corpus), str(args.jobs)], env))]
            runs += cold_and_warm("rewrite") + cold_and_warm("check")
            for name, run in runs:
                if name not in times or run[0] < times[name][0]:  # the fastest counts: load only ever adds
                    times[name] = run
        times["largest file"] = measure([*tool, "rewrite", "--diff", "-q", "--no-cache", str(largest)], env)
        if not args.no_torchfix:
            times["torchfix"] = measure([str(torchfix_binary()), "--fix", *jobs, str(copies["torchfix"])], env)

        broken = [name for name, (_, _, status, _) in times.items() if status not in (0, 1)]
        if broken:
            sys.exit(f"runs that failed (exit status not 0 or 1): {', '.join(broken)}; no ratios")
        print(f"\n{'run':<16}{'seconds':>10}{'CPU s':>8}{'peak RSS MiB':>15}{'exit':>6}")
        for name, (seconds, rss, status, cpu) in times.items():
            print(f"{name:<16}{seconds:>10.2f}{cpu:>8.2f}{rss:>15.0f}{status:>6}")
        cold, floor = times["cold rewrite"][0], times["floor"][0]
        print("\nratios (targets in brackets):")
        print(f"  cold rewrite / parse+codegen    : {cold / floor:.2f}  [<= 2]  (CPU: "
              f"{times['cold rewrite'][3] / times['floor'][3]:.2f})")
        if "torchfix" in times:
            print(f"  cold rewrite / TorchFix --fix   : {cold / times['torchfix'][0]:.3f}  [<= 0.1]")
        print(f"  second rewrite / cold rewrite   : {times['second rewrite'][0] / cold:.3f}  [<= 0.05]")
        print(f"  check after / cold rewrite      : {times['check after'][0] / cold:.3f}")
        print(f"  cold check / parse+codegen      : {times['cold check'][0] / floor:.2f}")
        print(f"  second check / cold check       : {times['second check'][0] / times['cold check'][0]:.3f}  [<= 0.05]")
        print(f"  peak RSS corpus / largest file  : {times['cold rewrite'][1] / times['largest file'][1]:.2f}  "
              "[~1: bounded by the largest file]")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
