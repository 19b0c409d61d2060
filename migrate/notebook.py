"""Jupyter notebooks (``.ipynb``) as source files: read, shown to the rules, written back, run.

Reading. A notebook is JSON; ``nbformat`` says which format version it is (only
nbformat 4 is taken: a version 3 file would have to be converted, which
rewrites all of it) and validates it against that version's schema, so a broken
notebook is refused with a position before any rule sees it.

What the rules see. The code cells, in order, joined into one module so that
names flow across cells (``Variable`` imported in cell 1 and used in cell 7 is
resolved) and every rule runs once. Before each cell but the first stands a
marker statement (``__nb_cell_7__``): unlike a comment, which libcst attaches to
the next statement and loses when a fix removes that statement (an unused
import), a statement of its own survives every fix, and the guard checks it is
unchanged. IPython syntax is masked: every line magic, shell escape, help
request or automagic line (and a ``from __future__`` import, legal at the top of
any cell but not in the middle of a module) becomes a placeholder statement
(``__nb_magic_3__``) at the same indentation, which parses, keeps the line count and columns of all
other lines, and that no rule touches; it is restored byte for byte afterwards
(re-indented by the same amount if a fix re-indented its block). A cell magic
line (``%%time``) is kept out of the module; its body is Python for
``%%time``/``%%timeit``/``%%capture``/``%%prun``, while cells of any other cell
magic (``%%bash``, ``%%html``, ``%%writefile``, unknown ones) are left out
whole. A line is IPython syntax by its shape and only where it starts a logical
line (a ``%d`` inside a triple-quoted string, or a ``!= 2`` continuing a
bracket, stays Python). The placeholder passes on the names the line mentions
(``__nb_magic_3__(y, Variable, x)``), so the analyses see them used.

Writing. Not with ``nbformat.write``: it serialises the whole document its own
way (indent 1, its key order, no ``\\u`` escapes, list sources, a final
newline), so a notebook written by another tool or version would change
everywhere, outputs included. Instead only the JSON values of the changed
cells' ``"source"`` are replaced in the original text, in the layout that value
had (a string stays a string; a list keeps its line breaks and indentation, and
lines that did not change keep their exact JSON spelling; ``\\u`` escapes are
used if the file used them); every other byte is kept, and each new value is
read back and must be exactly the new source. A notebook with nothing to change
is never written. The file goes through the same atomic write as a ``.py``.

Running (``verify``/``migrate --entry nb.ipynb``). ``runnable`` writes the
code cells as one script (``# %% cell N`` between cells) for the harness:
``%time``/``%%time``/``%%capture``/``%%prun`` bodies run, every other magic,
shell escape and help line becomes ``pass`` and is named in a note; the script
starts in the notebook's folder (as Jupyter does) with matplotlib's
non-interactive backend, so ``%matplotlib`` and ``plt.show()`` are harmless.
"""
from __future__ import annotations

import bisect
import codecs
import difflib
import functools
import io
import itertools
import json
import keyword
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from migrate.source import Source, SourceError, Unwritable, byte_position, compiles

SUFFIX = ".ipynb"
MAX_BYTES = 64 * 1024 * 1024  # larger notebooks are refused: such a size is outputs (images), not code
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})  # their body is Python
RUN_CELL_MAGICS = frozenset({"time", "capture", "prun"})  # `verify` runs their body (not timeit's N times)
RUN_LINE_MAGICS = frozenset({"time"})  # `%time stmt`: `verify` runs the statement
# IPython's line magics and default aliases: a one-line cell such as `ls -la` or `pip install x` calls one.
AUTOMAGICS = frozenset("""
    alias alias_magic autoawait autocall automagic autosave bookmark cat cd clear colors conda config connect_info
    cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext
    loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic man matplotlib mkdir more mv notebook
    page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat
    pylab qtconsole quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc
    set_env store sx system tb time timeit unalias unload_ext uv who who_ls whos xdel xmode""".split())

