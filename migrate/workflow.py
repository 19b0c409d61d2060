"""``torch-migrate migrate REPO``: the whole workflow a team runs on a repository.

1. copy the original tree to a temporary folder, the OLD side of every
   comparison (Python sources copied, other files hard-linked: data is never
   copied needlessly; deleted at the end, so it is no backup),
2. rewrite in place (or, with ``--diff``, in a second copy, leaving REPO alone),
3. verify the entry points: the snapshot's scripts (with the 0.3 compatibility
   layer, as legacy code does not run on current PyTorch) against the new ones,
   in the order given, in one mirror per side (a pipeline: what train.py saves,
   infer.py loads),
4. ``check`` the new tree for hazards left,
5. for an entry point that diverges, search the applied rules for the one
   whose changes cause it: re-rewrite a fresh copy with one rule left out at a
   time (most likely first, from the harness's attribution) until the entry
   point verifies equivalent.

The report card is a plain data structure, rendered as Markdown (to paste into
a pull request; shown formatted on a terminal) and JSON. It goes to stdout;
progress and errors go to stderr.
"""
from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence

import typer

from migrate import driver
from migrate.config import ConfigError, load_config
from migrate.discover import SKIP_DIRS, discover
from migrate.progress import Progress, for_stderr
from migrate.words import plural

if TYPE_CHECKING:  # the harness imports torch: `torch-migrate --help` must not wait for it
    from migrate.harness import VerifyOptions, VerifyResult
    from migrate.harness.fanout import Pool

DEFAULT_STEPS = 5  # optimizer steps compared per entry point when neither --steps nor the configuration says
SMALL_FILE = 1 << 20  # bytes: larger non-Python files are hard-linked into the snapshot


def snapshot(source: Path, destination: Path) -> None:
    """Copy ``source`` to ``destination``: sources copied, big files hard-linked (copied across devices)."""

    def link_or_copy(src: str, dst: str) -> None:
        if not src.endswith(".py") and os.path.getsize(src) > SMALL_FILE:
            try:
                os.link(src, dst)
                return
            except OSError:
                pass
        shutil.copy2(src, dst)

    ignore = shutil.ignore_patterns(*SKIP_DIRS, "*.pyc")
    shutil.copytree(source, destination, ignore=ignore, copy_function=link_or_copy, symlinks=True)


@dataclass
class EntryResult:
    entry: str
    verify: VerifyResult
    culprit: Optional[str] = None  # the rule whose changes make the entry point diverge
    tried: List[str] = field(default_factory=list)  # rules left out during the search, in order
    left_out: Sequence[str] = ()  # rules whose changes were finally left out, at the user's request

    def to_json(self) -> dict:
        return {"entry": self.entry, "verdict": self.verify.verdict, "reason": self.verify.reason,
                "culprit": self.culprit, "rules_tried": self.tried, "left_out": list(self.left_out),
                "verify": self.verify.to_json()}


