"""A fresh virtual environment has what the tool and the suite import: every third-party import is
declared in pyproject.toml, and CI runs the README's own test command in a fresh environment."""
import ast
import importlib.metadata
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("migrate", "codemods", "tests", "bench")
NOT_SOURCES = {".venv", ".git", "__pycache__", ".venv-torchfix"}


def _python_files(top: Path):
    for path in sorted(top.rglob("*.py")):
        if not NOT_SOURCES & set(path.relative_to(ROOT).parts):
            yield path


def _catches_import_error(node: ast.Try) -> bool:
    names = {ast.unparse(handler.type) for handler in node.handlers if handler.type is not None}
    return bool(names & {"ImportError", "ModuleNotFoundError", "(ImportError, ModuleNotFoundError)"})


def _required_imports(tree: ast.AST, optional: bool = False):
    """Top-level module names imported outside a `try: ... except ImportError`."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.Import) and not optional:
            yield from (alias.name.split(".")[0] for alias in child.names)
        elif isinstance(child, ast.ImportFrom) and not optional and child.level == 0 and child.module:
            yield child.module.split(".")[0]
        yield from _required_imports(child, optional or (isinstance(child, ast.Try) and _catches_import_error(child)))


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {_normal(re.match(r"[A-Za-z0-9_.\-]+", requirement).group()) for requirement in requirements}


def test_every_third_party_import_is_declared():
    local = {path.stem for path in ROOT.rglob("*.py")} | {path.name for path in ROOT.rglob("*") if path.is_dir()}
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    undeclared = {}
    for top in SOURCES:
        for path in _python_files(ROOT / top):
            for module in _required_imports(ast.parse(path.read_bytes())):
                if module in sys.stdlib_module_names or module in local:
                    continue
                owners = {_normal(d) for d in distributions.get(module, [module])}
                if not owners & declared:
                    undeclared.setdefault(module, str(path.relative_to(ROOT)))
    assert not undeclared, f"imported but not declared in pyproject.toml (module: first importer): {undeclared}"


def test_ci_runs_the_readme_test_command_in_a_fresh_environment():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.search(r"```bash\n(.*?)```", readme, re.S).group(1).splitlines()
    assert commands[0].startswith("pip install torch==2.13.0 -e . && torch-migrate migrate samples --diff")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[1] == 'pip install torch==2.13.0 -e ".[test]" && python -m pytest -q' and commands[1] in ci
    assert ci.index("python -m venv --clear .venv") < ci.index("source .venv/bin/activate") < ci.index(commands[1])
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()
