"""The path of one file from disk through the rules and back to disk.

discover -> read/decode -> pre-filter on trigger strings -> parse once and run
every selected rule (``codemods.engine``) -> check the new text
(``migrate.guard.check_rewrite``: it compiles, and every statement no applied fix reported
is still there, unchanged) -> again on what that pass would write, until a
pass changes nothing (``PASSES``) -> atomic write. Files are spread over a
process pool; results that cannot change between runs, the final text of
every file written included, are served from a content-hash cache
(``migrate.cache``). SIGINT/SIGTERM stop a run between files (``Interrupted``);
a file is only ever replaced whole. ``TORCH_MIGRATE_DEBUG=1`` logs every parse
and every cache hit on stderr.
"""
from __future__ import annotations

import ast
import contextlib
import fnmatch
import functools
import io
import os
import queue
import signal
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple

import codemods
from codemods import repo
from codemods.commands import is_command_file
from codemods.finding import Finding
from migrate import python2
from migrate.prefilter import triggered
from migrate.cache import Cache, cache_key
from migrate.guard import (Anchor, BrokenRewrite, Uncompilable, check_rewrite, placed, python_name,
                           text_lines)
from migrate.source import (Source, SourceError, Unwritable, atomic_write, compiles, decode, read_source,
                            remove_stale_temps)

if TYPE_CHECKING:
    import libcst as cst
# The engine (libcst and the rules), notebooks and the process pool are imported where they are first needed,
# not here: a run that the cache serves entirely never loads them, and they would be most of such a run's time.

PASSES = 4
"""The most times ``rewrite`` runs the rules over one file.

A fix may leave code that another rule (or the same one, elsewhere) fixes:
pass 1 unwraps ``Variable(x.data[0], requires_grad=True)``, pass 2 sees what
the unwrapped argument has become. Each pass reads what the previous one
would write, as a fresh run would; the pass that applies nothing proves the
file settled, and its findings are what the cache keeps for the written text
(so a second run parses nothing). Chains of fixes feeding each other are at
most two deep in the fuzz (``bench/fuzz.py``), so three fixing passes and the
settling one leave a pass of margin; a file still changing after that has a
cycle (fixes undoing each other, or one matching its own output) that more
passes would not end. It is an internal error naming those rules, and the file
is left as the last pass wrote it: every pass passed the guard on its own.
"""
_DEBUG = bool(os.environ.get("TORCH_MIGRATE_DEBUG"))


def debug(message: str) -> None:
    """One ``torch-migrate: debug:`` line on stderr when ``TORCH_MIGRATE_DEBUG`` is set."""
    if _DEBUG:
        sys.stderr.write(f"torch-migrate: debug: {message}\n")


WRITE, DIFF, LINT = "write", "diff", "lint"


@dataclass(frozen=True)
class Options:
    mode: str = WRITE  # WRITE: rewrite in place; DIFF: compute the new text only; LINT: report, fix nothing
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    unsafe_fixes: bool = False
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # (glob, codes) from the config
    notebooks: bool = True  # discover *.ipynb beside *.py
    min_torch: Tuple[int, ...] = ()  # the oldest torch the project supports (--min-torch); () = the installed one

    def rules(self) -> List[type]:
        return codemods.select_rules(self.select or None, self.ignore or None)

    def check_codes(self) -> None:
        """ValueError for a ``--select``/``--ignore`` code no rule has, from the rule catalog: the rules
        themselves (and libcst) are only loaded when a file needs them."""
        from migrate.rule_catalog import RULES

        codes = [row[0] for row in RULES]
        unknown = [prefix for prefix in (s.strip().upper() for s in self.select + self.ignore)
                   if prefix and not any(code.startswith(prefix) for code in codes)]
        if unknown:
            raise ValueError(f"unknown rule code(s): {', '.join(unknown)}")

    def ignored(self, path: Path) -> Tuple[str, ...]:
        """The rule codes (prefixes) that ``per-file-ignores`` switches off for ``path``."""
        if not self.per_file_ignores:
            return ()
        posix = path.as_posix()
        return tuple(code for pattern, codes in self.per_file_ignores
                     if fnmatch.fnmatch(posix, pattern) or fnmatch.fnmatch(posix, f"*/{pattern}")
                     for code in codes)

    def rules_for(self, path: Path, rules: Sequence[type]) -> Sequence[type]:
        """``rules`` less those that ``per-file-ignores`` switches off for ``path``."""
        ignored = self.ignored(path)
        return [rule for rule in rules if not rule.code.startswith(ignored)] if ignored else rules

    def settled(self, findings: Sequence[Finding]) -> bool:
        """Whether a file with these findings is one ``rewrite`` leaves as it is (no fix it would apply)."""
        return not any(f.fixable and (self.unsafe_fixes or not f.unsafe) for f in findings)


