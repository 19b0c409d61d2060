"""What a notebook costs against the same code as a `.py`: ratio from one run.

    python bench/notebook_throughput.py [--files 120] [--jobs 1] [--repeat 3]

Builds two corpora from the legacy samples: notebooks (each sample cut into cells at its top-level blocks,
with markdown cells, IPython magics, shell escapes, a `%%time` cell and outputs: stream text and a 40 kB
PNG per notebook, as a notebook that was run has) and, for each, a `.py` holding exactly its Python code.
Then times, with the same processes and no cache (the fastest of --repeat interleaved runs counting):
  py        `torch-migrate rewrite` of the `.py` corpus
  notebook  `torch-migrate rewrite` of the notebook corpus
  json      reading, parsing and validating (nbformat) every notebook and writing it back: the JSON I/O
and prints notebook / (py + json): a notebook should cost no more than its code plus its JSON (<= 1),
and the same for `check`.
"""
from __future__ import annotations

import argparse
import ast
import base64
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import ROOT, measure  # noqa: E402

JSON_IO = r'''
import json, pathlib, sys, warnings
import nbformat
warnings.simplefilter("ignore")
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.ipynb")):
    data = json.loads(path.read_bytes())
    nbformat.validate(data)
    path.with_suffix(".out").write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
'''


def cells_of(text: str) -> list:
    """The script cut before each top-level statement that follows a blank line (how notebooks are laid out)."""
    lines = text.splitlines(True)
    starts = sorted({min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
                     for node in ast.parse(text, feature_version=(3, 6)).body})  # `async=` parses as 3.6
    cuts = [0] + [start - 1 for start in starts[1:] if start >= 2 and not lines[start - 2].strip()] + [len(lines)]
    chunks = ["".join(lines[a:b]).strip("\n") for a, b in zip(cuts, cuts[1:])]
    return [chunk for chunk in chunks if chunk]


def notebook(chunks: list, index: int, rng: random.Random) -> dict:
    image = base64.b64encode(rng.randbytes(30_000)).decode()
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [f"# Notebook {index}\n", "Legacy code."]},
             {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
              "source": ["%matplotlib inline\n", "!nvidia-smi -L"]}]
    for number, chunk in enumerate(chunks):
        source = ("%%time\n" if number == len(chunks) - 1 else "") + chunk
        outputs = [{"name": "stdout", "output_type": "stream", "text": ["step 0 loss 2.3\n", "step 1 loss 2.2\n"]}]
        if number == len(chunks) // 2:
            outputs.append({"data": {"image/png": image, "text/plain": ["<Figure size 432x288 with 1 Axes>"]},
                            "metadata": {}, "output_type": "display_data"})
        cells.append({"cell_type": "code", "execution_count": number + 2, "metadata": {}, "outputs": outputs,
                      "source": source.splitlines(True)})
        if number % 3 == 2:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": [f"Step {number}."]})
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                          "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 2}


def build(root: Path, files: int) -> tuple:
    """(notebook corpus, py corpus, lines of code)."""
    samples = sorted(p for p in (ROOT / "samples").rglob("*.py"))
    rng = random.Random(0)
    notebooks, scripts = root / "notebooks", root / "scripts"
    notebooks.mkdir(parents=True)
    scripts.mkdir()
    lines = 0
    for index in range(files):
        chunks = cells_of(samples[index % len(samples)].read_text(encoding="utf-8"))
        chunks[-1] += f"\nvariant = {index}"
        (notebooks / f"nb{index:04d}.ipynb").write_text(json.dumps(notebook(chunks, index, rng), indent=1,
                                                                   sort_keys=True, ensure_ascii=False) + "\n")
        code = "\n\n".join(chunks) + "\n"
        (scripts / f"nb{index:04d}.py").write_text(code)
        lines += code.count("\n")
    return notebooks, scripts, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=120)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each; the fastest counts")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tm-nb-bench-"))
    try:
        notebooks, scripts, lines = build(work / "corpus", args.files)
        size = sum(p.stat().st_size for p in notebooks.glob("*.ipynb")) / 2**20
        print(f"corpus: {args.files} notebooks ({size:.1f} MiB) and {args.files} .py files, {lines} lines of code "
              f"each way; jobs={args.jobs}")
        tool = [sys.executable, "-m", "migrate"]
        env = dict(os.environ, TORCH_MIGRATE_CACHE_DIR=str(work / "cache"))
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "codemods"), str(ROOT / "migrate")],
                       check=True)

        def fresh(corpus: Path) -> str:
            copy = work / f"run-{corpus.name}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(corpus, copy)
            return str(copy)

        runs = {
            "py rewrite": lambda: [*tool, "rewrite", "-q", "--no-cache", "-j", str(args.jobs), fresh(scripts)],
            "notebook rewrite": lambda: [*tool, "rewrite", "-q", "--no-cache", "-j", str(args.jobs), fresh(notebooks)],
            "py check": lambda: [*tool, "check", "-q", "--no-cache", "-j", str(args.jobs), str(scripts)],
            "notebook check": lambda: [*tool, "check", "-q", "--no-cache", "-j", str(args.jobs), str(notebooks)],
            "json I/O": lambda: [sys.executable, "-c", JSON_IO, fresh(notebooks)],
        }
        times: dict = {}
        for _ in range(args.repeat):
            for name, command in runs.items():
                seconds, _, status = measure(command(), env)
                if status not in (0, 1):
                    sys.exit(f"{name} failed (exit status {status})")
                times[name] = min(times.get(name, seconds), seconds)
        print(f"\n{'run':<18}{'seconds':>9}")
        for name, seconds in times.items():
            print(f"{name:<18}{seconds:>9.2f}")
        io = times["json I/O"]
        print("\nratios (target <= 1: a notebook costs no more than its code as a .py plus its JSON I/O):")
        for command in ("rewrite", "check"):
            ratio = times[f"notebook {command}"] / (times[f"py {command}"] + io)
            print(f"  notebook {command} / (py {command} + json I/O): {ratio:.2f}  "
                  f"(notebook / py alone: {times[f'notebook {command}'] / times[f'py {command}']:.2f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
