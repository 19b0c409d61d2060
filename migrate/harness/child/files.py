"""The files a run writes in its mirror, read back for comparison at the end of the run.

``Snapshot`` takes (size, mtime) of every entry of the tree before the script
starts; at the end, ``changes`` names what is new, modified or deleted, by its
path from the script's folder (``checkpoint.pt``, ``../data/cache.npy``): the
same in both runs even where their roots differ. Each
written file is read here, in the child, because only here can a whole-object
checkpoint be unpickled (its classes live in the script's ``__main__``) and an
old torch read its own format:

- torch files (``torch.save``): loaded on the CPU and flattened into entries
  (``model/conv1.weight``, ``epoch``, ``optimizer/param_groups[0]/lr``): tensors
  encoded like gradients, numbers and strings as they are; a pickled module
  contributes its class and its ``state_dict()``;
- ``.npy``/``.npz`` (numpy): arrays as tensors;
- images (with Pillow, when the script's environment has it): mode, size and pixels;
- text (UTF-8 without NUL bytes): its lines, up to TEXT_LIMIT bytes;
- anything else: size and sha256.

Standard library + torch (numpy and Pillow when present), Python 3.5 syntax.
"""
import fnmatch
import hashlib
import os
import zipfile

import torch

NOT_WALKED = frozenset([".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox",
                        "node_modules", ".ipynb_checkpoints"])
# Left out by default: bytecode, and TensorBoard event files (wall times; their scalars are compared instead).
DEFAULT_IGNORED = ("*.pyc", "*.pyo", "events.out.tfevents.*")
TORCH_SUFFIXES = (".pt", ".pth", ".pkl", ".ckpt", ".tar", ".bin", ".t7", ".model", ".pth.tar")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".ppm", ".pgm", ".tif", ".tiff", ".webp")
TEXT_LIMIT = 4 * 1024 * 1024  # bytes of a text file kept line by line; above it, the sha256 only
MAX_ENTRIES = 20000  # flattened entries per file
MAX_FILES = 1000