@dataclass
class FileResult:
    path: str
    findings: List[Finding] = field(default_factory=list)
    changed: bool = False
    patch: bytes = b""  # DIFF mode: a unified diff of the file's bytes, which `git apply`/`patch -p1` take
    error: Optional[str] = None  # "path:line:col: message": the file was left untouched (or as its last good pass
    # left it: an internal error after the first pass)
    internal: bool = False  # the error is ours (a rule produced broken code), not the file's
    changes: List[dict] = field(default_factory=list)  # change map: applied fixes, in the new text's lines
    digest: str = ""  # the cache key of the file as it was read
    written: Optional[Tuple[str, List[Finding]]] = None  # WRITE mode: the cache key and findings of the new text

    @property
    def cacheable(self) -> bool:
        return not self.changed and self.error is None and not any(f.applied for f in self.findings)

    @property
    def diff(self) -> str:
        """``patch`` for display (bytes that are not UTF-8, such as latin-1 text, shown escaped)."""
        return self.patch.decode("utf-8", "backslashreplace")


class Interrupted(SystemExit):
    """SIGINT or SIGTERM stopped ``run``: exit status 128 + the signal number, and no traceback."""

    def __init__(self, signum: int):
        super().__init__(128 + signum)
        self.signum = signum


# -- one file -------------------------------------------------------------------
_PARSER_STACK = 512 * 1024 * 1024


_big_stack: dict = {}  # pid -> the queue of that process's big-stack thread (a forked child starts its own)


def _serve(requests: "queue.SimpleQueue") -> None:
    if hasattr(signal, "pthread_sigmask"):  # signals go to the main thread, which is waiting to take them
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    while True:
        function, args, kwargs, reply = requests.get()
        try:
            reply.put((True, function(*args, **kwargs)))
        except BaseException as error:  # re-raised in the caller's thread
            reply.put((False, error))


def _on_big_stack(function: Callable, *args, **kwargs):
    """``function(*args, **kwargs)`` on this process's thread with a 512 MiB stack (virtual memory,
    touched as used).

    libcst's native parser recurses once per nesting level: on the main
    thread's 8 MiB stack a file with ~5,000 nested parentheses is a segfault
    that would end the whole run; here it parses and is refused as usual. The
    thread lives as long as the process (a daemon: an interrupted run does not
    wait for it): starting one per file costs more than parsing a small file.
    """
    requests = _big_stack.get(os.getpid())
    if requests is None:
        requests = _big_stack[os.getpid()] = queue.SimpleQueue()
        previous = threading.stack_size(_PARSER_STACK)
        try:
            threading.Thread(target=_serve, args=(requests,), daemon=True, name="big-stack").start()
        finally:
            threading.stack_size(previous)
    reply: queue.SimpleQueue = queue.SimpleQueue()
    requests.put((function, args, kwargs, reply))
    ok, value = reply.get()
    if not ok:
        raise value
    return value


def _blame(error: BaseException) -> str:
    """The rule module an exception came from, for internal-error messages."""
    import traceback

    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        parts = Path(frame.filename).parts
        if "codemods" in parts:
            return f"{Path(frame.filename).stem}.py:{frame.lineno}"
    return "engine"


