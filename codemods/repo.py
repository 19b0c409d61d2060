"""The repository index: which names travel between the files of the tree being rewritten.

A file-at-a-time model cannot see that ``train.py`` does ``from model import *`` and calls ``Variable``
that ``model.py`` imported from ``torch.autograd``. The index answers the two cross-file questions the
rules have, for one file (``view(path)`` -> ``FileView``):

- *what reaches it*: names it gets from modules of the tree through ``from m import *`` or
  ``from m import name`` that are, in the end, imports of an outside module (``torch.autograd.Variable``),
  so that ``Variable(x)`` in ``train.py`` resolves and is migrated there;
- *what leaves it*: names it imports that another file of the tree reads through it (a star import whose
  file uses the word, ``from model import Variable``, ``model.Variable``), so that no fix removes an import
  another file still needs.

**Cost**: no parse. Each ``.py`` file is read once and its import lines, top-level bindings and
``__all__`` are found with regular expressions; whether a file uses a name is a substring test, asked only
for the names that matter (an import a fix would remove, a name a star import brings). Measured in ``tests/test_repo_index.py`` (a few ms for a
small tree, well under a second for hundreds of files).

Over-approximations are safe in one direction only: a name is *kept* (an import left in place) on a
word match, but a name is *resolved* through a star import only when exactly one module of the tree
matches and the chain ends in one outside import that nothing in between rebinds.
"""
from __future__ import annotations

import os
import stat
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

# Each pattern starts with the newline before its line (the text gets one in front): the regex engine then
# only tries a match at newlines, several times faster than ``^`` with ``re.M`` on large files.
_IMPORTS = re.compile(r"\n[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)"
                      r"|import[ \t]+([^\n#;]+))")
_TOP_BINDING = re.compile(r"\n(?:(?:def|class)[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=(?!=))")
_ALL = re.compile(r"\n__all__[ \t]*=[ \t]*[\[(]([^\])]*)[\])]")
_STRING = re.compile(r"""['"](\w+)['"]""")
# ``torch.save(obj, 'path')`` / ``torch.save(obj, open('path', 'wb'))`` with a literal path (TM501: a file another
# file of the tree writes), and a ``torch.load`` of a literal path (for the cache key).
_SAVE = re.compile(r"""torch\.save\(""")
_SAVED_PATH = re.compile(r"""\s*(?:open\(\s*)?(['"])([^'"\n]+)\1""")
_LOAD = re.compile(r"""torch\.load\(\s*(?:open\(\s*)?(['"])([^'"\n]+)\1""")
_FROM = re.compile(rb"\n[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import\b")  # (dots, module) of a from-import


@dataclass
class _Module:
    path: Path
    name: str  # dotted, relative to the root of the tree
    package: bool  # an ``__init__.py``
    imports: Dict[str, str] = field(default_factory=dict)  # local name -> qualified (outside or inside the tree)
    stars: List[str] = field(default_factory=list)  # modules it star-imports (absolute dotted names)
    from_tree: Dict[str, Tuple[str, str]] = field(default_factory=dict)  # local -> (module, name) from the tree
    bound: Set[str] = field(default_factory=set)  # top-level defs, classes, assignments
    all_names: Optional[FrozenSet[str]] = None
    text: str = ""
    directory: str = ""
    star_readers: List["_Module"] = field(default_factory=list)  # modules that star-import this one
    attribute_readers: List[Tuple["_Module", str]] = field(default_factory=list)  # (module, alias): alias.X
    named: Set[str] = field(default_factory=set)  # names other modules from-import from this one
    saves: List[Tuple[str, str]] = field(default_factory=list)  # (normalized literal path, saved object's text)
    _reads: Dict[str, bool] = field(default_factory=dict)

    def reads(self, name: str) -> bool:
        """``name`` occurs as a word in the file (a cheap over-approximation of "uses it")."""
        found = self._reads.get(name)
        if found is None:
            found = self._reads[name] = name in self.text and re.search(
                rf"(?<![\w.]){re.escape(name)}\b", self.text) is not None
        return found


@dataclass(frozen=True)
class FileView:
    """What the index knows about one file (see the module docstring)."""

    reaching: Dict[str, str]  # local name -> the outside qualified name it is (through modules of the tree)
    keeps: Callable[[str], bool]  # another file of the tree reads this name through this file
    # (file, saved object's text) of every other file of the tree that ``torch.save``s to this literal path
    writers: Callable[[str], List[Tuple[str, str]]] = lambda path: []


EMPTY = FileView({}, lambda name: False)


def _saved(text: str, start: int) -> Optional[Tuple[str, str]]:
    """(normalized literal path, object text) of the ``torch.save(`` whose arguments start at ``start``: the
    object is everything up to the first comma outside brackets; ``None`` unless a literal path follows."""
    depth, index = 0, start
    while index < len(text) and index - start < 500:
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return None
            depth -= 1
        elif char == "," and depth == 0:
            path = _SAVED_PATH.match(text, index + 1)
            obj = " ".join(text[start:index].split())
            return (os.path.normpath(path.group(2)), obj) if path and obj else None
        index += 1
    return None


