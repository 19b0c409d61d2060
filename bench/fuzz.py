"""Fuzz every rule with 10,000+ legacy snippets and print every finding.

    python bench/fuzz.py [--examples 10000] [--seed 0] [--jobs N] [--show 1]

The snippets come from the grammar of ``tests/test_fuzz.py`` (``snippet``),
driven by ``random.Random(seed + i)`` rather than hypothesis, which spends
more time choosing than the rules spend rewriting; each is checked with that
test's ``problems()``: the rewrite compiles and passes the driver's guard, is
idempotent, adds no ``requires_grad``, leaves nothing fixable for ``check``
and keeps every comment. Prints how many snippets ran and how fast, then
every finding with the number of snippets that hit it, their seeds (snippet
``i`` is ``snippet(random.Random(i).choice)``) and the shortest of them, as
generated and with every line removed that the finding does not need.
Exits 1 if anything was found.
"""
from __future__ import annotations

import argparse
import ast
import os
import random
import re
import sys
import time
from collections import defaultdict
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_fuzz import problems, snippet  # noqa: E402  (the shared grammar and properties)


def check(seed: int):
    source = snippet(random.Random(seed).choice)
    return seed, source, problems(source)


def _key(finding: str) -> str:
    return re.sub(r"line \d+", "line N", finding)


def reduced(source: str, key: str) -> str:
    """``source`` with every line whose removal keeps it valid and keeps the finding removed, to a fixpoint."""
    lines = source.splitlines(keepends=True)
    shrinking = True
    while shrinking:
        shrinking = False
        for index in reversed(range(len(lines))):
            candidate = "".join(lines[:index] + lines[index + 1:])
            try:
                ast.parse(candidate, feature_version=(3, 6))
            except SyntaxError:
                continue
            if key in map(_key, problems(candidate)):
                del lines[index]
                shrinking = True
    return "".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="first seed (snippets use seed, seed+1, ...)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--show", type=int, default=1, help="snippets printed per finding, shortest first")
    args = parser.parse_args()

    seeds = range(args.seed, args.seed + args.examples)
    hits = defaultdict(list)  # finding, line numbers left out -> [(seed, source)]
    start = time.perf_counter()
    with get_context("fork").Pool(args.jobs) as pool:
        for seed, source, found in pool.imap_unordered(check, seeds, chunksize=50):
            for finding in found:
                hits[_key(finding)].append((seed, source))
    elapsed = time.perf_counter() - start

    print(f"{len(seeds)} snippets in {elapsed:.1f} s ({len(seeds) / elapsed:.0f}/s, {args.jobs} processes); "
          f"{len(hits)} distinct findings in {len({s for cases in hits.values() for s, _ in cases})} snippets")
    for finding, cases in sorted(hits.items(), key=lambda item: -len(item[1])):
        cases.sort(key=lambda case: (len(case[1]), case[0]))
        print(f"\n== {finding}\n   {len(cases)} snippets, seeds {', '.join(str(s) for s, _ in sorted(cases))}")
        for seed, source in cases[:args.show]:
            print(f"--- seed {seed}\n{source}--- seed {seed}, reduced\n{reduced(source, finding)}", end="")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