def _syntax_error(text: str, error: cst.ParserSyntaxError) -> Tuple[int, int, str]:
    """``(line, col, message)`` for a file libcst cannot parse, in Python's own words where it agrees.

    libcst's positions are often off (the end of the statement, or the next
    line). Python reads the file as 3.6 first, so that ``async=`` (which
    TM203 fixes) is not the error named, then as itself if the file needs
    newer syntax.
    """
    for version in ((3, 6), None):
        try:
            ast.parse(text, feature_version=version)
        except SyntaxError as python:
            if version is None or "only supported in Python" not in python.msg:
                return python.lineno or 1, python.offset or 1, f"syntax error: {python.msg}"
        except (ValueError, MemoryError, RecursionError):
            break
        else:
            break
    message = error.message.splitlines()[0] if error.message else "invalid syntax"
    return error.editor_line, error.editor_column, f"syntax error (libcst): {message}"


def _verify(source: Source, text: str, findings: Sequence[Finding], statements=None) -> Tuple[List[Anchor], bytes]:
    """``check_rewrite``, then the new bytes in the file's own encoding."""
    anchors = check_rewrite(source.text, text, findings, statements)
    try:
        return anchors, source.encode(text)
    except UnicodeEncodeError as error:
        line = text.count("\n", 0, error.start) + 1
        raise BrokenRewrite(line, f"produced text that {source.encoding} cannot encode ({error.reason})",
                            in_new=True) from None
    except Unwritable as error:  # a notebook whose cells cannot take the new text
        raise BrokenRewrite(error.line, error.message, internal=error.internal, in_new=True) from None


def _run_rules(shown: Path, text: str, rules: Sequence[type], options: Optional[Options] = None, fix: bool = True,
               real: Optional[Path] = None, tree=None):
    """``run_rules`` on the big-stack thread: the one place files are parsed (logged under TORCH_MIGRATE_DEBUG);
    ``real`` is the file's place in the repository index (what other files give it and read from it); ``tree``
    the tree a previous pass made of ``text``."""
    from codemods.engine import run_rules

    if options is None:
        outcome = _on_big_stack(run_rules, text, rules)
    else:
        outcome = _on_big_stack(run_rules, text, rules, unsafe_fixes=options.unsafe_fixes,
                                min_torch=options.min_torch, fix=fix,
                                repo=repo.view(real) if real is not None else None, tree=tree)
    debug(f"{'parse' if outcome.parsed else 'reuse'} {shown}")
    return outcome


def _culprits(shown: Path, source: Source, rules: Sequence[type], options: Options) -> str:
    """The rules that break the rewrite (or raise) on their own; all of them if none does alone.

    Text rules are tried alone, then each tree rule together with them (the
    file may not parse without them). Only called when something went wrong.
    """
    from codemods.engine import TextRule

    def breaks(subset: List[type]) -> bool:
        try:
            outcome = _run_rules(shown, source.text, subset, options, real=source.path)
            if outcome.text != source.text:
                _verify(source, outcome.text, outcome.findings)
        except Exception:  # BrokenRewrite, or the rule's own exception
            return True
        return False

    text_rules = [rule for rule in rules if issubclass(rule, TextRule)]
    guilty = [rule.code for rule in text_rules if breaks([rule])]
    if not guilty:
        guilty = [rule.code for rule in rules if rule not in text_rules and breaks(text_rules + [rule])]
    return ", ".join(guilty) if guilty else "rules " + ", ".join(rule.code for rule in rules) + " together"


def _inherited(shown: Path, source: Source, rules: Sequence[type]) -> bool:
    """Whether the file itself does not compile on this Python, even once the text rules (there to make
    legacy files parse) are applied: then a rewrite that does not compile is not the rules' fault."""
    from codemods.engine import TextRule

    text_rules = [rule for rule in rules if issubclass(rule, TextRule)]
    baseline = _run_rules(shown, source.text, text_rules).text if text_rules else source.text
    return not compiles(source.text) and not compiles(baseline)


class _Refused(Exception):
    """A pass that cannot be used: ``message`` is the file's error line; ``findings`` as far as they got."""

    def __init__(self, message: str, internal: bool = False, findings: Sequence[Finding] = ()):
        super().__init__(message)
        self.message, self.internal, self.findings = message, internal, list(findings)