_ESCAPED = re.compile(r"[ \t]*(?:[%!?/,;])")  # %magic, !shell, ?help, /autocall, ,autoquote, ;autoquote
_HELP = re.compile(r"[ \t]*%{0,2}[\w.*]+\?{1,2}[ \t]*")  # obj?  obj.attr??  %magic?  np.*load*?
_ASSIGNED = re.compile(r"[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[!%]")  # x = !ls
_AUTOMAGIC = re.compile(r"([A-Za-z_]\w*)((?:[ \t(].*)?)")
_FUTURE = re.compile(r"from[ \t]+__future__[ \t]+import\b")
_SHAPES = re.compile(r"^[ \t]*[%!?/,;]|^from[ \t]+__future__|\?[ \t]*\r?$|=[ \t]*[!%]", re.M)  # may be one of them
_OUTSIDE_STRING = re.compile(r"""\"\"\"|'''|["'#()\[\]{}]""")
_IN_STRING = {quote: re.compile(r"\\.|" + re.escape(quote), re.S) for quote in ('"', "'", '"""', "'''")}
_CELL_MAGIC = re.compile(r"[ \t]*%%([\w.]+)")
_LINE_MAGIC = re.compile(r"([ \t]*)%([\w.]+)[ \t]?(.*)", re.S)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_IDENTIFIER = re.compile(r"(?<![.\w])[^\W\d]\w*")


def is_notebook(path: Path) -> bool:
    return path.suffix == SUFFIX


def _lines(text: str) -> List[str]:
    """Lines as Python counts them, each with its own line ending."""
    return io.StringIO(text, newline="").readlines()


def _ending(line: str) -> str:
    match = _NEWLINE.search(line)
    return match.group() if match else ""


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


@dataclass(frozen=True)
class Mask:
    """One IPython line as the rules see it: ``statement`` at ``indent`` instead of ``line``."""

    statement: str  # the placeholder name, called with the names the line mentions: `__nb_magic_3__(x, Variable)`
    indent: str
    line: str  # the original line, without its line ending
    row: int  # 0-based, in the cell's body
    continued: bool = False  # a backslash continuation of the line before

    def column(self, col: int) -> int:
        """The column (1-based) in ``line`` of what is at ``col`` of the masked line: a name it mentions."""
        name = _IDENTIFIER.match(self.indent + self.statement, col - 1)
        found = name and re.search(rf"(?<![.\w]){re.escape(name.group())}(?!\w)", self.line)
        return found.start() + 1 if found else len(self.indent) + 1


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based position among all cells (markdown and raw included), as in `cell N`
    index: int  # position in the notebook's "cells" array
    source: str  # as in the file (a list source joined)
    header: str  # a cell magic line with its line ending ("%%time\n"), kept out of the module, or ""
    masks: Tuple[Mask, ...]
    start: int = 0  # the module line its first body line is on

    @property
    def body(self) -> str:
        return self.source[len(self.header):]


# -- masking IPython syntax ------------------------------------------------------
class _Lexer:
    """Just enough of Python's lexer to tell whether the next line starts a logical line: open brackets,
    open strings (triple-quoted, or continued with a backslash) and backslash continuations."""

    def __init__(self):
        self.depth, self.quote, self.continued = 0, "", False

    @property
    def at_start(self) -> bool:
        return not (self.depth or self.quote or self.continued)

    def feed(self, text: str) -> None:
        """Read one line (without its line ending)."""
        position, comment = 0, False
        while position < len(text):
            if self.quote:
                match = _IN_STRING[self.quote].search(text, position)  # an escaped pair, or the closing quote
                if match is None:
                    break
                position = match.end()
                if match.group() == self.quote:
                    self.quote = ""
                continue
            match = _OUTSIDE_STRING.search(text, position)
            if match is None:
                break
            token, position = match.group(), match.end()
            if token == "#":
                comment = True
                break
            if token in "([{":
                self.depth += 1
            elif token in ")]}":
                self.depth = max(0, self.depth - 1)
            else:
                self.quote = token
        backslash = text.endswith("\\") and not comment
        if len(self.quote) == 1 and not backslash:
            self.quote = ""  # an unterminated string: the parse reports it
        self.continued = backslash and not self.quote


def _automagic(lines: List[str], bound: Callable[[], Set[str]]) -> bool:
    """Whether a cell is one automagic line (`ls -la`, `pip install x`, `pwd`): IPython calls a magic for a
    one-line cell that starts with its name, unless a variable has that name or the line assigns to it."""
    code = []
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            code.append(line.strip())
            if len(code) > 1:
                return False
    match = _AUTOMAGIC.fullmatch(code[0]) if code else None
    if not match or match.group(1) not in AUTOMAGICS or match.group(2).lstrip()[:1] in ("=", ","):
        return False
    return not compiles(code[0]) or match.group(1) not in bound()


