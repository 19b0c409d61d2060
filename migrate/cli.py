"""The ``torch-migrate`` command line.

Exit status, for every command:
  0  success: nothing to report (``rewrite`` in place also returns 0 after changing files)
  1  ``rewrite --check``: files would change; ``check``: findings; ``verify``: not equivalent
  2  usage error
  3  some files could not be read, parsed or compiled on this Python, or are Python 2 (reported as
     path:line:col; left untouched), or, for ``verify``, no comparison was possible
  4  internal error: a rule produced code that does not compile or changed code no fix declared, or a
     worker process died (the files concerned were left untouched)
  130/143  interrupted by SIGINT/SIGTERM: every file is either entirely old or entirely new
"""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import List, Optional

import typer

import migrate
from migrate import driver
from migrate.config import Config, ConfigError, load_config
from migrate.report import FORMATS, finding_message, location, render_findings
from migrate.words import plural

# Start-up is part of every run (pre-commit hooks, `--help`): rich (live progress, tables, diff colours),
# libcst and the rules, and torch (`verify`, `migrate`) are imported where a command first needs them.
# The help is typer's plain one: it lists flags as flags and costs no rich import.
EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_ERRORS, EXIT_INTERNAL = 0, 1, 2, 3, 4

app = typer.Typer(
    name="torch-migrate",
    help="Migrate legacy PyTorch training code to modern idioms, and prove the migration changed nothing.",
    no_args_is_help=True,
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

PathsArg = typer.Argument(..., metavar="PATH...", help="Files or directories (recursing into *.py and *.ipynb, honouring .gitignore).")
SelectOpt = typer.Option(None, "--select", metavar="CODES", help="Comma-separated rule codes or prefixes to run (default: all).")
IgnoreOpt = typer.Option(None, "--ignore", metavar="CODES", help="Comma-separated rule codes or prefixes to skip.")
ExcludeOpt = typer.Option(None, "--exclude", metavar="GLOB", help="Glob (gitignore syntax) of paths to skip; repeatable.")
JobsOpt = typer.Option(0, "-j", "--jobs", metavar="N", help="Worker processes (default: one per core).")
NoCacheOpt = typer.Option(False, "--no-cache", help="Do not read or write the result cache.")
NoNotebooksOpt = typer.Option(False, "--no-notebooks", help="Skip Jupyter notebooks (*.ipynb), also named ones.")
MinTorchOpt = typer.Option(None, "--min-torch", metavar="X.Y", help="Oldest torch the code must keep running on: no fix needs a newer one (default: `min-torch` in [tool.torch-migrate], else the installed torch).")


def _error(message: str) -> None:
    """One plain ``error:`` line on stderr, as for every usage error."""
    print(f"error: {message}", file=sys.stderr)


def _codes(values: Optional[List[str]]) -> tuple:
    return tuple(code for value in values or () for code in value.split(",") if code.strip())


def _version(value: bool) -> None:
    if value:
        print(f"torch-migrate {migrate.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """Migrate legacy PyTorch training code to modern idioms, and prove the migration changed nothing."""


def _options(paths, mode, select, ignore, unsafe_fixes=False, no_notebooks=False, min_torch=None) -> driver.Options:
    """Command-line choices over ``[tool.torch-migrate]`` defaults."""
    config = _config(paths)
    try:
        target = config.target_torch(min_torch)
    except ConfigError as error:
        _error(str(error))
        raise typer.Exit(EXIT_USAGE)
    return driver.Options(mode, _codes(select) or tuple(config.select), _codes(ignore) or tuple(config.ignore),
                          unsafe_fixes, tuple((p, tuple(c)) for p, c in config.per_file_ignores.items()),
                          notebooks=config.notebooks and not no_notebooks, min_torch=target)


def _config(paths) -> Config:
    try:
        return load_config([Path(p) for p in paths])
    except ConfigError as error:
        _error(str(error))
        raise typer.Exit(EXIT_USAGE)


def _run(paths, exclude, options, jobs, no_cache, quiet) -> List[driver.FileResult]:
    from migrate.cache import Cache
    from migrate.discover import discover

    exclude = list(exclude or ()) + _config(paths).exclude
    try:
        files = discover([Path(p) for p in paths], exclude, notebooks=options.notebooks)
        options.check_codes()  # an unknown code is a usage error; the rules load only if a file needs them
    except (FileNotFoundError, ValueError) as error:
        _error(str(error))
        raise typer.Exit(EXIT_USAGE)
    cache = None if no_cache else Cache(options)
    if quiet or len(files) <= 50 or not sys.stderr.isatty():
        return driver.run(files, options, jobs, cache)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("migrating", total=len(files))
        return driver.run(files, options, jobs, cache, progress=lambda: bar.advance(task))


def _report_errors(results) -> int:
    status = EXIT_OK
    for result in results:
        if result.error:
            print(result.error, file=sys.stderr)
            status = max(status, EXIT_INTERNAL if result.internal else EXIT_ERRORS)
    return status


@app.command()
def rewrite(
    paths: List[str] = PathsArg,
    diff: bool = typer.Option(False, "--diff", "--dry-run", help="Write nothing; print a unified diff."),
    check: bool = typer.Option(False, "--check", help="Write nothing; list files that would change; exit 1 if any."),
    select: Optional[List[str]] = SelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes that change behaviour."),
    exclude: Optional[List[str]] = ExcludeOpt,
    jobs: int = JobsOpt,
    change_map: Optional[Path] = typer.Option(None, "--change-map", metavar="FILE", help="Write the applied fixes (file, line, rule) as JSON, for `verify` attribution."),
    no_cache: bool = NoCacheOpt,
    no_notebooks: bool = NoNotebooksOpt,
    min_torch: Optional[str] = MinTorchOpt,
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print only errors (and the diff with --diff)."),
) -> None:
    """Rewrite legacy idioms in place (or show the diff with --diff).

    Examples:

    \b
      torch-migrate rewrite train.py          # rewrite in place
      torch-migrate rewrite --diff src/       # review first
      torch-migrate rewrite --check .         # CI: exit 1 if anything is left to migrate
    """
    mode = driver.DIFF if (diff or check) else driver.WRITE
    options = _options(paths, mode, select, ignore, unsafe_fixes, no_notebooks, min_torch)
    results = _run(paths, exclude, options, jobs, no_cache, quiet)
    changed = [r for r in results if r.changed]
    if diff:
        _print_diffs(changed)
    if check:
        for result in changed:
            print(f"would rewrite {result.path}")
    if change_map is not None:
        entries = [dict(entry, file=r.path) for r in changed for entry in r.changes]
        change_map.write_text(json.dumps(entries, indent=1))
    status = _report_errors(results)
    if not quiet:  # the report: on stdout, unless stdout carries the diff or the list of files
        _print_summary(results, changed, written=mode == driver.WRITE,
                       stream=sys.stderr if diff or check else sys.stdout)
    if check and changed:
        status = max(status, EXIT_FOUND)
    raise typer.Exit(status)


def _print_diffs(changed) -> None:
    """Coloured on a terminal; otherwise each file's own bytes (a latin-1 or CRLF diff still applies)."""
    if not sys.stdout.isatty():
        sys.stdout.flush()
        for result in changed:
            sys.stdout.buffer.write(result.patch)
        return
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console(highlight=False, soft_wrap=True)
    for result in changed:
        console.print(Syntax(result.diff, "diff", theme="ansi_dark", background_color="default"))


def _print_summary(results, changed, written: bool, stream) -> None:
    fixes = driver.applied_fixes(results)
    left = [(r.path, f) for r in results for f in r.findings if not f.applied]
    for path, finding in left:
        unsafe = " [unsafe fix, not applied: --unsafe-fixes applies it]" if finding.fixable and finding.unsafe else ""
        print(f"{location(path, finding)}: {finding.code} {finding_message(finding)}{unsafe}", file=stream)
    verb = "rewrote" if written else "would rewrite"
    applied = ", ".join(f"{code} x{count}" for code, count in sorted(fixes.items())) or "none"
    errors = sum(1 for result in results if result.error)
    print(f"{verb} {len(changed)} of {plural(len(results), 'file')}; "
          f"{plural(sum(fixes.values()), 'fix', 'fixes')} ({applied}); "
          f"{plural(len(left), 'finding')} left for review (see `torch-migrate check`)"
          + (f"; {plural(errors, 'file')} not processed (on stderr)" if errors else ""), file=stream)


@app.command()
def check(
    paths: List[str] = PathsArg,
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=f"Output format: {', '.join(FORMATS)}."),
    select: Optional[List[str]] = SelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    exclude: Optional[List[str]] = ExcludeOpt,
    jobs: int = JobsOpt,
    no_cache: bool = NoCacheOpt,
    no_notebooks: bool = NoNotebooksOpt,
    min_torch: Optional[str] = MinTorchOpt,
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print only the findings (no hints, no summary)."),
) -> None:
    """Report autograd hazards and every legacy idiom that rewrite would change.

    Suppress one line with a trailing `# torch-migrate: ignore[TM601]` comment.

    Examples:

    \b
      torch-migrate check src/
      torch-migrate check --format sarif . > results.sarif
      torch-migrate check --select TM6 train.py    # hazards only
    """
    if output_format not in FORMATS:
        _error(f"unknown format {output_format!r}; choose from {', '.join(FORMATS)}")
        raise typer.Exit(EXIT_USAGE)
    options = _options(paths, driver.LINT, select, ignore, no_notebooks=no_notebooks, min_torch=min_torch)
    results = _run(paths, exclude, options, jobs, no_cache, quiet)
    status = _report_errors(results)
    sys.stdout.write(render_findings(results, output_format, quiet=quiet))
    if any(r.findings for r in results):
        status = max(status, EXIT_FOUND)
    raise typer.Exit(status)


@app.command()
def rules(code: Optional[str] = typer.Argument(None, metavar="[CODE]", help="Show one rule's documentation "
                                                 "and examples (e.g. TM302)."),
          markdown: bool = typer.Option(False, "--markdown", help="Print the README's Markdown table.")) -> None:
    """List every rule: code, kind, summary; with a CODE, that rule's documentation and examples."""
    if code is not None:
        from migrate.docs import rule_page  # imports the rules (libcst), never torch

        page = rule_page(code)
        if page is None:
            _error(f"unknown rule code: {code} (`torch-migrate rules` lists them)")
            raise typer.Exit(EXIT_USAGE)
        sys.stdout.write(page)
        return
    if markdown:
        from migrate.docs import rules_table  # it reads the rule tables of two families

        sys.stdout.write(rules_table())
        return
    from rich.console import Console
    from rich.table import Table

    from migrate.rule_catalog import RULES  # generated from the rules, which would import libcst

    table = Table("code", "kind", "name", "torch", "summary")
    for column in table.columns[:4]:  # the summary wraps; codes, names and versions stay whole
        column.no_wrap = True
    for row in RULES:
        table.add_row(*row)
    Console(highlight=False).print(table)


@app.command("config")
def show_config(path: Path = typer.Argument(Path("."), metavar="PATH", help="Where to look for pyproject.toml.")) -> None:
    """Show the effective [tool.torch-migrate] configuration and where it came from."""
    sys.stdout.write(json.dumps(_config([path]).to_dict(), indent=1) + "\n")


def _register_harness_commands() -> None:
    """Defining ``verify`` and ``migrate`` imports neither torch nor the harness: they load when they run."""
    from migrate.harness.cli import verify
    from migrate.workflow import migrate_command

    app.command()(verify)
    app.command("migrate")(migrate_command)


_register_harness_commands()


def main() -> None:
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        _run_app()
    except SystemExit:
        # The run is over and its status decided: SIGINT/SIGTERM are ignored from here on, in every thread.
        # Otherwise one arriving while the interpreter shuts down (it resets its handlers to the default)
        # would end a finished run as killed (exit -2 or -15).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise


def _run_app() -> None:
    """The command, ending in ``sys.exit`` with its status whichever way it ends."""
    try:
        status = app(prog_name="torch-migrate", standalone_mode=False)
    except KeyboardInterrupt:
        sys.exit(130)  # quietly, as a shell expects of Ctrl-C
    except typer.Abort:  # Ctrl-D at a question
        _error("aborted")
        sys.exit(1)
    except typer.TyperException as error:  # a usage error: plain lines, as the commands' own errors
        _usage_error(error)
    sys.exit(status or 0)


def _usage_error(error) -> None:
    """``torch-migrate`` alone prints the help; any other usage error its usage line and one ``error:`` line."""
    context = getattr(error, "ctx", None)
    if type(error).__name__ == "NoArgsIsHelpError":
        print(error.format_message(), file=sys.stderr)
    else:
        if context is not None:
            print(f"{context.get_usage()}\nTry '{context.command_path} -h' for help.\n", file=sys.stderr)
        _error(error.format_message())
    sys.exit(getattr(error, "exit_code", EXIT_USAGE))