@dataclass
class _Pass:
    """One run of the rules over ``source``: its findings (positions in ``source.text``) and, if a fix
    applied, the new text, where the untouched statements went, and the file that text makes."""

    source: Source
    findings: List[Finding]
    text: str
    anchors: List[Anchor] = field(default_factory=list)
    new: Optional[Source] = None  # the new bytes, read back as the next pass (and a fresh run) reads them
    tree: object = None  # the libcst tree of ``new.text`` when the fixes made it (the next pass need not parse)


def _one_pass(shown: Path, source: Source, options: Options, rules: Sequence[type], tree=None) -> _Pass:
    """Filter the rules on ``source``'s text, run them (on ``tree``, the previous pass's tree of that text, if
    given), and guard the result; ``_Refused`` when it must not be written."""
    active = triggered(options.rules_for(shown, rules), source.text, source.path)
    # Python 2 is reported whatever the rules: a file none of them concerns costs a compile to know.
    legacy_python = python2.find_before_libcst(source.text) if active else python2.find(source.text)
    if legacy_python:
        raise _Refused(f"{shown}:{source.where(legacy_python.line, legacy_python.col)}: {legacy_python.message}")
    if not active:
        return _Pass(source, [], source.text)
    import libcst as cst

    try:
        outcome = _run_rules(shown, source.text, active, options, fix=options.mode != LINT, real=source.path,
                             tree=tree)
    except cst.ParserSyntaxError as error:
        found = python2.find(source.text)
        line, col, message = (found.line, found.col, found.message) if found else _syntax_error(source.text, error)
        raise _Refused(f"{shown}:{source.where(line, col)}: {message}") from None
    except RecursionError as error:  # nesting deeper than a walk can follow (or, if the file is flat, a rule bug)
        raise _Refused(f"{shown}:1:1: too deeply nested to analyse (recursion limit reached in {_blame(error)})")
    except Exception as error:  # a bug in a rule must not stop the other files
        raise _Refused(f"{shown}:1:1: internal error: {_culprits(shown, source, active, options)} raised "
                       f"{type(error).__name__} ({_blame(error)}): {error}; file left untouched", internal=True)
    if outcome.text == source.text:
        return _Pass(source, outcome.findings, source.text)
    try:
        anchors, new_bytes = _verify(source, outcome.text, outcome.findings, outcome.statements)
        new = _read_back(source, new_bytes)
    except BrokenRewrite as error:
        if isinstance(error, Uncompilable) and _inherited(shown, source, active):
            error = BrokenRewrite(error.line, f"the file does not compile on {python_name()}, before or after the "
                                  f"rewrite ({error.reason})", internal=False, in_new=True)
        culprits = f"internal error: {_culprits(shown, source, active, options)} " if error.internal else ""
        where = source.where(error.line, 1, outcome.text if error.in_new else None)
        raise _Refused(f"{shown}:{where}: {culprits}{error.message}; file left untouched", error.internal,
                       outcome.findings) from None
    # the text read back is the text the tree prints (not so when a notebook's cells are joined anew)
    return _Pass(source, outcome.findings, outcome.text, anchors, new, outcome.module if new.text == outcome.text
                 else None)


def _read_back(source: Source, raw: bytes) -> Source:
    """The file ``raw`` would be, read as ``read_source`` reads it (a notebook's cells joined anew)."""
    try:
        if type(source) is Source:
            return decode(source.path, raw)
        from migrate.notebook import read_notebook

        return read_notebook(source.path, raw)
    except SourceError as error:
        raise BrokenRewrite(error.line, f"produced a file that cannot be read back ({error.message})",
                            in_new=True) from None