def _candidates(body: str, lines: List[str], bound: Callable[[], Set[str]]) -> List[List[int]]:
    """Groups of line numbers (0-based) to mask, each a line and its continuation lines: IPython syntax that
    starts a logical line (a `%d` in a triple-quoted string, or a `!= 2` continuing a bracket, is Python),
    and `from __future__` imports (legal at the top of any cell, but not in the middle of one module; no rule
    needs them: on Python 3 they change nothing a rule looks at). Lines are lexed only as far as the last
    one of such a shape."""
    automagic = _automagic(lines, bound)
    if not automagic and not _SHAPES.search(body):
        return []  # the usual cell
    shaped = [row for row, line in enumerate(lines) if _shaped(line.rstrip("\r\n"), automagic)]
    groups, row, lexer = [], 0, _Lexer()
    while shaped and row <= shaped[-1]:
        text = lines[row].rstrip("\r\n")
        if not (lexer.at_start and _shaped(text, automagic)):
            lexer.feed(text)
            row += 1
            continue
        future = _FUTURE.match(text)
        group, statement = [row], _Lexer()  # an IPython line goes on after a backslash; an import, in brackets too
        statement.feed(text)
        while group[-1] + 1 < len(lines) and (lines[group[-1]].rstrip("\r\n").endswith("\\")
                                              or (future and statement.depth)):
            group.append(group[-1] + 1)
            statement.feed(lines[group[-1]].rstrip("\r\n"))
        groups.append(group)
        row = group[-1] + 1
    return groups


def _shaped(text: str, automagic: bool) -> bool:
    return bool(_FUTURE.match(text) or _ESCAPED.match(text) or _HELP.fullmatch(text) or _ASSIGNED.match(text)
                or (automagic and text.strip() and not text.lstrip().startswith("#")))


def _mentioned(line: str) -> List[str]:
    """The names a masked line mentions (not after a dot, not keywords), in order: the placeholder passes them
    on, so the analyses see them used (an import a magic needs is not removed as unused, a tensor an
    optimizer built in `%time` gets is not taken for unused)."""
    names = (match.group() for match in _IDENTIFIER.finditer(line))
    return list(dict.fromkeys(name for name in names if not keyword.iskeyword(name) and name.isidentifier()))


def mask(body: str, namer: Iterator[str], bound: Callable[[], Set[str]] = set) -> Tuple[str, Tuple[Mask, ...]]:
    """``body`` with its IPython lines replaced by placeholder statements (names from ``namer``), and the
    masks; ``bound`` gives the names the notebook binds (asked only for a one-line cell that might be an
    automagic). A continuation line takes its first line's indentation (its own may not be a valid one)."""
    lines = _lines(body)
    masks = []
    for group in _candidates(body, lines, bound):
        indent = _indent(lines[group[0]])
        for position, row in enumerate(group):
            line = lines[row].rstrip("\r\n")
            mentioned = _mentioned(line[len(indent):] if position == 0 else line)
            name = next(namer)
            statement = f"{name}({', '.join(mentioned)})" if mentioned else name
            masks.append(Mask(statement, indent, line, row, continued=position > 0))
            lines[row] = f"{indent}{statement}{_ending(lines[row])}"
    return "".join(lines), tuple(masks)


def _placeholders(prefix: str) -> Iterator[str]:
    return (f"{prefix}magic_{count}__" for count in itertools.count())


