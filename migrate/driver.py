"""The path of one file from disk through the rules and back to disk.

discover -> read/decode -> pre-filter on trigger strings -> parse once and run
every selected rule (``codemods.engine``) -> re-parse/compile the new text ->
atomic write. Files are spread over a process pool; results that cannot
change between runs are served from a content-hash cache (``migrate.cache``).
"""
from __future__ import annotations

import difflib
import fnmatch
import hashlib
import os
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

import libcst as cst

import codemods
from codemods.base import Finding
from codemods.engine import run_rules
from migrate.cache import Cache
from migrate.source import SourceError, atomic_write, read_source

WRITE, DIFF, LINT = "write", "diff", "lint"


@dataclass(frozen=True)
class Options:
    mode: str = WRITE  # WRITE: rewrite in place; DIFF: compute the new text only; LINT: report, fix nothing
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    unsafe_fixes: bool = False
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # (glob, codes) from the config

    def rules(self) -> List[type]:
        return codemods.select_rules(self.select or None, self.ignore or None)

    def rules_for(self, path: Path, rules: Sequence[type]) -> Sequence[type]:
        """``rules`` less those that ``per-file-ignores`` switches off for ``path``."""
        posix = path.as_posix()
        ignored = tuple(code for pattern, codes in self.per_file_ignores
                        if fnmatch.fnmatch(posix, pattern) or fnmatch.fnmatch(posix, f"*/{pattern}")
                        for code in codes)
        return [rule for rule in rules if not rule.code.startswith(ignored)] if ignored else rules


@dataclass
class FileResult:
    path: str
    findings: List[Finding] = field(default_factory=list)
    changed: bool = False
    diff: str = ""
    error: Optional[str] = None  # "path:line:col: message": the file was left untouched
    internal: bool = False  # the error is ours (a rule produced broken code), not the file's
    changes: List[dict] = field(default_factory=list)  # change map: applied fixes, in the new text's lines
    digest: str = ""  # content hash, for the cache

    @property
    def cacheable(self) -> bool:
        return not self.changed and self.error is None


def _trigger_filter(rules: Sequence[type], text: str) -> List[type]:
    return [rule for rule in rules if any(trigger in text for trigger in rule.triggers)]