def _walk(root):
    """{relative path: (size, mtime_ns, is_link)}; links are not followed (the mirror links big things)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if d not in NOT_WALKED and d not in links]
        for name in files + links:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root).replace(os.sep, "/")] = (st.st_size, st.st_mtime_ns,
                                                                       os.path.islink(path))
    return found


class Snapshot(object):
    def __init__(self, root, ignored):
        self.root = root
        self.base = os.getcwd()  # the script's folder, before the script can change it
        self.ignored = tuple(ignored) + DEFAULT_IGNORED
        self.before = _walk(root)

    def _ignored(self, relative):
        name = relative.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatch(path, glob) for path in (relative, self.name(relative), name)
                   for glob in self.ignored)

    def name(self, relative):
        """A path relative to the root, as a path from the script's folder."""
        return os.path.relpath(os.path.join(self.root, relative), self.base).replace(os.sep, "/")

    def changes(self):
        """[(path from the root, "new" | "modified" | "deleted")], sorted by path."""
        after = _walk(self.root)
        changed = []
        for relative in sorted(set(self.before) | set(after)):
            if self._ignored(relative):
                continue
            old, new = self.before.get(relative), after.get(relative)
            if old == new or (old is None and new[2]):
                continue  # unchanged, or a link the guard made when it turned a linked folder into a real one
            if new is None and old[2] and os.path.isdir(os.path.join(self.root, relative)):
                continue  # that linked folder itself
            changed.append((relative, "deleted" if new is None else "new" if old is None else "modified"))
        return changed[:MAX_FILES]


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Flattener(object):
    """Turns a loaded object into entries ``{"key", "type", "tensor", "value"}``."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.entries = []

    def add(self, key, kind, tensor=None, value=None):
        if len(self.entries) < MAX_ENTRIES:
            self.entries.append({"key": key, "type": kind, "tensor": tensor, "value": value})

    def visit(self, key, obj, depth=0):
        kind = type(obj).__name__
        if torch.is_tensor(obj):
            self.add(key, kind, tensor=self.encoder.encode(obj))
        elif obj is None or isinstance(obj, (bool, int, float, str)):
            self.add(key, kind, value=obj)
        elif depth > 8:
            self.add(key, kind, value=repr(obj)[:200])
        elif isinstance(obj, torch.nn.Module):
            self.add(key, "module", value=type(obj).__name__)
            self.visit(key, obj.state_dict(), depth + 1)
        elif isinstance(obj, torch.optim.Optimizer):
            self.add(key, "optimizer", value=type(obj).__name__)
            self.visit(key, obj.state_dict(), depth + 1)
        elif hasattr(obj, "__array__") and hasattr(obj, "dtype"):  # numpy arrays and scalars
            self._array(key, obj)
        elif isinstance(obj, dict):
            for name in sorted(obj, key=str):
                self.visit(_join(key, str(name)), obj[name], depth + 1)
        elif isinstance(obj, (list, tuple)):
            if len(obj) > 16 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj):
                self.add(key, kind, tensor=self.encoder.encode(torch.tensor(obj, dtype=torch.float64)))
                return
            for i, item in enumerate(obj):
                self.visit("%s[%d]" % (key, i), item, depth + 1)
        elif hasattr(obj, "__dict__") and not callable(obj):  # argparse.Namespace, plain objects
            self.add(key, "object", value=kind)
            for name in sorted(vars(obj)):
                if not name.startswith("_"):
                    self.visit(_join(key, name), vars(obj)[name], depth + 1)
        else:
            self.add(key, kind, value=repr(obj)[:200])

    def _array(self, key, array):
        import numpy
        array = numpy.asarray(array)
        try:
            self.add(key, "ndarray", tensor=self.encoder.encode(torch.from_numpy(numpy.ascontiguousarray(array))))
        except (TypeError, ValueError):  # object or string arrays
            self.add(key, "ndarray", value=repr(array.tolist())[:200])


def _join(key, name):
    return name if not key else key + "/" + name


def _is_torch_file(path):
    lower = path.lower()
    if lower.endswith(TORCH_SUFFIXES):
        return True
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.endswith("/data.pkl") for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


def _load_torch(path):
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # torch < 1.13: no weights_only
        return torch.load(path, map_location="cpu")


def _text_lines(path, size):
    if size > TEXT_LIMIT:
        return None
    with open(path, "rb") as f:
        raw = f.read()
    if b"\0" in raw:
        return None
    try:
        return raw.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def read_file(root, relative, name, change, encoder):
    """The ``artifact`` record fields for one changed file (``name``: its path from the script's folder)."""
    path = os.path.join(root, relative)
    fields = {"path": name, "change": change, "format": "binary", "size": 0, "sha256": None, "entries": [],
              "lines": None, "error": None}
    if change == "deleted":
        fields["format"] = "missing"
        return fields
    fields["size"] = os.path.getsize(path)
    fields["sha256"] = _sha256(path)
    flat = Flattener(encoder)
    lower = relative.lower()
    try:
        if lower.endswith((".npy", ".npz")):
            import numpy
            loaded = numpy.load(path, allow_pickle=False)
            fields["format"] = "numpy"
            flat.visit("", dict(loaded) if lower.endswith(".npz") else loaded)
        elif lower.endswith(IMAGE_SUFFIXES) and _pillow() is not None:
            fields["format"] = "image"
            _image(flat, path)
        elif _is_torch_file(path):
            fields["format"] = "torch"
            flat.visit("", _load_torch(path))
        else:
            lines = _text_lines(path, fields["size"])
            if lines is not None:
                fields["format"], fields["lines"] = "text", lines
    except Exception as exc:  # unreadable as what it looks like: compared by its bytes
        fields["error"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
        flat.entries = []
    fields["entries"] = flat.entries
    return fields


def _pillow():
    try:
        from PIL import Image
        return Image
    except ImportError:
        return None


def _image(flat, path):
    import numpy
    image = _pillow().open(path)
    image.load()
    flat.add("mode", "str", value=image.mode)
    flat.add("size", "tuple", value="%dx%d" % image.size)
    flat.add("pixels", "image", tensor=flat.encoder.encode(torch.from_numpy(numpy.array(image))))
