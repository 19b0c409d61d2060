"""CPU time of the rules over the throughput corpus, in one process: less noisy than wall time on a shared machine.

    python bench/cpu_time.py [--files 500] [--repeat 3] [--profile tottime|cumulative [--callers RE]] [--by-rule]
                             [--engine]

Builds ``bench/throughput.py``'s corpus, then times (``time.process_time``, the fastest of ``--repeat``)
what a cold ``rewrite`` does per file, without the process pool and the cache: the driver's
``process_file`` writing a fresh copy of the corpus (trigger filter, every pass to the fixed point, the guard,
the write). ``--engine``
times one ``codemods.engine.run_rules`` with all rules per file instead. ``--profile`` prints the top of a
cProfile of one more run, sorted by that key (the rules then run on the main thread, where cProfile sees them,
instead of the driver's big-stack thread). The floor (libcst parse + codegen of every file) is timed the
same way, for the ratio.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", choices=("tottime", "cumulative"))
    parser.add_argument("--engine", action="store_true", help="run_rules once per file instead of process_file")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--callers", metavar="REGEX", help="with --profile: who calls the functions matching REGEX")
    parser.add_argument("--by-rule", action="store_true",
                        help="CPU time of each rule's handlers and of the engine's phases, over one more run")
    args = parser.parse_args()

    import shutil

    import libcst as cst

    import codemods
    from codemods.engine import run_rules
    from migrate import driver, pool
    from migrate.driver import Options, process_file
    from throughput import build_corpus

    rules = codemods.all_rules()
    options = Options()
    with tempfile.TemporaryDirectory(prefix="tm-cpu-") as work:
        corpus, tree = Path(work) / "corpus", Path(work) / "tree"
        build_corpus(corpus, args.files)
        texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.rglob("*.py"))]

        def fresh() -> None:
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(corpus, tree)

        def floor() -> None:
            for text in texts:
                cst.parse_module(text).code

        def ours() -> None:
            if args.engine:
                for text in texts:
                    run_rules(text, rules)
            else:
                with pool.collect_less():  # as `driver.run` does
                    for path in sorted(tree.rglob("*.py")):
                        process_file(path, path, options, rules)

        def best(function) -> float:
            times = []
            for _ in range(args.repeat):
                fresh()
                start = time.process_time()
                function()
                times.append(time.process_time() - start)
            return min(times)

        fresh()
        ours()  # warm: imports, lru caches
        base, mine = best(floor), best(ours)
        print(f"{len(texts)} files: floor {base:.2f} s CPU, {'run_rules' if args.engine else 'process_file'} "
              f"{mine:.2f} s CPU, ratio {mine / base:.2f}")
        if args.by_rule:
            fresh()
            print_by_rule(rules, ours)
        if args.profile:
            sys.setrecursionlimit(20000)
            driver._on_big_stack = lambda function, *a, **k: function(*a, **k)
            fresh()
            profile = cProfile.Profile()
            profile.runcall(ours)
            stats = pstats.Stats(profile).sort_stats(args.profile)
            stats.print_stats(args.top)
            if args.callers:
                stats.print_callers(args.callers)


def print_by_rule(rules, run) -> None:
    """Exclusive CPU time of every rule's ``visit_*``/``leave_*`` handlers, of each shared analysis a family
    builds through ``FileContext.analysis`` (the model, hazard facts, flow, plans: its own line, whichever
    rule asks first) and of the engine's and driver's phases, by wrapping them for one call of ``run``."""
    import functools
    from collections import defaultdict

    import libcst as cst

    from codemods import engine
    from codemods.base import FileContext
    from migrate import driver

    spent: dict = defaultdict(float)
    running: list = []  # [label, since] of the timed calls in progress, innermost last

    def timed(function, label):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            now = time.process_time()
            if running:  # the caller's clock stops while this one runs
                spent[running[-1][0]] += now - running[-1][1]
            running.append([label(*args) if callable(label) else label, now])
            try:
                return function(*args, **kwargs)
            finally:
                name, since = running.pop()
                now = time.process_time()
                spent[name] += now - since
                if running:
                    running[-1][1] = now
        return wrapper

    saved = []

    def wrap(owner, attr, label):
        saved.append((owner, attr, vars(owner).get(attr)))  # None: inherited, restored by deleting the wrapper
        setattr(owner, attr, timed(getattr(owner, attr), label))

    for rule in rules:
        for _, _, attr in engine._handler_names(rule):
            wrap(rule, attr, rule.code)
    for owner, attr, label in ((cst, "parse_module", "parse"), (engine, "positions", "positions"),
                               (engine, "code", "code generation"),
                               (engine, "remove_unused_imports", "import clean-up"), (engine, "ImportMap", "imports"),
                               (engine, "build_index", "child index"), (driver, "_verify", "guard"),
                               (driver, "_one_pass", "driver, engine"), (engine._Dispatcher, "run", "dispatch"),
                               (engine, "add_imports", "add imports"), (driver, "triggered", "trigger filter"),
                               (driver, "_read_back", "read back"), (driver, "cache_key", "cache key"),
                               (driver.python2, "find_before_libcst", "python 2 check"),
                               (driver, "_write", "write"), (engine, "_ApplyFixes", "fix transform setup"),
                               (cst.Module, "visit", "fix transform")):
        wrap(owner, attr, label)

    def built(ctx, build):  # an analysis counts where it is built, not where it is served from the memo
        return f"({getattr(build, '__qualname__', build)})" if build not in ctx._analyses else "memo"

    wrap(FileContext, "analysis", built)
    saved.append((cst.Module, "code", cst.Module.__dict__["code"]))
    cst.Module.code = property(timed(cst.Module.__dict__["code"].fget, "module.code"))
    try:
        start = time.process_time()
        run()
        total = time.process_time() - start
    finally:
        for owner, attr, original in reversed(saved):
            if original is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)
    print(f"\nby rule, analysis and phase, each without what it calls that has its own line ({total:.2f} s CPU):")
    for label, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        if seconds >= 0.005:
            print(f"  {label:<28}{seconds:>7.2f} s {100 * seconds / total:>5.1f} %")

if __name__ == "__main__":
    main()