def process_file(shown: Path, real: Path, options: Options, rules: Sequence[type],
                 write: Optional[Callable[..., None]] = None) -> FileResult:
    """Run the rules on one file until they change nothing; in WRITE mode replace it atomically if it changed.

    ``write`` replaces ``write_now`` (same arguments) where the write may finish later: a worker hands it to
    its writer thread, and the result is complete once that write is done."""
    result = FileResult(str(shown))
    try:
        source = read_source(real)
    except SourceError as error:
        result.error = f"{shown}:{error.line}:{error.col}: {error.message}"
        return result
    if is_command_file(shown.name) and shown.suffix not in (".py", ".ipynb"):  # never cached: its answer
        # depends on the scripts it starts, which its own bytes do not tell
        return _process_commands(shown, real, source, options, triggered(options.rules_for(shown, rules),
                                                                               source.text), result)
    result.digest = cache_key(source.raw, shown, options, repo.fingerprint(real, source.raw))
    passes, settled, failure = _fixed_point(shown, source, options, rules)
    if failure is not None:
        result.error, result.internal = failure.message, failure.internal
    if not passes:
        result.findings = source.localize(settled.findings if settled else failure.findings)
        return result
    result.findings = source.localize(passes[0].findings) + [
        finding for step in passes[1:] for finding in step.source.localize(step.findings) if finding.applied]
    result.changes = _change_map(passes)
    result.changed = True
    final = passes[-1].new
    if options.mode == DIFF:
        result.patch = (_patch(shown, source.raw, final.raw) if type(source) is Source
                        else _notebook_diff(shown, source, final))
    elif options.mode == WRITE:
        written = None if settled is None else (cache_key(final.raw, shown, options,
                                                          repo.fingerprint(real, final.raw)),
                                                final.localize(settled.findings))
        (write or write_now)(result, shown, real, source.raw, final.raw, written)
    return result


def _fixed_point(shown: Path, source: Source, options: Options,
                 rules: Sequence[type]) -> Tuple[List[_Pass], Optional[_Pass], Optional[_Refused]]:
    """The passes that changed the text (each guarded on its own, each reading what the one before would
    write), the pass that changed nothing (None if none did within ``PASSES``), and why it stopped early.

    A failure after the first pass, a cycle or no end within ``PASSES`` is an internal error; the file is
    then left as the last pass that changed it wrote it.
    """
    passes: List[_Pass] = []
    while len(passes) < PASSES:
        try:
            step = (_one_pass(shown, passes[-1].new, options, rules, passes[-1].tree) if passes
                    else _one_pass(shown, source, options, rules))
        except _Refused as refused:
            if not passes:
                return passes, None, refused
            return passes, None, _Refused(f"{refused.message.replace('; file left untouched', '')} (pass "
                                          f"{len(passes) + 1}, on the rules' own output); file left as pass "
                                          f"{len(passes)} wrote it", internal=True)
        if step.new is None:
            return passes, step, None
        if any(step.text == earlier.source.text for earlier in passes):  # back to an earlier text: a cycle
            return passes, None, _Refused(
                f"{shown}:1:1: internal error: the rewrite does not settle: {_applied_codes(passes[-1:] + [step])} "
                f"undo each other's fixes (pass {len(passes) + 1} gave back an earlier text); file left as pass "
                f"{len(passes)} wrote it", internal=True)
        passes.append(step)
    return passes, None, _Refused(f"{shown}:1:1: internal error: the rewrite does not settle: "
                                  f"{_applied_codes(passes[-1:])} still fire on their own output after {PASSES} "
                                  f"passes; file left as pass {PASSES} wrote it", internal=True)


def _applied_codes(passes: Sequence[_Pass]) -> str:
    return ", ".join(sorted({f.code for step in passes for f in step.findings if f.applied}))