def _module_parts(path: Path) -> Tuple[List[str], bool]:
    """The parts of the dotted name of the module at ``path`` (a ``.py`` file; a package by its folder), and
    whether it is a package: a module goes by every suffix of them (``pkg.model``, ``model``). Split from the
    path's text, without ``Path``: the cache key asks it of every file of every run (``_tree_names``)."""
    parts = os.fspath(path).split(os.sep)
    parts[-1] = parts[-1][:-len(".py")]
    package = parts[-1] == "__init__"
    return (parts[:-1] if package else parts), package


class RepoIndex:
    def __init__(self, paths: Iterable[Path]):
        self.modules: Dict[str, List[_Module]] = {}  # dotted name (every suffix of the path) -> modules
        self.by_path: Dict[Path, _Module] = {}
        for path in paths:
            path = Path(path)
            if path.suffix != ".py":
                continue
            try:  # a FIFO or device named on the command line would block a read: regular files only
                if not stat.S_ISREG(os.stat(path).st_mode):
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
                real = path.resolve()
            except (OSError, RuntimeError):  # vanished, unreadable, a looping link
                continue
            parts, package = _module_parts(path)
            module = _Module(real, ".".join(parts), package, text=text)
            module.directory = str(module.path.parent)
            self.by_path[module.path] = module
            for start in range(len(parts)):
                self.modules.setdefault(".".join(parts[start:]), []).append(module)
        for module in self.by_path.values():
            self._scan(module)
        self._views: Dict[Path, FileView] = {}
        self._exports: Dict[int, Dict[str, Optional[str]]] = {}
        self._linked = False

    # -- one file's imports -------------------------------------------------------------------------
    def _scan(self, module: _Module) -> None:
        text = "\n" + module.text
        for match in _IMPORTS.finditer(text):
            dots, name, names, plain = match.groups()
            if plain is not None:
                self._plain_import(module, plain)
                continue
            source = self._absolute(module, dots, name)
            if source is None:
                continue
            names = names.strip().strip("()").replace("\\", " ")
            if names.strip() == "*":
                module.stars.append(source)
                continue
            for item in names.split(","):
                words = item.split()
                if not words or not re.fullmatch(r"\w+", words[0]):
                    continue
                local = words[2] if len(words) == 3 and words[1] == "as" else words[0]
                module.imports[local] = f"{source}.{words[0]}"
                if self._find(source, module) is not None:
                    module.from_tree[local] = (source, words[0])
        for match in _TOP_BINDING.finditer(text):
            module.bound.add(match.group(1) or match.group(2))
        found = _ALL.search(text)
        if found:
            module.all_names = frozenset(_STRING.findall(found.group(1)))
        if "torch.save(" in text:
            module.saves = [found for m in _SAVE.finditer(text) if (found := _saved(text, m.end())) is not None]

    @staticmethod
    def _plain_import(module: _Module, names: str) -> None:
        for item in names.split(","):
            words = item.replace("\\", " ").split()
            if words:
                full = words[0]
                local = words[2] if len(words) == 3 and words[1] == "as" else full.split(".")[0]
                module.imports[local] = full if len(words) == 3 else local

    @staticmethod
    def _absolute(module: _Module, dots: str, name: str) -> Optional[str]:
        if not dots:
            return name or None
        base = module.name.split(".") if module.package else module.name.split(".")[:-1]
        if len(dots) > 1:
            base = base[:len(base) - (len(dots) - 1)]
        return ".".join([*base, name] if name else base) or None

    def _find(self, name: str, near: _Module) -> Optional[_Module]:
        """The one module of the tree that ``name`` denotes from ``near`` (its own directory first)."""
        found = self.modules.get(name)
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        close = [m for m in found if m.directory.startswith(near.directory)]
        return close[0] if len(close) == 1 else None

    # -- what a module exports --------------------------------------------------------------------------
    def _exported(self, module: _Module) -> Dict[str, Optional[str]]:
        """Names ``from module import *`` gives: name -> outside qualified name (``None``: defined in the tree
        or unknown). Memoized; a cycle of star imports sees nothing more inside the cycle."""
        key = id(module)
        if key in self._exports:
            return self._exports[key]
        self._exports[key] = {}
        names: Dict[str, Optional[str]] = {}
        for star in module.stars:
            source = self._find(star, module)
            if source is not None:
                names.update(self._exported(source))
        for local, full in module.imports.items():
            names[local] = self._resolve(module, local, full)
        for local in module.bound:
            names[local] = None  # rebound here: not the import any more
        if module.all_names is not None:
            names = {n: q for n, q in names.items() if n in module.all_names}
        else:
            names = {n: q for n, q in names.items() if not n.startswith("_")}
        self._exports[key] = names
        return names

    def _resolve(self, module: _Module, local: str, full: str) -> Optional[str]:
        if local in module.from_tree:
            source_name, name = module.from_tree[local]
            source = self._find(source_name, module)
            return self._exported(source).get(name) if source is not None else None
        head = full.split(".")[0]
        return None if self._find(head, module) is not None else full

    # -- per-file answers ---------------------------------------------------------------------------------
    def view(self, path: Path) -> FileView:
        module = self.by_path.get(Path(path).resolve())
        if module is None:
            return EMPTY
        key = module.path
        if key not in self._views:
            reaching: Dict[str, str] = {}
            for star in module.stars:
                source = self._find(star, module)
                if source is not None:
                    for name, qualified in self._exported(source).items():
                        if qualified is not None and name not in module.bound and module.reads(name):
                            reaching.setdefault(name, qualified)
            for local in module.from_tree:
                qualified = self._resolve(module, local, module.imports[local])
                if qualified is not None:
                    reaching[local] = qualified
            self._link()
            self._views[key] = FileView(reaching, lambda name, module=module: self._kept(module, name, set()),
                                        lambda path, module=module: self.writers(module, path))
        return self._views[key]

    def writers(self, module: _Module, path: str) -> List[Tuple[str, str]]:
        """(file, saved object's text) of the other files of the tree that ``torch.save`` to ``path``."""
        path = os.path.normpath(path)
        return [(other.path.name, obj) for other in self.by_path.values() if other is not module
                for saved, obj in other.saves if saved == path]

    def _link(self) -> None:
        """Each module's readers: who star-imports it, from-imports a name of it, reads ``alias.X`` of it."""
        if self._linked:
            return
        self._linked = True
        for module in self.by_path.values():
            for star in module.stars:
                source = self._find(star, module)
                if source is not None:
                    source.star_readers.append(module)
            for local, (source_name, name) in module.from_tree.items():
                source = self._find(source_name, module)
                if source is not None:
                    source.named.add(name)
            for local, full in module.imports.items():
                if local not in module.from_tree and f"{local}." in module.text:
                    source = self._find(full, module)
                    if source is not None:
                        source.attribute_readers.append((module, local))

    def _kept(self, module: _Module, name: str, seen: Set[int]) -> bool:
        """Another file reads ``name`` through ``module``: from-imports it, reads ``alias.name``, or
        star-imports the module and uses the word (or passes it on through its own star readers)."""
        if id(module) in seen:
            return False
        seen.add(id(module))
        if name in module.named or any(f"{alias}.{name}" in reader.text for reader, alias in module.attribute_readers):
            return True
        return any(reader.reads(name) or self._kept(reader, name, seen) for reader in module.star_readers)


