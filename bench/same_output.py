"""Record what the rules make of a fixed set of files, and check later that an optimisation changed none of it.

    python bench/same_output.py record [--out bench/.same_output.json] [--files 300] [--fuzz 400]
    python bench/same_output.py check  [--out bench/.same_output.json] [--files 300] [--fuzz 400]

The files: the throughput corpus (``bench/throughput.py``'s ``build_corpus``), every ``samples/`` and
``tests/rules/hazard_cases/`` script, every rule's ``changes`` and ``keeps`` examples, and ``--fuzz`` snippets of the fuzz grammar (``bench/fuzz.py``).
For each, with every rule, safe and with unsafe fixes: ``codemods.engine.run_rules``'s text and findings
(one pass), and the driver's ``process_file`` in diff mode (the fixed point: patch, findings, changes,
error). ``check`` prints every file whose answer differs and exits 1 if any does.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests")]


def inputs(files: int, fuzz: int, work: Path) -> dict:
    """``name -> path`` of every file to run (the corpus is written under ``work``)."""
    from throughput import build_corpus

    build_corpus(work / "corpus", files)
    found = {f"corpus/{p.relative_to(work / 'corpus').as_posix()}": p for p in sorted((work / "corpus").rglob("*.py"))}
    for folder in ("samples", "tests/rules/hazard_cases"):
        found.update({p.relative_to(ROOT).as_posix(): p for p in sorted((ROOT / folder).rglob("*.py"))})
    import codemods

    (work / "examples").mkdir()
    for rule in codemods.all_rules():  # every rule's documented changes and near-misses
        texts = [getattr(example, "before", example) for example in (*rule.changes, *rule.keeps)]
        for n, text in enumerate(t for t in texts if isinstance(t, str)):
            path = work / "examples" / f"{rule.code}_{n}.py"
            path.write_text(text, encoding="utf-8")
            found[f"examples/{rule.code}/{n}"] = path
    if fuzz:
        from test_fuzz import snippet

        (work / "fuzz").mkdir()
        for seed in range(fuzz):
            path = work / "fuzz" / f"fuzz_{seed}.py"
            path.write_text(snippet(random.Random(seed).choice), encoding="utf-8")
            found[f"fuzz/{seed}"] = path
    return found


def answers(found: dict) -> dict:
    import codemods
    from codemods.engine import run_rules
    from migrate.driver import DIFF, Options, process_file

    rules = codemods.all_rules()
    result = {}
    for name, path in found.items():
        text = path.read_text(encoding="utf-8")
        entry = {}
        for unsafe in (False, True):
            try:
                outcome = run_rules(text, rules, unsafe_fixes=unsafe)
                entry[f"engine unsafe={unsafe}"] = [outcome.text, [asdict(f) for f in outcome.findings]]
            except Exception as error:  # noqa: BLE001 (an error is an answer too)
                entry[f"engine unsafe={unsafe}"] = f"{type(error).__name__}: {error}"
            options = Options(mode=DIFF, unsafe_fixes=unsafe)
            done = process_file(Path(name), path, options, rules)
            entry[f"driver unsafe={unsafe}"] = [done.patch, [asdict(f) for f in done.findings], done.changes,
                                                done.error, done.changed]
        result[name] = entry
    return result


def show(before, now) -> None:
    """The findings only one side has (code, line, col, applied, message), and which other parts differ."""
    if isinstance(before, str) or isinstance(now, str):
        print(f"    before: {before if isinstance(before, str) else 'an answer'}\n    now: "
              f"{now if isinstance(now, str) else 'an answer'}")
        return
    def brief(finding):
        return (finding["code"], finding["line"], finding["col"], finding["applied"], finding["message"][:70])
    old, new = [brief(f) for f in before[1]], [brief(f) for f in now[1]]
    for finding in old:
        if finding not in new:
            print(f"    - {finding}")
    for finding in new:
        if finding not in old:
            print(f"    + {finding}")
    if old != new and sorted(old) == sorted(new):
        print("    (same findings, another order)")
    for index, part in ((0, "text"), (2, "change map"), (3, "error"), (4, "changed")):
        if index < len(before) and before[index] != now[index]:
            print(f"    {part} differs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("record", "check"))
    parser.add_argument("--out", default=str(ROOT / "bench" / ".same_output.json"))
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--fuzz", type=int, default=400)
    parser.add_argument("--show", action="store_true", help="check: print what differs (findings gained or lost, "
                        "and whether the text, change map or error differ)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tm-same-") as work:
        now = json.loads(json.dumps(answers(inputs(args.files, args.fuzz, Path(work))), default=repr))  # tuples as lists
    if args.action == "record":
        Path(args.out).write_text(json.dumps(now), encoding="utf-8")
        print(f"recorded {len(now)} files in {args.out}")
        return 0
    before = json.loads(Path(args.out).read_text(encoding="utf-8"))
    differ = sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))
    for name in differ:
        for key in sorted((before.get(name) or {}).keys() | (now.get(name) or {}).keys()):
            if (before.get(name) or {}).get(key) != (now.get(name) or {}).get(key):
                print(f"DIFFERS: {name} [{key}]")
                if args.show:
                    show(before[name][key], now[name][key])
    print(f"{len(now)} files, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