def _change_map(passes: Sequence[_Pass]) -> List[dict]:
    """Each applied fix's lines in the final text, with its rule: a pass's entries are placed in its new text
    and carried through the later passes (in a notebook, the cells of its own pass)."""
    summaries = {rule.code: rule.summary for rule in codemods.all_rules()}
    changes: List[dict] = []
    for step in passes:
        old_lines, new_lines = len(text_lines(step.source.text)), len(text_lines(step.text))
        if changes and type(step.source) is Source:
            carried = placed(step.anchors, [(c["line"], c["end_line"]) for c in changes], old_lines, new_lines)
            changes = [dict(change, line=line, end_line=end) for change, (line, end) in zip(changes, carried)]
        applied = [f for f in step.findings if f.applied]
        spans = placed(step.anchors, [(f.line, f.end_line or f.line) for f in applied], old_lines, new_lines)
        entries = [{"line": line, "end_line": end, "code": f.code, "summary": summaries.get(f.code, f.message)}
                   for f, (line, end) in zip(applied, spans)]
        changes += step.source.localize_changes(entries, step.text, step.findings)
    return changes


def _notebook_diff(shown: Path, old, new) -> bytes:
    """The cells that differ between two reads of a notebook, as ``NotebookSource.diff`` shows them."""
    from migrate.notebook import cell_diff

    cells = {cell.index: cell for cell in old.cells}
    after = {cell.index: cell.source for cell in new.cells}
    return cell_diff(shown, {index: cell.source for index, cell in cells.items()},
                     {index: after.get(index, cell.source) for index, cell in cells.items()},
                     {index: cell.number for index, cell in cells.items()}).encode("utf-8")