@dataclass
class ReportCard:
    repo: str
    written: bool
    files: int
    changed: List[str]
    fixes: Dict[str, int]
    hazards: List[dict]
    errors: List[str]
    entries: List[EntryResult]
    diff: str = ""  # with --diff: what the rewrite would change
    steps: Optional[int] = None  # optimizer steps compared per entry point
    steps_source: str = ""  # where that number came from: --steps, the configuration, the default

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 3
        codes = [entry.verify.exit_code for entry in self.entries]
        return max(codes, default=0)

    def to_json(self) -> dict:
        return {"repo": self.repo, "written": self.written, "files": self.files, "changed": self.changed,
                "fixes": self.fixes, "hazards": self.hazards, "errors": self.errors, "steps": self.steps,
                "steps_source": self.steps_source,
                "entries": [entry.to_json() for entry in self.entries], "exit_code": self.exit_code}

    def to_markdown(self) -> str:
        from migrate.harness.report import comparison_line, to_markdown as verify_markdown

        verb = "rewrote" if self.written else "would rewrite"
        lines = [f"## torch-migrate report card: `{self.repo}`", "",
                 f"{verb} **{len(self.changed)}** of {plural(self.files, 'file')}; "
                 f"**{plural(sum(self.fixes.values()), 'fix', 'fixes')}**; "
                 f"**{plural(len(self.hazards), 'hazard')}** left; "
                 f"{plural(len(self.errors), 'file')} not processed.", ""]
        if self.entries:
            compared = (f"Each entry point's first {plural(self.steps, 'optimizer step')}" if self.steps else
                        "Every optimizer step of each entry point, run to its end,")
            lines += [f"{compared} compared, OLD against NEW ({self.steps_source}).", ""]
        if self.fixes:
            lines += ["| rule | fixes |", "|---|---|"] + [f"| {c} | {n} |" for c, n in sorted(self.fixes.items())]
            lines.append("")
        if self.entries:
            lines += ["| entry point | verdict | compared | detail |", "|---|---|---|---|"]
            for entry in self.entries:
                detail = entry.verify.reason.replace("|", "\\|")
                if entry.verify.localization is not None:
                    detail += f" — {entry.verify.localization.message}".replace("|", "\\|")
                if entry.culprit:
                    detail += f" — caused by **{entry.culprit}** (leave it out: `--ignore {entry.culprit}`)"
                if entry.left_out:
                    detail += f" — after leaving out {', '.join(entry.left_out)}"
                lines.append(f"| `{entry.entry}` | {entry.verify.verdict} | {comparison_line(entry.verify)} | {detail} |")
            lines.append("")
        if self.hazards:
            lines += ["Hazards left (`torch-migrate check`):", ""]
            lines += [f"- `{h['path']}:{h['line']}` {h['code']} {h['message']}" for h in self.hazards]
            lines.append("")
        if self.errors:
            lines += ["Not processed:", ""] + [f"- `{e}`" for e in self.errors] + [""]
        for entry in self.entries:
            lines += [f"<details><summary>verify <code>{entry.entry}</code></summary>", "",
                      verify_markdown(entry.verify), "</details>", ""]
        return "\n".join(lines)


def _rewrite(tree: Path, options: driver.Options, jobs: int) -> List[driver.FileResult]:
    return driver.run(discover([tree], notebooks=options.notebooks), options, jobs)


