"""Child entry point: ``python bootstrap.py CONFIG.json SCRIPT [ARGS...]``.

Runs SCRIPT unmodified as ``__main__`` after seeding every RNG (torch, random,
numpy), asking for deterministic algorithms, mapping CUDA placement on CPU runs
and installing the recorder. Standard library + torch only and Python 3.5
syntax, because ``--old-python`` runs it under the old script's interpreter.
Its siblings are imported as the private package ``_torch_migrate_child`` so
that a script's own ``compat.py`` or ``recorder.py`` still imports as the script
expects.
"""
import faulthandler
import importlib
import json
import os
import random
import shutil
import sys
import tokenize
import traceback
import types

_HERE = os.path.dirname(os.path.abspath(__file__))
_MUTATING = frozenset(["open", "os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.truncate", "os.chmod",
                       "os.utime", "os.symlink", "os.link"])
_CHANGES_CONTENT = frozenset(["os.truncate", "os.chmod", "os.utime"])  # they follow a link to its target
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


_PACKAGE = "_torch_migrate_child"


def _load(name):
    """``_torch_migrate_child.<name>``: this folder as a package no script can shadow."""
    if _PACKAGE not in sys.modules:
        package = types.ModuleType(_PACKAGE)
        package.__path__ = [_HERE]
        sys.modules[_PACKAGE] = package
    return importlib.import_module(_PACKAGE + "." + name)


def _seed(torch, seed):
    """Returns whether deterministic algorithms could be requested."""
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    try:  # warn_only: an op without a deterministic kernel must not change what the script does
        torch.use_deterministic_algorithms(True, warn_only=True)
        return True
    except (AttributeError, TypeError):  # torch < 1.11
        return False


def _compile(script, compat):
    with open(script, "rb") as source:
        code = source.read()
    try:
        return compile(code, script, "exec")
    except SyntaxError:
        if compat is None:
            raise
        with tokenize.open(script) as source:
            return compile(compat.fix_async_keyword(source.read()), script, "exec")


def _exit_status(code):
    """What the interpreter would exit with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write("%s\n" % (code,))
    return 1


def _materialize(root, path, last):
    """Replace the links on the way from ``root`` to ``path`` by real folders (of links),
    and the last one as ``last`` says: "copy" its content, "unlink" it, or None (leave it)."""
    parts = os.path.relpath(path, root).split(os.sep)
    current = root
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        final = i == len(parts) - 1
        if not os.path.islink(current):
            if not os.path.isdir(current):
                return
            continue
        target = os.path.realpath(current)
        if os.path.isdir(target) and not final:
            os.unlink(current)
            os.mkdir(current)
            for name in os.listdir(target):
                os.symlink(os.path.join(target, name), os.path.join(current, name))
        elif final and last is not None:
            os.unlink(current)
            if last == "copy":
                shutil.copy2(target, current)


def _guard_links(root):
    """The mirror links large files and far-down folders to the user's; before anything
    writes through such a link it becomes a copy (Python >= 3.8: audit hooks)."""
    if not hasattr(sys, "addaudithook"):
        return
    prefix, busy = root + os.sep, []

    def paths(event, args):
        if event == "open":
            mode, flags = args[1] or "", args[2] or 0
            if any(c in mode for c in "wax+") or flags & _WRITE_FLAGS:
                truncating = "w" in mode or flags & os.O_TRUNC
                return [(args[0], "unlink" if truncating else "copy")]
            return []
        if event in ("os.rename", "os.symlink", "os.link"):
            return [(args[0], None), (args[1], None)]
        return [(args[0], "copy" if event in _CHANGES_CONTENT else None)]

    def hook(event, args):
        if event not in _MUTATING or busy:
            return
        busy.append(event)  # the copying below raises events of its own
        try:
            for path, last in paths(event, args):
                if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__"):
                    path = os.path.abspath(os.fsdecode(path))
                    if path.startswith(prefix):
                        _materialize(root, path, last)
        finally:
            busy.pop()

    sys.addaudithook(hook)


def _print_traceback(exc):
    """As Python would print it, without the harness's frames (the recorder wraps backward())."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f[0].startswith(_HERE)]
    sys.stderr.write("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
                     + "".join(traceback.format_exception_only(type(exc), exc)))


def main(argv):
    with open(argv[1]) as f:
        config = json.load(f)
    script = os.path.abspath(argv[2])
    sys.argv = [script] + argv[3:]
    sys.path[0] = os.path.dirname(script)  # what ``python SCRIPT`` puts there, instead of this folder
    sys.dont_write_bytecode = True
    faulthandler.enable()  # a segfault still names the script line on stderr
    _guard_links(config["root"])

    import torch
    compat = _load("compat")
    recorder_module = _load("recorder")
    deterministic = _seed(torch, config["seed"])
    if config["device"] == "cpu":
        compat.map_cuda_to_cpu()
    if config["compat"]:
        compat.install_legacy()

    record = open(config["record"], "wb")
    recorder = recorder_module.Recorder(config, record, config["device"])
    recorder.install()
    recorder.header(seed=config["seed"], compat=config["compat"], deterministic=deterministic, script=script)
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(__file__=script, __builtins__=__builtins__, __cached__=None)
    sys.modules["__main__"] = main_module
    recorder.start_memory()
    try:
        exec(_compile(script, compat if config["compat"] else None), main_module.__dict__)
    except SystemExit as exc:
        status = _exit_status(exc.code)
        recorder.finish(status)
        return status
    except BaseException as exc:
        recorder.fail(exc)
        _print_traceback(exc)
        return 1
    recorder.finish(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