def _read_script(command_file: Path) -> Callable[[str], Optional[str]]:
    """Reads a Python script that a command file starts, looked up from the file's folder and the folders
    above it (a ``scripts/train.sh`` is usually run from the repository's top); each script read once per file."""
    @functools.lru_cache(maxsize=None)
    def read(name: str) -> Optional[str]:
        for folder in (command_file.parent, *command_file.parent.parents[:3]):
            try:
                return (folder / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        return None
    return read


def _process_commands(shown: Path, real: Path, source: Source, options: Options, active: Sequence[type],
                      result: FileResult) -> FileResult:
    """A shell script, Makefile or README: only command rules (``codemods.commands``), on its text."""
    from codemods.commands import CommandContext, run_command_rules

    ctx = CommandContext(options.min_torch, options.unsafe_fixes, _read_script(real))
    text, findings = run_command_rules(source.text, active, ctx, fix=options.mode != LINT)
    result.findings = findings
    if text == source.text:
        return result
    result.changed = True
    new_bytes = source.encode(text)
    if options.mode == DIFF:
        result.patch = _patch(shown, source.raw, new_bytes)
    elif options.mode == WRITE:
        result.error = _write(shown, real, source.raw, new_bytes)
        result.changed = result.error is None
    return result


def _patch(shown: Path, old: bytes, new: bytes) -> bytes:
    """A unified diff of the bytes (BOM, encoding and line endings as they are) with headers as git
    writes them (``a/``/``b/`` for relative paths; a tab after a name with a space, which ends the
    name for ``patch``) and the marker for a last line without a newline."""
    import difflib

    name = os.fsencode(shown.as_posix())
    headers = (name, name) if shown.is_absolute() else (b"a/" + name, b"b/" + name)
    if b" " in name:
        headers = tuple(header + b"\t" for header in headers)
    lines = difflib.diff_bytes(difflib.unified_diff, io.BytesIO(old).readlines(), io.BytesIO(new).readlines(),
                               *headers)
    return b"".join(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n" for line in lines)


def write_now(result: FileResult, shown: Path, real: Path, original: bytes, new_bytes: bytes,
              written: Optional[tuple]) -> None:
    """Write the file and record the outcome in ``result``: an error line, or the cache entry ``written``
    (the new bytes' key and findings) once the new text is in place."""
    failed = _write(shown, real, original, new_bytes)
    if failed:
        result.error, result.internal, result.changed = failed, False, False
    else:
        result.written = written


def _write(shown: Path, real: Path, original: bytes, new_bytes: bytes) -> Optional[str]:
    """Write unless the file became read-only, vanished or changed since it was read; an error line otherwise."""
    try:
        if not os.stat(real).st_mode & 0o222:
            return f"{shown}:1:1: file is read-only; not rewritten"
        if real.read_bytes() != original:
            return f"{shown}:1:1: file changed while it was being migrated; not rewritten (run again)"
        atomic_write(real, new_bytes)
    except FileNotFoundError:
        return f"{shown}:1:1: file vanished while it was being migrated; not rewritten"
    except OSError as error:
        return f"{shown}:1:1: cannot write: {error.strerror or error}"
    return None


def applied_fixes(results: Sequence[FileResult]) -> Counter:
    """Applied fixes per rule code, over a run's results."""
    return Counter(f.code for r in results for f in r.findings if f.applied)


def run(
    files: Sequence[Tuple[Path, Path]],
    options: Options,
    jobs: int = 0,
    cache: Optional[Cache] = None,
    progress: Optional[Callable[[], None]] = None,
) -> List[FileResult]:
    """Process ``files`` (from ``discover``); results in input order.

    Cached results are served first; the rest go to a pool of ``jobs``
    workers (<= 0: one per core). Small runs stay in this process because
    starting workers costs more than they would save. In WRITE mode, temporary
    files that a killed run left next to the files are removed first.

    SIGINT/SIGTERM raise ``Interrupted`` once the files being written are
    done; the other files are not touched. If a worker dies, the files it had
    not returned get an internal error.
    """
    if options.mode == WRITE:
        for directory in sorted({real.parent for _, real in files}):
            remove_stale_temps(directory)
    repo.index_files([real for _, real in files])  # names that travel between files (``from model import *``)
    results: List[Optional[FileResult]] = [None] * len(files)
    pending = []
    for index, (shown, real) in enumerate(files):
        served = None
        if cache is not None:
            try:
                data = real.read_bytes()
                digest = cache_key(data, shown, options, repo.fingerprint(real, data))
            except OSError:
                pass  # reported by the worker that tries to read it
            else:
                served = cache.get(digest)
                if served is not None and options.mode != LINT and not options.settled(served):
                    served = None  # `check` found fixes to apply: `rewrite` must apply them
        if served is None:
            pending.append(index)
        else:
            debug(f"cached {shown}")
            results[index] = FileResult(str(shown), findings=served, digest=digest)
            if progress:
                progress()
    jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    jobs = min(jobs, max(1, len(pending) // 8))
    broken: tuple = ()  # what a dead worker raises
    from migrate import pool

    with pool.interruptible(), pool.collect_less(), contextlib.ExitStack() as quiet:
        if jobs == 1:
            rules = options.rules() if pending else []
            computed = ((index, process_file(*files[index], options, rules)) for index in pending)
            executor = None
        else:
            from concurrent.futures import ProcessPoolExecutor
            from concurrent.futures.process import BrokenProcessPool
            from multiprocessing import get_context

            broken = (BrokenProcessPool,)
            context = get_context("fork")
            stop = context.Event()
            executor = ProcessPoolExecutor(jobs, mp_context=context, initializer=pool.init_worker,
                                           initargs=(options, stop, os.getpid()))
            quiet.enter_context(pool.quiet_cancel_race())  # left after the shutdown below
        try:
            if executor is not None:
                batches = pool.batches([files[index][1] for index in pending], jobs)
                done = executor.map(pool.work_batch, [[files[pending[i]] for i in batch] for batch in batches])
                computed = ((pending[i], result) for batch, results in zip(batches, done)
                            for i, result in zip(batch, results))
            for index, result in computed:
                results[index] = result
                if cache is not None and result.cacheable:
                    cache.put(result.digest, result.findings)
                if cache is not None and result.written is not None:
                    cache.put(*result.written)
                if progress:
                    progress()
        except broken:  # a worker died (a crash in native code): say so for every file left
            for index in pending:
                if results[index] is None:
                    shown = files[index][0]
                    results[index] = FileResult(str(shown), error=f"{shown}:1:1: internal error: a worker process "
                                                f"died, file not processed (`-j 1` names the file that kills it)",
                                                internal=True)
        except BaseException:
            if executor is not None:
                stop.set()  # each worker finishes the file in hand and skips the rest
            raise
        finally:
            if executor is not None:
                executor.shutdown(cancel_futures=True)
    if cache is not None:
        cache.save()
    return results