def migrate_repo(
    repo: Path,
    entries: Sequence[str],
    rewrite_options: driver.Options,
    verify_options: VerifyOptions,
    *,
    in_place: bool = True,
    search: bool = True,
    leave_out: Callable[[str], bool] = lambda code: False,
    jobs: int = 0,
    progress: Progress = Progress(),
    pool: Optional[Pool] = None,
) -> ReportCard:
    """``pool``: verify the entry points side by side, each on its own (``migrate.harness.fanout``);
    None: one after the other, in one copy of each tree per side (a pipeline)."""
    repo = repo.resolve()
    missing = [e for e in entries if not (repo / e).is_file()]
    if missing:
        raise FileNotFoundError(f"{'entry point' if len(missing) == 1 else 'entry points'} not found in {repo}: "
                                f"{', '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix="torch-migrate-") as work:
        work = Path(work)
        old = work / "old"
        progress.phase(f"copying {repo} (the OLD side)")
        snapshot(repo, old)
        new = repo
        if not in_place:
            new = work / "new"
            snapshot(repo, new)
        progress.phase("rewriting")
        results = _rewrite(new, rewrite_options, jobs)
        fixes = driver.applied_fixes(results)
        progress.phase("checking for hazards left")
        lint = driver.run(discover([new], notebooks=rewrite_options.notebooks),
                          driver.Options(driver.LINT, rewrite_options.select, rewrite_options.ignore,
                                         min_torch=rewrite_options.min_torch), jobs)
        hazards = [dict(f.to_dict(), path=str(Path(r.path).relative_to(new)))
                   for r in lint for f in r.findings if f.code >= "TM6"]
        entry_results = [EntryResult(entry, verdict) for entry, verdict in
                         zip(entries, _verify(old, new, entries, verify_options, progress, pool))]
        for i, result in enumerate(entry_results):
            if result.verify.verdict == "different" and search:
                _search_culprit(result, entries[:i + 1] if pool is None else [result.entry], old, work, fixes,
                                rewrite_options, verify_options, jobs, progress, pool)
        dropped = tuple(sorted({e.culprit for e in entry_results if e.culprit and leave_out(e.culprit)}))
        if dropped:
            progress.phase(f"rewriting again without {', '.join(dropped)}")
            for result in results:
                if result.changed:
                    relative = Path(result.path).relative_to(new)
                    shutil.copy2(old / relative, new / relative)
            rewrite_options = replace(rewrite_options, ignore=(*rewrite_options.ignore, *dropped))
            results = _rewrite(new, rewrite_options, jobs)
            fixes = driver.applied_fixes(results)
            for result, verdict in zip(entry_results, _verify(old, new, entries, verify_options, progress, pool)):
                result.left_out = dropped
                result.verify = verdict
        diff = "" if in_place else "".join(_diff(old, new, Path(r.path).relative_to(new)) for r in results if r.changed)
    return ReportCard(
        repo=str(repo), written=in_place, files=len(results), diff=diff, steps=verify_options.steps,
        changed=[str(Path(r.path).relative_to(new)) for r in results if r.changed],
        fixes=dict(sorted(fixes.items())), hazards=hazards,
        errors=[r.error for r in results if r.error], entries=entry_results,
    )


def _diff(old: Path, new: Path, relative: Path) -> str:
    from migrate.notebook import diff_files, is_notebook  # nbformat: only where a diff is shown

    if is_notebook(relative):
        return diff_files(old / relative, new / relative, relative)
    name = relative.as_posix()
    return "".join(difflib.unified_diff(
        (old / relative).read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True),
        (new / relative).read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True),
        f"a/{name}", f"b/{name}"))


def _verify(old: Path, new: Path, entries: Sequence[str], options: VerifyOptions,
            progress: Progress, pool: Optional[Pool] = None) -> List[VerifyResult]:
    """The entry points in order, in one mirror of each tree per side (a pipeline); with a ``pool``,
    side by side, each in its own mirror."""
    if pool is not None:
        from migrate.harness.jobs import Job

        jobs = [Job(entry, entry, entry, (str(old), str(new)), options) for entry in entries]
        return [result.verify for result in pool.run(jobs, progress)]
    from migrate.harness import verify_pipeline

    return verify_pipeline([(old / entry, new / entry) for entry in entries],
                           replace(options, old_root=old, new_root=new), progress)


def _search_culprit(result: EntryResult, pipeline: Sequence[str], old: Path, work: Path, fixes: Counter,
                    options: driver.Options, verify_options: VerifyOptions, jobs: int, progress: Progress,
                    pool: Optional[Pool] = None) -> None:
    """Leave one applied rule out at a time until the entry point (run after the entry points
    before it, which it may depend on) verifies equivalent."""
    blamed = [c.change.code for c in result.verify.culprits if getattr(c.change, "code", None)]
    order = list(dict.fromkeys([code for code in blamed if code in fixes] + sorted(fixes)))
    for code in order:
        progress.phase(f"{result.entry}: trying without {code}")
        trial = Path(tempfile.mkdtemp(prefix=f"without-{code}-", dir=work)) / "tree"
        snapshot(old, trial)
        _rewrite(trial, replace(options, ignore=(*options.ignore, code)), jobs)
        result.tried.append(code)
        trial_options = replace(verify_options, localize=False)  # only the verdict counts here
        if _verify(old, trial, pipeline, trial_options, progress, pool)[-1].verdict == "equivalent":
            result.culprit = code
            return