# -- reading ----------------------------------------------------------------------
def _load(path: Path, raw: bytes) -> Tuple[str, str, dict]:
    """(encoding, JSON text, parsed notebook) of a valid nbformat-4 notebook; SourceError otherwise."""
    encoding = "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise SourceError(path, f"a notebook is UTF-8 JSON; cannot decode: {error.reason}",
                          *byte_position(raw, error.start)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(path, f"not a notebook: invalid JSON ({error.msg})", error.lineno, error.colno) from None
    except RecursionError:
        raise SourceError(path, "not a notebook: JSON nested too deeply") from None
    if not isinstance(data, dict) or "nbformat" not in data:
        raise SourceError(path, "not a notebook: JSON without an `nbformat` version")
    import nbformat

    try:
        major, _ = nbformat.reader.get_version(data)
    except (TypeError, ValueError, AttributeError):
        raise SourceError(path, "not a notebook: `nbformat` is not a version number") from None
    if major != 4:
        raise SourceError(path, f"nbformat {major} notebook: only nbformat 4 is supported; convert it first "
                          f"(`jupyter nbconvert --to notebook --nbformat 4 {path.name}`)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MissingIDFieldWarning and the like: read-only use, nothing to repair
        try:
            nbformat.validate(data)
        except nbformat.ValidationError as error:
            where = "/".join(str(part) for part in error.absolute_path) or "the top level"
            message = str(error.message).splitlines()[0][:200]
            raise SourceError(path, f"not a valid nbformat 4 notebook: {message} (at {where})") from None
    return encoding, text, data


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def _is_python(data: dict) -> bool:
    metadata = data.get("metadata") or {}
    language = (metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name")
    return language is None or str(language).lower() in ("python", "python3", "ipython")


def _prefix(data: dict) -> str:
    """A name prefix for markers and placeholders that no cell uses."""
    sources = "".join(_text(cell.get("source", "")) for cell in data["cells"])
    prefix = "__nb_"
    while prefix in sources:
        prefix += "_"
    return prefix


@dataclass(frozen=True)
class NotebookSource(Source):
    """A notebook as a source file: ``text`` is its code cells joined into one masked module."""

    json_text: str = ""
    cells: Tuple[CodeCell, ...] = ()
    left_out: Tuple[Tuple[int, str], ...] = ()  # (cell number, its cell magic line): cells not shown to the rules
    prefix: str = "__nb_"
    _last: dict = field(default_factory=dict, compare=False, repr=False)  # the last rewritten text split up

    # -- positions
    def _starts(self, text: Optional[str]) -> List[int]:
        """The module line each cell's body starts on (in ``text``, a rewritten module, if given)."""
        if text is None:
            return [cell.start for cell in self.cells]
        marker = re.compile(rf"^[ \t]*{re.escape(self.prefix)}cell_\d+__$", re.M)
        starts, line, position = [1], 1, 0
        for match in marker.finditer(text):
            line += len(_NEWLINE.findall(text, position, match.start()))
            position = match.start()
            starts.append(line + 1)
        return starts

    def _locate(self, line: int, starts: List[int]) -> Tuple[int, int]:
        """(index in ``cells``, line in that cell) of a module line."""
        index = min(max(0, bisect.bisect_right(starts, line) - 1), len(self.cells) - 1)
        return index, line - starts[index] + 1 + (1 if self.cells[index].header else 0)

    def where(self, line: int, col: int, text: Optional[str] = None) -> str:
        if not self.cells:
            return f"{line}:{col}"
        index, line = self._locate(line, self._starts(text))
        return f"cell {self.cells[index].number}:{line}:{col}"

    def localize(self, findings: list) -> list:
        """Findings at cell positions; on a masked IPython line, the column of the name in the real line."""
        masked = {(cell.start + item.row): item for cell in self.cells for item in cell.masks}
        starts = self._starts(None)
        located = []
        for finding in findings:
            index, line = self._locate(finding.line, starts)
            end = self._locate(finding.end_line, starts)[1] if finding.end_line else 0
            col = masked[finding.line].column(finding.col) if finding.line in masked else finding.col
            located.append(replace(finding, cell=self.cells[index].number, line=line, end_line=end, col=col))
        return located

    def localize_changes(self, changes: List[dict], text: str, findings: list) -> List[dict]:
        """Change-map entries in the cell of the fix they come from (the applied ``findings``, in order): the
        driver places them in the new text by the statements around them, which may be past a cell's end."""
        old_starts, starts = self._starts(None), self._starts(text)
        ends = [start - 2 for start in starts[1:]] + [len(_lines(text))]
        located = []
        for change, finding in zip(changes, [finding for finding in findings if finding.applied]):
            index = self._locate(finding.line, old_starts)[0]
            first = min(max(change["line"], starts[index]), ends[index])
            last = min(max(change["end_line"], first), ends[index])
            located.append(dict(change, cell=self.cells[index].number, line=self._locate(first, starts)[1],
                                end_line=self._locate(last, starts)[1]))
        return located

    # -- back to cells
    def pieces(self, text: str) -> List[str]:
        """Each cell's part of a (rewritten) module, its IPython lines still masked; Unwritable if the
        cell markers are not all there, in order, at the top level."""
        marker = re.compile(rf"{re.escape(self.prefix)}cell_\d+__")
        if re.search(rf"^[ \t]+{marker.pattern}$", text, re.M):
            text = _split_withs(text, marker)
        parts = re.split(rf"^{re.escape(self.prefix)}cell_(\d+)__\n", text, flags=re.M)
        if [int(number) for number in parts[1::2]] != [cell.number for cell in self.cells[1:]]:
            raise Unwritable(1, "a fix crossed a cell boundary, so the cells cannot be told apart after the "
                                "rewrite")
        return parts[0::2]

    def sources(self, text: str) -> Dict[int, str]:
        """The new source of every code cell shown to the rules (index in "cells" -> text), each changed cell
        checked to parse on its own (its IPython lines masked). Kept for the last ``text`` asked about:
        ``encode`` and ``diff`` ask for the same one."""
        if self._last.get("text") is text:
            return self._last["sources"]
        sources = {}
        for cell, piece, start in zip(self.cells, self.pieces(text), self._starts(text)):
            body = _unmask(piece, cell, start)
            if not cell.body.endswith(("\n", "\r")):
                body = body.rstrip("\r\n")  # the newline the join added, and blank lines a fix left at the end
            sources[cell.index] = cell.header + body
            if sources[cell.index] != cell.source:
                _check_parses(cell, piece, start)
        self._last.update(text=text, sources=sources)
        return sources

    def encode(self, text: str) -> bytes:
        """The notebook's new bytes: the changed cells' sources spliced into the JSON."""
        sources = self.sources(text)
        changed = {cell.index: sources[cell.index] for cell in self.cells if sources[cell.index] != cell.source}
        return splice(self.json_text, changed).encode(self.encoding)

    def diff(self, shown: Path, text: str) -> bytes:
        return cell_diff(shown, {cell.index: cell.source for cell in self.cells}, self.sources(text),
                         {cell.index: cell.number for cell in self.cells}).encode("utf-8")


def _split_withs(text: str, marker: "re.Pattern") -> str:
    """``text`` with each top-level ``with`` block that holds cell markers split at them.

    A fix may wrap a run of top-level statements in ``with torch.no_grad():``
    (TM102's module-level inference region); in a notebook that run can span
    cells, but a block cannot. Entering the same context again in the next cell
    is what a person would write, and is the same for ``no_grad`` (a notebook
    never had a ``with`` across cells, so every such block was made by a fix).
    The blocks are found with ``ast`` (the guard already parsed this text) and
    cut as text: the header line goes before each part that has statements.
    """
    import ast

    lines = _lines(text)
    out: List[str] = []
    done = 0
    for node in ast.parse(text).body:
        inner = node.body if isinstance(node, ast.With) else []
        cuts = [statement.lineno - 1 for statement in inner if isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Name) and marker.fullmatch(statement.value.id)]
        if not cuts:
            continue
        first, body = node.lineno - 1, inner[0].lineno - 1
        header = lines[first:max(item.context_expr.end_lineno for item in node.items)]  # a fix's one-line header
        out += lines[done:first]
        starts = {statement.lineno - 1 for statement in inner}
        position = first + len(header)
        for cut in [*cuts, node.end_lineno]:
            part = lines[position:cut]
            if any(row in starts for row in range(max(position, body), cut)):
                out += header
            out += part
            if cut < node.end_lineno:
                out.append(lines[cut].lstrip(" \t"))  # the marker, back at the top level
            position = cut + 1
        done = node.end_lineno
    return "".join(out + lines[done:])


def _unmask(piece: str, cell: CodeCell, start: int) -> str:
    for item in cell.masks:
        found = list(re.finditer(rf"^([ \t]*){re.escape(item.statement)}$", piece, re.M))
        if len(found) != 1:
            raise Unwritable(start, f"a fix moved or removed the IPython line `{item.line.strip()}` "
                                    f"(cell {cell.number})")
        match = found[0]
        piece = piece[:match.start()] + _reindent(item, match.group(1), cell, start) + piece[match.end():]
    return piece


def _reindent(item: Mask, indent: str, cell: CodeCell, start: int) -> str:
    """The masked line, moved by as much as a fix moved its placeholder."""
    if indent == item.indent:
        return item.line
    if indent.startswith(item.indent):
        return indent[len(item.indent):] + item.line
    removed = item.indent[len(indent):] if item.indent.startswith(indent) else None
    if removed is None or not item.line.startswith(removed):
        raise Unwritable(start, f"a fix re-indented the IPython line `{item.line.strip()}` (cell {cell.number}) "
                                f"in a way that cannot be repeated")
    return item.line[len(removed):]


def _check_parses(cell: CodeCell, piece: str, start: int) -> None:
    """The per-cell guard: a changed cell, with its IPython lines masked, must parse on its own."""
    import ast

    try:
        ast.parse(piece)
    except SyntaxError as error:
        raise Unwritable(start + max(0, (error.lineno or 1) - 1),
                         f"cell {cell.number} would not parse after the rewrite ({error.msg})", internal=True) from None


def _bound_names(sources: Sequence[str]) -> Set[str]:
    """Names the cells that parse as they are bind anywhere (assigned, imported, defined)."""
    import ast

    bound = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
    return bound


def check_size(path: Path, size: int) -> None:
    """Refuse a notebook too big to be code with its outputs (before it is read, where the size is known)."""
    if size > MAX_BYTES:
        raise SourceError(path, f"notebook is {size / 2**20:.0f} MiB, over the {MAX_BYTES // 2**20} MiB limit "
                                f"(outputs?); clear its outputs first (`jupyter nbconvert --clear-output --inplace "
                                f"{path.name}`)")


def read_notebook(path: Path, raw: bytes) -> NotebookSource:
    """A notebook ready for the rules; SourceError if it is not a readable nbformat-4 notebook."""
    check_size(path, len(raw))
    encoding, json_text, data = _load(path, raw)
    prefix = _prefix(data)
    namer = _placeholders(prefix)
    code = [(index, _text(cell["source"])) for index, cell in enumerate(data["cells"] if _is_python(data) else ())
            if cell["cell_type"] == "code"]
    bound = functools.lru_cache(maxsize=None)(lambda: _bound_names([source for _, source in code]))
    cells, left_out, parts, line = [], [], [], 1
    for index, source in code:
        lines = _lines(source)
        first = lines[0] if lines else ""
        magic = _CELL_MAGIC.match(first)
        header = first if magic else ""
        if magic and magic.group(1) not in PYTHON_CELL_MAGICS:
            left_out.append((index + 1, first.rstrip("\r\n")))
            continue
        body, masks = mask(source[len(header):], namer, bound)
        if parts:
            parts.append(f"{prefix}cell_{index + 1}__\n")
            line += 1
        cells.append(CodeCell(index + 1, index, source, header, masks, line))
        if body and not body.endswith(("\n", "\r")):
            body += "\n"
        parts.append(body)
        line += len(lines) - (1 if header else 0)  # masking keeps the lines
    return NotebookSource(path, raw, encoding, "".join(parts), json_text=json_text, cells=tuple(cells),
                          left_out=tuple(left_out), prefix=prefix)


# -- writing only what changed -------------------------------------------------------
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _source_spans(text: str) -> Dict[int, Tuple[int, int]]:
    """Where each cell's "source" value lies in the JSON text: cell index -> (start, end) offsets.

    The stdlib's decoder reads every value; this walk only steps over the
    delimiters of the top-level object, the "cells" array and each cell object
    (the text is known to be valid JSON).
    """
    decoder = json.JSONDecoder()
    spans: Dict[int, Tuple[int, int]] = {}

    def skip(pos: int) -> int:
        return _WHITESPACE.match(text, pos).end()

    def walk_object(pos: int, on_member) -> int:
        """Call ``on_member(key, value offset)`` (which returns the value's end) for each member of the
        object at ``pos``; return the offset after it."""
        pos = skip(pos + 1)
        while text[pos] != "}":
            key, pos = json.decoder.scanstring(text, pos + 1)
            pos = skip(on_member(key, skip(skip(pos) + 1)))
            if text[pos] == ",":
                pos = skip(pos + 1)
        return pos + 1

    def value_end(pos: int) -> int:
        return decoder.raw_decode(text, pos)[1]

    def top_member(key: str, pos: int) -> int:
        if key != "cells":
            return value_end(pos)
        pos, index = skip(pos + 1), 0
        while text[pos] != "]":
            pos = skip(walk_object(pos, lambda name, at, index=index: cell_member(index, name, at)))
            index += 1
            if text[pos] == ",":
                pos = skip(pos + 1)
        return pos + 1

    def cell_member(index: int, key: str, pos: int) -> int:
        end = value_end(pos)
        if key == "source":
            spans[index] = (pos, end)
        return end

    walk_object(skip(0), top_member)
    return spans


_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _uses_escapes(raw: str) -> bool:
    """Whether JSON text spells non-ASCII characters as ``\\uXXXX`` (Python's json.dump default) rather than as
    themselves (nbformat's); judged by the first non-ASCII character or escape found."""
    escape, literal = _NON_ASCII_ESCAPE.search(raw), _NON_ASCII.search(raw)
    if escape and literal:
        return escape.start() < literal.start()
    return bool(escape)


def _list_layout(raw: str, value: list) -> Tuple[str, str, str, Dict[str, str]]:
    """(opening, between, closing) whitespace of a non-empty JSON list of strings, and each element's
    spelling (so that unchanged lines keep theirs)."""
    decoder = json.JSONDecoder()
    spelled: Dict[str, str] = {}
    position = _WHITESPACE.match(raw, 1).end()
    separators = [raw[1:position]]
    for _ in value:
        element, end = decoder.raw_decode(raw, position)
        spelled.setdefault(element, raw[position:end])
        position = _WHITESPACE.match(raw, end).end()
        if raw[position] == ",":
            position = _WHITESPACE.match(raw, position + 1).end()
        separators.append(raw[end:position])
    opening, closing = separators[0], separators[-1]
    if len(separators) > 2:
        return opening, separators[1], closing, spelled
    return opening, "," + (opening if "\n" in opening else " " if opening else ""), closing, spelled


def _empty_list_layout(text: str, start: int) -> Tuple[str, str, str]:
    """(opening, between, closing) for a source that was ``[]`` at ``start``: the file's own indentation."""
    line_start = text.rfind("\n", 0, start) + 1
    unit = re.search(r"\n([ \t]+)\S", text)
    if not unit or not line_start:
        return "", ", ", ""  # all on one line
    newline = "\r\n" if text[:line_start].endswith("\r\n") else "\n"
    key_indent = _indent(text[line_start:start])
    inner = newline + key_indent + unit.group(1)
    return inner, "," + inner, newline + key_indent


def _render(text: str, start: int, end: int, new: str, file_escapes: bool) -> str:
    """``new`` as a JSON value laid out like the cell's old source value, ``text[start:end]``."""
    raw = text[start:end]
    old = json.loads(raw)
    escapes = _uses_escapes(raw) if _NON_ASCII.search(raw) or "\\u" in raw else file_escapes
    if isinstance(old, str):
        return json.dumps(new, ensure_ascii=escapes)
    lines = new.splitlines(True)  # nbformat's own split
    if not lines:
        return "[]"
    opening, between, closing, spelled = _list_layout(raw, old) if old else (*_empty_list_layout(text, start), {})
    return ("[" + opening + between.join(spelled.get(line) or json.dumps(line, ensure_ascii=escapes) for line in lines)
            + closing + "]")


def splice(json_text: str, changed: Dict[int, str]) -> str:
    """``json_text`` with the "source" of the cells in ``changed`` (index -> new source) replaced; every
    other character kept. Each new value must read back as its source (Unwritable otherwise); the rest of
    the document is the old text, a JSON value replaced by another one."""
    if not changed:
        return json_text
    spans = _source_spans(json_text)
    file_escapes = _uses_escapes(json_text)
    out, last = [], 0
    for index in sorted(changed):
        start, end = spans[index]
        rendered = _render(json_text, start, end, changed[index], file_escapes)
        if _text(json.loads(rendered)) != changed[index]:
            raise Unwritable(1, f"cell {index + 1}'s source did not read back as written", internal=True)
        out += [json_text[last:start], rendered]
        last = end
    out.append(json_text[last:])
    return "".join(out)


# -- showing what changed -----------------------------------------------------------
def cell_diff(shown: Path, old: Dict[int, str], new: Dict[int, str], numbers: Dict[int, int]) -> str:
    """A unified diff of each changed cell's source, the cell named in the file and hunk headers.

    Not a patch of the file (that would be a diff of JSON): the first line says so, and how to apply it.
    """
    name = shown.as_posix()
    prefixes = ("", "") if shown.is_absolute() else ("a/", "b/")
    out = [f"# {name}: a notebook; this is a per-cell diff of its code, not a patch: to apply it, run the same "
           f"command without --diff\n"]
    for index in sorted(old):
        if new.get(index, old[index]) == old[index]:
            continue
        label = f"cell {numbers[index]}"
        for line in difflib.unified_diff(_with_ends(old[index]), _with_ends(new[index]),
                                         f"{prefixes[0]}{name}:{label}", f"{prefixes[1]}{name}:{label}"):
            out.append(line.rstrip("\n") + f" {label}\n" if line.startswith("@@") else line)
    return "".join(out) if len(out) > 1 else ""


def _with_ends(text: str) -> List[str]:
    lines = text.splitlines(True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def diff_files(old: Path, new: Path, shown: Path) -> str:
    """``cell_diff`` of two versions of a notebook on disk (for ``migrate --diff``)."""
    before, after = (read_notebook(path, path.read_bytes()) for path in (old, new))
    new_sources = {cell.index: cell.source for cell in after.cells}
    return cell_diff(shown, {cell.index: cell.source for cell in before.cells}, new_sources,
                     {cell.index: cell.number for cell in before.cells})


# -- running a notebook as a script ---------------------------------------------------
_PROLOGUE = (  # Python 3.5 syntax: an --old-python may run it
    "import os as __nb_os, sys as __nb_sys; __nb_os.chdir({folder!r}); __nb_sys.path[0] = {folder!r}; "
    "__nb_os.environ.setdefault('MPLBACKEND', 'Agg'); del __nb_os, __nb_sys  # as in Jupyter; no plot windows\n"
    "try:\n    from IPython.display import display\nexcept ImportError:\n    display = print  # IPython's builtin\n"
)


def script(notebook: NotebookSource) -> Tuple[str, List[str]]:
    """The notebook's code cells as one script, and what of them it does not run (IPython lines, cells).

    ``from __future__`` imports move to the top, where a script needs them (IPython takes them in any cell).
    """
    future: List[str] = []
    skipped: List[Tuple[int, str]] = [(number, f"({header})") for number, header in notebook.left_out]
    parts = {number: f"# %% cell {number}: {header} (not run)\n" for number, header in notebook.left_out}
    for cell, piece in zip(notebook.cells, notebook.pieces(notebook.text)):
        magic = _CELL_MAGIC.match(cell.header)
        if magic and magic.group(1) not in RUN_CELL_MAGICS:
            skipped.append((cell.number, f"({cell.header.strip()})"))
            parts[cell.number] = f"# %% cell {cell.number}: {cell.header.strip()} (not run)\n"
            continue
        lines = _lines(piece)
        by_placeholder = {item.statement: item for item in cell.masks}
        for row, line in enumerate(lines):
            item = by_placeholder.get(line.strip())
            if item is None:
                continue
            run = _runnable_line(item)
            if run is None and not item.continued and not _FUTURE.match(item.line):
                skipped.append((cell.number, f"`{item.line.strip()}`"))
            lines[row] = item.indent + (run or "pass") + _ending(line)
        in_future = False
        for item in cell.masks:  # a future import and its continuation lines
            in_future = bool(_FUTURE.match(item.line)) or (item.continued and in_future)
            if in_future:
                future.append(item.line + "\n")
        text = "".join(lines)
        parts[cell.number] = f"# %% cell {cell.number}\n{text}" + ("" if not text or text.endswith("\n") else "\n")
    prologue = "".join(future) + _PROLOGUE.format(folder=str(notebook.path.parent.absolute()))
    return (prologue + "".join(parts[number] for number in sorted(parts)),
            [f"cell {number} {what}" for number, what in sorted(skipped, key=lambda item: item[0])])


def _runnable_line(item: Mask) -> Optional[str]:
    """The statement the script runs for one IPython line (`%time x = f()`: `x = f()`), or None."""
    magic = _LINE_MAGIC.fullmatch(item.line)
    if magic and magic.group(2) in RUN_LINE_MAGICS and magic.group(3).strip() and not item.line.endswith("\\") \
            and not item.continued:
        return magic.group(3).strip()
    return None


def runnable(path: Path, mirror: Path, scratch: Path) -> Tuple[Path, str]:
    """The harness's entry for ``path`` (in the run's ``mirror`` of the user's folder, or not): a ``.py``
    as it is; a notebook as its script, with a note on what of it does not run.

    The script goes beside the notebook when that folder is really inside the
    mirror (not a link back to the user's), else into ``scratch``; either way
    it starts in the notebook's folder. A notebook that cannot be read becomes a
    script that fails with the reason, so the run reports it.
    """
    if not is_notebook(path):
        return path, ""
    beside = path.parent.resolve()
    target = (path.parent if beside == mirror.resolve() or mirror.resolve() in beside.parents else scratch)
    target = target / f"{path.name}.py"
    try:
        text, skipped = script(read_notebook(path, path.read_bytes()))
    except SourceError as error:
        reason = f"{path.name}:{error.line}:{error.col}: {error.message}"
        target.write_text(f"raise SystemExit({reason!r})\n", encoding="utf-8")
        return target, f"notebook not readable: {reason}"
    target.write_text(text, encoding="utf-8")
    shown = ", ".join(skipped[:6]) + (f" and {len(skipped) - 6} more" if len(skipped) > 6 else "")
    return target, "notebook run as a script of its code cells" + (f"; not run: {shown}" if skipped else "")