def _blame(error: BaseException) -> str:
    """The rule module an exception came from, for internal-error messages."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        parts = Path(frame.filename).parts
        if "codemods" in parts:
            return f"{Path(frame.filename).stem}.py:{frame.lineno}"
    return "engine"


def _new_line_ranges(old: List[str], new: List[str], findings: List[Finding]) -> List[dict]:
    """Where each applied fix landed in the new text (old line -> new line through the diff)."""
    mapping = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for offset, line in enumerate(range(i1, i2)):
            mapping[line + 1] = min(j1 + offset, max(j2 - 1, j1)) + 1
    rule_summaries = {rule.code: rule.summary for rule in codemods.ALL_RULES}
    return [
        {"line": mapping.get(f.line, f.line), "end_line": mapping.get(f.end_line, f.end_line), "code": f.code,
         "summary": rule_summaries.get(f.code, f.message)}
        for f in findings if f.applied
    ]


def process_file(shown: Path, real: Path, options: Options, rules: Sequence[type]) -> FileResult:
    """Run the rules on one file; in WRITE mode replace it atomically when it changed."""
    result = FileResult(str(shown))
    try:
        source = read_source(real)
    except SourceError as error:
        result.error = f"{shown}:{error.line}:{error.col}: {error.message}"
        return result
    result.digest = hashlib.sha1(source.raw).hexdigest()
    active = _trigger_filter(options.rules_for(shown, rules), source.text)
    if not active:
        return result
    try:
        outcome = run_rules(source.text, active, unsafe_fixes=options.unsafe_fixes, fix=options.mode != LINT)
    except cst.ParserSyntaxError as error:
        message = error.message.splitlines()[0] if error.message else "invalid syntax"
        result.error = f"{shown}:{error.raw_line}:{error.raw_column + 1}: syntax error: {message}"
        return result
    except RecursionError:
        result.error = f"{shown}:1:1: too deeply nested to parse"
        return result
    except Exception as error:  # a bug in a rule must not stop the other files
        result.error = f"{shown}:1:1: internal error in {_blame(error)}: {type(error).__name__}: {error}"
        result.internal = True
        return result
    result.findings = outcome.findings
    if outcome.text == source.text:
        return result
    applied = sorted({f.code for f in outcome.findings if f.applied})
    try:
        compile(outcome.text, str(shown), "exec", dont_inherit=True)
        new_bytes = source.encode(outcome.text)
    except (SyntaxError, ValueError, UnicodeEncodeError) as error:
        line = getattr(error, "lineno", None) or 1
        result.error = (f"{shown}:{line}:1: internal error: rules {', '.join(applied)} produced invalid code "
                        f"({error}); file left untouched")
        result.internal = True
        return result
    old_lines = source.text.splitlines(keepends=True)
    new_lines = outcome.text.splitlines(keepends=True)
    result.changed = True
    result.changes = _new_line_ranges(old_lines, new_lines, outcome.findings)
    if options.mode == DIFF:
        result.diff = "".join(
            difflib.unified_diff(old_lines, new_lines, *_diff_headers(shown))
        )
    elif options.mode == WRITE:
        result.error = _write(shown, real, source.raw, new_bytes)
        result.changed = result.error is None
    return result


def _diff_headers(shown: Path) -> Tuple[str, str]:
    """git-style ``a/``/``b/`` headers for relative paths, so ``git apply`` takes the diff."""
    name = shown.as_posix()
    return (name, name) if shown.is_absolute() else (f"a/{name}", f"b/{name}")


def _write(shown: Path, real: Path, original: bytes, new_bytes: bytes) -> Optional[str]:
    """Write unless the file became read-only or changed since it was read; an error line otherwise."""
    try:
        if not os.stat(real).st_mode & 0o222:
            return f"{shown}:1:1: file is read-only; not rewritten"
        if real.read_bytes() != original:
            return f"{shown}:1:1: file changed while it was being migrated; not rewritten (run again)"
        atomic_write(real, new_bytes)
    except OSError as error:
        return f"{shown}:1:1: cannot write: {error.strerror or error}"
    return None


# -- the process pool ----------------------------------------------------------
_WORKER: dict = {}


def _init_worker(options: Options) -> None:
    _WORKER["options"] = options
    _WORKER["rules"] = options.rules()


def _work(paths: Tuple[Path, Path]) -> FileResult:
    return process_file(paths[0], paths[1], _WORKER["options"], _WORKER["rules"])


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
    starting workers costs more than they would save.
    """
    results: List[Optional[FileResult]] = [None] * len(files)
    pending = []
    for index, (shown, real) in enumerate(files):
        findings = None
        if cache is not None:
            try:
                digest = hashlib.sha1(real.read_bytes()).hexdigest()
                findings = cache.get(digest)
            except OSError:
                pass  # reported by the worker that tries to read it
        if findings is None:
            pending.append(index)
        else:
            results[index] = FileResult(str(shown), findings=findings, digest=digest)
            if progress:
                progress()
    jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    jobs = min(jobs, max(1, len(pending) // 8))
    if jobs == 1:
        rules = options.rules()
        computed = (process_file(*files[index], options, rules) for index in pending)
        pool = None
    else:
        chunksize = max(1, min(32, len(pending) // (jobs * 8)))
        pool = ProcessPoolExecutor(jobs, mp_context=get_context("fork"), initializer=_init_worker,
                                   initargs=(options,))
        computed = pool.map(_work, [files[index] for index in pending], chunksize=chunksize)
    try:
        for index, result in zip(pending, computed):
            results[index] = result
            if cache is not None and result.cacheable:
                cache.put(result.digest, result.findings)
            if progress:
                progress()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if cache is not None:
        cache.save()
    return results