def migrate_command(
    repo: Path = typer.Argument(..., metavar="REPO", help="The repository to migrate.", exists=True, file_okay=False),
    script_args: Optional[List[str]] = typer.Argument(None, metavar="ARGS...", show_default=False,
                                                      help="Arguments for every entry point, after `--`."),
    entry: Optional[List[str]] = typer.Option(None, "--entry", metavar="FILE", help="Training script to verify (relative to REPO); repeatable. Default: `entry` in [tool.torch-migrate]."),
    diff: bool = typer.Option(False, "--diff", "--dry-run", help="Leave REPO untouched: rewrite and verify a copy, print the diff."),
    steps: Optional[int] = typer.Option(None, min=0, metavar="N", help=f"Optimizer steps to compare per entry point (default: `steps` in [tool.torch-migrate], else {DEFAULT_STEPS}; 0: run each to its end, as a pipeline whose later entry points read what training saves needs)."),
    timeout: float = typer.Option(300.0, min=1, metavar="SECONDS", help="Seconds per script run."),
    select: Optional[List[str]] = typer.Option(None, "--select", metavar="CODES", help="Rule codes or prefixes to apply."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES", help="Rule codes or prefixes to skip."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes that change behaviour."),
    min_torch: Optional[str] = typer.Option(None, "--min-torch", metavar="X.Y", help="Oldest torch the code must keep running on (default: `min-torch` in [tool.torch-migrate], else the installed torch)."),
    compat: bool = typer.Option(True, "--compat/--no-compat", help="Run the original with the 0.3 compatibility layer."),
    old_python: Optional[str] = typer.Option(None, metavar="PYTHON", help="Interpreter for the original scripts (an old PyTorch venv)."),
    new_python: Optional[str] = typer.Option(None, metavar="PYTHON", help="Interpreter for the rewritten scripts (default: this one)."),
    search: bool = typer.Option(True, "--search/--no-search", help="On divergence, find the rule that causes it."),
    leave_out: bool = typer.Option(False, "--leave-out-diverging", help="Without asking, rewrite again without the rule found to cause a divergence."),
    markdown: Optional[Path] = typer.Option(None, "--markdown", metavar="FILE", help="Write the report card as Markdown (for a pull request)."),
    json_path: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Write the report card as JSON."),
    jobs: int = typer.Option(0, "-j", "--jobs", metavar="N", help="Worker processes for the rewrite."),
    verify_jobs: Optional[int] = typer.Option(None, "--verify-jobs", min=0, metavar="N", show_default=False, help="Verify up to N entry points side by side, each on its own copy (0: one per GPU for GPU jobs, CPU jobs as cores and memory allow). Default: one after the other, in one copy per side (a pipeline); with --ray, as many as the cluster takes."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS", help="Verify the entry points side by side on Ray: `auto` (the cluster this machine belongs to), `ray://HEAD:10001`, or `local` (start a Ray instance here). Needs pip install \"torch-migrate[ray]\"."),
    shared_dir: Optional[Path] = typer.Option(None, "--shared-dir", metavar="DIR", file_okay=False, help="With --ray: copy the trees to DIR, mounted at the same path on every node, instead of shipping them with the jobs."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress on stderr (the report card is unchanged)."),
) -> None:
    """Rewrite REPO in place, verify its training entry points, and print a report card.

    Each entry point of the rewritten tree is run against the original, kept in a temporary copy
    that is deleted at the end: that copy is no backup, so commit first (or use --diff, which
    rewrites a second copy and leaves REPO untouched).

    Examples:

    \b
      torch-migrate migrate . --entry train.py -- --epochs 1
      torch-migrate migrate samples --diff --markdown report.md

    Exit status: 0 all entry points equivalent; 1 one diverges; 2 usage error; 3 a file
    could not be processed or an entry point could not be compared.
    """
    from migrate.harness import VerifyOptions

    if shared_dir is not None and ray is None:
        print("error: --shared-dir goes with --ray", file=sys.stderr)
        raise typer.Exit(2)
    config = load_config([repo])
    entries = list(entry or config.entry)
    if not entries:
        print("error: no entry point: pass --entry or set `entry` in [tool.torch-migrate]", file=sys.stderr)
        raise typer.Exit(2)
    codes = lambda values: tuple(c for v in values or () for c in v.split(",") if c.strip())
    rewrite_options = driver.Options(driver.WRITE, codes(select) or tuple(config.select),
                                     codes(ignore) or tuple(config.ignore), unsafe_fixes,
                                     tuple((p, tuple(c)) for p, c in config.per_file_ignores.items()),
                                     notebooks=config.notebooks, min_torch=_target_torch(config, min_torch))
    steps, steps_source = _steps(steps, config.steps, config.source)
    verify_options = VerifyOptions(
        script_args=tuple(script_args or ()), steps=steps, device="cpu", timeout=timeout,
        rtol=config.rtol, atol=config.atol, compat=compat, old_python=old_python, new_python=new_python,
        **({"memory_tolerance": config.memory_tolerance} if config.memory_tolerance is not None else {}))

    try:
        with _pool(verify_jobs, ray, shared_dir) as pool, for_stderr(quiet) as progress:
            def ask(code: str) -> bool:
                if leave_out:
                    return True
                with progress.suspended():
                    return sys.stdin.isatty() and typer.confirm(f"Leave the changes of {code} out?")

            card = migrate_repo(repo, entries, rewrite_options, verify_options, in_place=not diff, search=search,
                                leave_out=ask, jobs=jobs, progress=progress, pool=pool)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        raise typer.Exit(2)
    card.steps_source = steps_source
    sys.stdout.write(card.diff)
    _print_card(card.to_markdown().split("<details>")[0])
    if markdown is not None:
        markdown.write_text(card.to_markdown(), encoding="utf-8")
    if json_path is not None:
        json_path.write_text(json.dumps(card.to_json(), indent=1, default=str), encoding="utf-8")
    raise typer.Exit(card.exit_code)


def _pool(jobs: Optional[int], ray: Optional[str], shared_dir: Optional[Path]):
    """The engine that verifies entry points side by side (connected now: a bad address fails before
    the rewrite), or none: one after the other, as a pipeline."""
    if ray is None and jobs is None:
        return contextlib.nullcontext()
    from migrate.harness.fanout import Engine, RayMissing, RayUnreachable, open_engine

    try:
        return open_engine(Engine(jobs=jobs or 0, ray=ray, shared_dir=shared_dir))
    except (RayMissing, RayUnreachable) as error:
        print(f"error: {error}", file=sys.stderr)
        raise typer.Exit(2)


def _target_torch(config, flag: Optional[str]) -> tuple:
    try:
        return config.target_torch(flag)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        raise typer.Exit(2)


def _steps(option: Optional[int], configured: Optional[int], pyproject: str) -> tuple:
    """The steps to compare per entry point (None: every step, each script to its end) and where that
    number came from, for the report card."""
    if option is not None:
        value, source = option, f"`--steps {option}`"
    elif configured is not None:
        where = Path(pyproject)
        with contextlib.suppress(ValueError):  # shown as the user would type it, when below the current folder
            where = where.relative_to(Path.cwd())
        value, source = configured, f"`steps = {configured}` in {where}"
    else:
        return DEFAULT_STEPS, "the default; `--steps N` or `steps` in [tool.torch-migrate] sets it"
    return value or None, source


def _print_card(markdown: str) -> None:
    """Formatted on a terminal; as Markdown text when redirected (a file to read or to paste)."""
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console(highlight=False).print(Markdown(markdown))
    else:
        sys.stdout.write(markdown)