_PATHS: Optional[List[Path]] = None  # the run's files, indexed on first need
_CURRENT: Optional[RepoIndex] = None
_NAMES: Optional[Set[str]] = None  # every name a module of the run's files goes by, from the paths alone


def index_files(paths: Iterable[Path]) -> None:
    """The files of the run (the driver calls this once per run, before any worker starts). The index is built
    on first need in each process that asks, so a run the cache serves entirely does not pay for it."""
    global _PATHS, _CURRENT, _NAMES
    _PATHS, _CURRENT, _NAMES = list(paths), None, None


def _index() -> Optional[RepoIndex]:
    global _CURRENT
    if _CURRENT is None and _PATHS is not None:
        _CURRENT = RepoIndex(_PATHS)
    return _CURRENT


def view(path: Path) -> Optional[FileView]:
    """``path``'s view in the run's index, or ``None`` when no run declared its files (single-file use)."""
    index = _index()
    return index.view(path) if index is not None else None


def _tree_names() -> Set[str]:
    global _NAMES
    if _NAMES is None:
        _NAMES = set()
        for path in _PATHS or ():
            if os.fspath(path).endswith(".py"):
                parts, _ = _module_parts(path)
                _NAMES.update(".".join(parts[start:]) for start in range(len(parts)))
    return _NAMES


def _imports_from_tree(data: bytes) -> bool:
    """A ``from ... import`` line of ``data`` names a module of the run's files (or is relative): what it
    imports may be an import of torch's, made there."""
    if b"from" not in data:
        return False
    names = _tree_names()
    return any(found.group(1) or found.group(2).decode() in names for found in _FROM.finditer(b"\n" + data))


def fingerprint(path: Path, data: bytes) -> bytes:
    """What other files of the tree give ``path`` (through star imports and ``from model import name``), and what
    they ``torch.save`` to the literal paths it loads: part of the cache key, so that a cached result holds only
    while that is unchanged. ``b""`` for a file with none of these (no index is built for it)."""
    stars = b"import *" in data or b"import  *" in data
    loads = [m.group(2) for m in _LOAD.finditer(data.decode("utf-8", "replace"))] if b"torch.load(" in data else []
    if not stars and not loads and not _imports_from_tree(data):
        return b""
    found = view(path)
    if found is None:
        return b""
    key = repr(sorted(found.reaching.items())).encode() if found.reaching else b""
    written = sorted(w for loaded in loads for w in found.writers(loaded))  # what TM501 reads from other files
    return key + (repr(written).encode() if written else b"")
