"""Jupyter notebooks through the command line: rewrite, check, diff, layouts kept byte for byte, IPython
syntax left alone, positions in cells, hostile notebooks refused (exit 3, file untouched)."""
import json
import os
import re
from pathlib import Path

import libcst as cst
import nbformat
import pytest

from codemods.base import Rule
from notebook_support import MNIST, code, markdown, notebook_bytes, raw, sources, stream, torch_migrate

TESTS = Path(__file__).parent


def run(*args, cwd, **kwargs):
    return torch_migrate(args[0], "--no-cache", *args[1:], cwd=cwd, **kwargs)


def cells_but_sources(path: Path) -> list:
    document = json.loads(path.read_bytes().decode("utf-8-sig"))
    return [{key: value for key, value in cell.items() if key != "source"} for cell in document["cells"]], \
        {key: value for key, value in document.items() if key != "cells"}


# -- the legacy MNIST notebook ---------------------------------------------------------
MNIST_MIGRATED = {  # cell index -> its source after `rewrite` (every other cell is unchanged)
    3: "torch.manual_seed(1)\nuse_cuda = torch.cuda.is_available()\n"
       "device = torch.device(\"cuda\" if use_cuda else \"cpu\")\n"
       + MNIST[3]["source"].split("\n", 2)[2],
    5: MNIST[5]["source"].replace("if use_cuda:\n    model.cuda()\n", "model.to(device)\n"),
    6: MNIST[6]["source"].replace("    if use_cuda:\n        data, target = data.cuda(), target.cuda()\n"
                                  "    data, target = Variable(data), Variable(target)\n",
                                  "    data, target = data.to(device), target.to(device)\n")
                         .replace("loss.data[0]", "loss.item()"),
    8: "model.eval()\nwith torch.no_grad():\n    data = test_x\n    output = model(data)\n"
       "    test_loss = F.nll_loss(output, test_y, reduction='sum').item() / len(test_y)\n"
       "    pred = output.max(1, keepdim=True)[1]\n    correct = pred.eq(test_y.view_as(pred)).sum()\n"
       "    print('test loss {:.4f}, accuracy {}/{}'.format(test_loss, correct, len(test_y)))",
}


@pytest.fixture
def mnist(tmp_path):
    path = tmp_path / "mnist.ipynb"
    path.write_bytes(notebook_bytes(MNIST))
    return path


def test_mnist_notebook_is_migrated_cell_by_cell_and_everything_else_is_kept(mnist):
    """Names flow across cells (`Variable` imported in cell 2, used in cells 7 and 9); magics, shell escapes,
    help, automagics, the %%bash cell, markdown, raw cells, outputs, ids and metadata are untouched."""
    before = mnist.read_bytes()
    result = run("rewrite", "mnist.ipynb", cwd=mnist.parent)
    assert result.returncode == 0, result.stderr
    assert "rewrote 1 of 1 file;" in result.stdout
    expected = [MNIST_MIGRATED.get(index, cell["source"]) for index, cell in enumerate(MNIST)]
    assert sources(mnist) == expected
    assert mnist.read_bytes() == notebook_bytes([dict(cell, source=source) for cell, source in zip(MNIST, expected)])
    assert cells_but_sources(mnist) == cells_but_sources_of(before, mnist.parent)
    nbformat.validate(nbformat.reads(mnist.read_text(encoding="utf-8"), as_version=4))
    # `%time probs = F.softmax(model(Variable(...)))` still needs the import, so it stays; and it is reported
    assert "from torch.autograd import Variable" in sources(mnist)[1]
    assert re.search(r"^mnist\.ipynb:cell 11:1:31: TM101 `Variable` used as a value", result.stdout, re.M)

    again = run("rewrite", "--check", "mnist.ipynb", cwd=mnist.parent)
    assert again.returncode == 0 and "would rewrite" not in again.stdout, again.stdout + again.stderr


def cells_but_sources_of(data: bytes, folder: Path):
    copy = folder / "copy.ipynb"
    copy.write_bytes(data)
    return cells_but_sources(copy)


def test_check_reports_cell_positions_in_every_format(mnist):
    text = run("check", "mnist.ipynb", cwd=mnist.parent)
    assert text.returncode == 1
    lines = [line for line in text.stdout.splitlines() if line.startswith("mnist.ipynb:")]
    assert "mnist.ipynb:cell 7:12:46: TM301 `loss.data[0]` on a 0-dim tensor raises IndexError: `.item()` [*]" in lines
    assert any(line.startswith("mnist.ipynb:cell 9:2:8: TM102 `Variable(test_x)`") for line in lines)
    assert all(re.match(r"mnist\.ipynb:cell \d+:\d+:\d+: TM\d{3} ", line) for line in lines)
    assert not any(re.match(r"mnist\.ipynb:cell (10|12|13):", line) for line in lines), "magic cells are not code"

    found = json.loads(run("check", "--format", "json", "mnist.ipynb", cwd=mnist.parent).stdout)
    item = next(f for f in found if f["code"] == "TM301" and f["cell"] == 7)
    assert (item["line"], item["col"], item["end_line"], item["path"]) == (12, 46, 12, "mnist.ipynb")
    assert all(f["cell"] >= 1 for f in found)

    sarif = json.loads(run("check", "--format", "sarif", "mnist.ipynb", cwd=mnist.parent).stdout)
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TM301" and r["properties"]["cell"] == 7)
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 12
    assert result["message"]["text"].startswith("cell 7: ")

    github = run("check", "--format", "github", "mnist.ipynb", cwd=mnist.parent).stdout
    assert "::warning file=mnist.ipynb,line=12,col=46,title=TM301 (cell 7)::" in github

    # a .py beside it keeps its plain positions, and JSON gets no `cell` for it
    (mnist.parent / "train.py").write_text("import torch\nx = torch.ones(1).cuda(async=True)\n")
    both = json.loads(run("check", "--format", "json", ".", cwd=mnist.parent).stdout)
    assert [f for f in both if f["path"] == "train.py" and "cell" not in f and f["line"] == 2]


def test_diff_is_per_cell_says_how_to_apply_it_and_rewrite_applies_it(mnist):
    before = mnist.read_bytes()
    result = run("rewrite", "--diff", "mnist.ipynb", cwd=mnist.parent)
    assert result.returncode == 0, result.stderr
    assert mnist.read_bytes() == before
    diff = result.stdout
    assert diff.startswith("# mnist.ipynb: a notebook; this is a per-cell diff of its code, not a patch: "
                           "to apply it, run the same command without --diff\n")
    assert '"source"' not in diff and "cell_type" not in diff, "a diff of sources, not of JSON"
    hunks = {}
    for block in re.split(r"^--- ", diff, flags=re.M)[1:]:
        label = re.match(r"a/mnist\.ipynb:cell (\d+)\n\+\+\+ b/mnist\.ipynb:cell \1\n", block)
        assert label, block
        assert re.search(rf"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@ cell {label.group(1)}$", block, re.M)
        hunks[int(label.group(1))] = block
    assert sorted(hunks) == [index + 1 for index in sorted(MNIST_MIGRATED)]
    assert "+    data, target = data.to(device), target.to(device)\n" in hunks[7]

    assert run("rewrite", "mnist.ipynb", cwd=mnist.parent).returncode == 0
    for index, new in MNIST_MIGRATED.items():
        added = [line[1:] for line in hunks[index + 1].splitlines() if line.startswith("+") and not
                 line.startswith("+++")]
        assert all(line in new.splitlines() for line in added)
    assert sources(mnist) == [MNIST_MIGRATED.get(i, c["source"]) for i, c in enumerate(MNIST)]


# -- byte for byte ---------------------------------------------------------------------
SMALL = [
    code("import torch\nfrom torch.autograd import Variable\n# größe: ü, \u2028 and ☃ stay as they are", count=1),
    markdown("Größe *ü* ☃"),
    code("%matplotlib inline\nx = Variable(torch.ones(2))\nprint(x.sum().data[0])", outputs=[stream("2.0\n")],
         count=2),
    code("", count=None),
    code("y = 1  # unchanged", count=3),
    raw("raw ☃"),
]
SMALL_MIGRATED = [dict(SMALL[0], source="import torch\n# größe: ü, \u2028 and ☃ stay as they are"), SMALL[1],
                  dict(SMALL[2], source="%matplotlib inline\nx = torch.ones(2)\nprint(x.sum().item())"), *SMALL[3:]]
LAYOUTS = {
    "nbformat": {},
    "indent 2": {"indent": 2},
    "no indent": {"indent": None},
    "escaped non-ASCII": {"ensure_ascii": True},
    "string sources": {"split": False},
    "no final newline": {"final_newline": False},
    "CRLF": {"crlf": True},
    "BOM": {"bom": True},
    "keys in another order": {"sort_keys": False, "key_order": ["source", "outputs", "metadata", "cell_type"]},
    "nbformat 4.2, no ids": {"ids": False},
    "all at once": {"indent": 2, "ensure_ascii": True, "split": False, "final_newline": False, "crlf": True,
                    "bom": True},
}


def test_a_rewritten_notebook_keeps_its_layout_and_a_clean_one_stays_byte_identical(tmp_path):
    """Each rewritten file is exactly what the same writer makes of the new sources; rewriting them again
    (nothing left to change) and checking them leaves every byte and the modification time."""
    for name, layout in LAYOUTS.items():
        (tmp_path / f"{name}.ipynb").write_bytes(notebook_bytes(SMALL, **layout))
    result = run("rewrite", ".", cwd=tmp_path)
    assert result.returncode == 0 and f"rewrote {len(LAYOUTS)} of {len(LAYOUTS)}" in result.stdout, result.stderr
    for name, layout in LAYOUTS.items():
        assert (tmp_path / f"{name}.ipynb").read_bytes() == notebook_bytes(SMALL_MIGRATED, **layout), name
    stats = {path: path.stat().st_mtime_ns for path in tmp_path.glob("*.ipynb")}
    for command in ("rewrite", "check"):
        assert run(command, ".", cwd=tmp_path).returncode == 0
    for name, layout in LAYOUTS.items():
        assert (tmp_path / f"{name}.ipynb").read_bytes() == notebook_bytes(SMALL_MIGRATED, **layout), name
    assert stats == {path: path.stat().st_mtime_ns for path in tmp_path.glob("*.ipynb")}


ODD = (  # hand-written: odd spacing, `\/` and `\u` escapes next to literal characters, keys in no order
    '{"nbformat_minor":2,   "cells" :[\n'
    '  {"source":["import torch\\n", "print(torch.ones(1)) # caf\\u00e9 \\/ café"],\n'
    '   "metadata" : {"tags":[]}, "outputs":[], "execution_count":null,"cell_type":"code"},\n'
    '\t{"cell_type":"code","metadata":{},"outputs":[],"execution_count":1,\n'
    '\t "source":"from torch.autograd import Variable\\nv = Variable(torch.zeros(1))  # \\u00e9t\\u00e9"}\n'
    '], "metadata":{}, "nbformat":4}'
)


def test_only_the_changed_source_value_changes_in_a_hand_written_notebook(tmp_path):
    path = tmp_path / "odd.ipynb"
    path.write_text(ODD, encoding="utf-8")
    assert run("rewrite", "odd.ipynb", cwd=tmp_path).returncode == 0
    old = '"from torch.autograd import Variable\\nv = Variable(torch.zeros(1))  # \\u00e9t\\u00e9"'
    assert path.read_text(encoding="utf-8") == ODD.replace(old, '"v = torch.zeros(1)  # \\u00e9t\\u00e9"')


def test_an_empty_source_list_that_gains_code_takes_the_files_indentation(tmp_path):
    """TM304 adds `import torch` at the top of the module: into the first cell, which was `[]`."""
    cells = [code(""), code("for p in model.parameters():\n    p.data.add_(-lr, p.grad.data)")]
    path = tmp_path / "sgd.ipynb"
    for layout in ({}, {"indent": 2, "crlf": True}):
        path.write_bytes(notebook_bytes(cells, **layout))
        assert run("rewrite", "sgd.ipynb", cwd=tmp_path).returncode == 0
        assert path.read_bytes() == notebook_bytes(
            [code("import torch"), code("with torch.no_grad():\n    for p in model.parameters():\n"
                                          "        p.add_(p.grad, alpha=-lr)")], **layout)


# -- IPython syntax ----------------------------------------------------------------------
IPYTHON = [
    code("from torch.autograd import Variable\nimport torch\nx = torch.ones(3)"),
    code("%%time\nfor i in range(2):\n    %time y = x.cuda(async=True)\n    z = Variable(x)\n    !echo {i}\n"
         "    x?\n    %timeit -n1 Variable(x)\n    w = !ls \\\n        -la"),
    code("%%capture captured\nh = Variable(x)\nh2 = Variable(x)"),
    code("%%writefile helper.py\nfrom torch.autograd import Variable\nv = Variable(x)"),
    code("%%bash\nVariable(x, volatile=True)"),
    code("%%nosuchmagic\nv = Variable(x)"),
    code('s = """\n%d items\n!important\n"""\nt = (1\n     != 2)\nu = [x\n     % 2]\nv = Variable(x)'),
    code("pip install torch==0.3.1"),
    code("ls"),
    code("?Variable"),
    code("Variable??"),
    code("%pinfo Variable\n;print a b\n/print 1\n,print c d"),
    code("from __future__ import (print_function,\n                        division)\nw = Variable(x)"),
]
IPYTHON_MIGRATED = {
    1: "%%time\nfor i in range(2):\n    %time y = x.cuda(async=True)\n    z = x\n    !echo {i}\n"
       "    x?\n    %timeit -n1 Variable(x)\n    w = !ls \\\n        -la",
    2: "%%capture captured\nh = x\nh2 = x",
    6: 's = """\n%d items\n!important\n"""\nt = (1\n     != 2)\nu = [x\n     % 2]\nv = x',
    12: "from __future__ import (print_function,\n                        division)\nw = x",
}


def test_ipython_syntax_survives_byte_for_byte_and_python_bodies_are_migrated(tmp_path):
    """Line magics keep their (un-migrated) payload and their indentation, `%%time`/`%%capture` bodies are
    migrated, `%%writefile`/`%%bash`/unknown cell magics are left whole, `%d`/`!`/`%` inside strings and
    brackets are Python, automagics and help lines stay, a `from __future__` import in a later cell is fine;
    `Variable` is still used by magic lines, so its import stays."""
    path = tmp_path / "magic.ipynb"
    path.write_bytes(notebook_bytes(IPYTHON))
    result = run("rewrite", "magic.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sources(path) == [IPYTHON_MIGRATED.get(index, cell["source"]) for index, cell in enumerate(IPYTHON)]


def test_a_fix_that_spans_cells_is_split_per_cell(tmp_path):
    """`volatile=True` in cell 2, used in cell 3: TM102's `with torch.no_grad():` region is entered again in
    each cell (a block cannot span cells); each cell parses on its own."""
    cells = [code("import torch\nfrom torch.autograd import Variable\nmodel = torch.nn.Linear(3, 2)"),
             code("data = Variable(torch.randn(4, 3), volatile=True)"), markdown("between"),
             code("out = model(data)\nprint(out.sum())"), code("print(1)")]
    path = tmp_path / "cross.ipynb"
    path.write_bytes(notebook_bytes(cells))
    assert run("rewrite", "cross.ipynb", cwd=tmp_path).returncode == 0
    assert sources(path) == ["import torch\nmodel = torch.nn.Linear(3, 2)",
                             "with torch.no_grad():\n    data = torch.randn(4, 3)", "between",
                             "with torch.no_grad():\n    out = model(data)\n    print(out.sum())", "print(1)"]


# -- refusals ----------------------------------------------------------------------------
def test_hostile_notebooks_are_refused_with_a_position_and_left_untouched(tmp_path):
    legacy = [code("import torch\nfrom torch.autograd import Variable\nx = Variable(torch.ones(1))")]
    files = {
        "invalid.ipynb": b'{"cells": [}',
        "v3.ipynb": json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                                "worksheets": [{"cells": [{"cell_type": "code", "input": "import torch",
                                                           "outputs": [], "language": "python"}]}]}).encode(),
        "schema.ipynb": notebook_bytes(legacy).replace(b'"cell_type": "code"', b'"cell_type": "kode"'),
        "list.ipynb": b"[1, 2]",
        "latin1.ipynb": notebook_bytes(legacy).replace(b"import torch", b"import torch # \xe9"),
        "py2.ipynb": notebook_bytes([*legacy, code("print 'loss', x.data[0]")]),
        "notebook.py": notebook_bytes(legacy),
        "blob.ipynb": notebook_bytes([code("import torch\nx = Variable(torch.ones(1))",
                                           outputs=[{"data": {"image/png": "A" * (65 * 2**20)}, "metadata": {},
                                                     "output_type": "display_data"}])]),
        "fine.ipynb": notebook_bytes(legacy),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    result = run("rewrite", ".", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    errors = {line.split(":", 1)[0]: line for line in result.stderr.splitlines() if ".ipynb:" in line or
              ".py:" in line}
    assert errors["invalid.ipynb"] == "invalid.ipynb:1:12: not a notebook: invalid JSON (Expecting value)"
    assert errors["v3.ipynb"].startswith("v3.ipynb:1:1: nbformat 3 notebook: only nbformat 4 is supported; "
                                         "convert it first (`jupyter nbconvert --to notebook --nbformat 4")
    assert re.fullmatch(r"schema\.ipynb:1:1: not a valid nbformat 4 notebook: .* \(at cells/0.*\)",
                        errors["schema.ipynb"])
    assert errors["list.ipynb"] == "list.ipynb:1:1: not a notebook: JSON without an `nbformat` version"
    assert errors["latin1.ipynb"].startswith("latin1.ipynb:") and "cannot decode" in errors["latin1.ipynb"]
    assert errors["py2.ipynb"] == "py2.ipynb:cell 2:1:1: Python 2 syntax, not migrated (print statement)"
    assert errors["notebook.py"] == ("notebook.py:1:1: a Jupyter notebook (JSON), not Python: rename it to "
                                     "notebook.ipynb")
    assert re.fullmatch(r"blob\.ipynb:1:1: notebook is 65 MiB, over the 64 MiB limit \(outputs\?\); clear its "
                        r"outputs first .*", errors["blob.ipynb"])
    for name, data in files.items():
        if name != "fine.ipynb":
            assert (tmp_path / name).read_bytes() == data, name
    assert sources(tmp_path / "fine.ipynb") == ["import torch\nx = torch.ones(1)"]


def test_no_notebooks_switch_and_checkpoints(tmp_path):
    legacy = notebook_bytes([code("import torch\nx = torch.ones(1).cuda(async=True)")])
    (tmp_path / "nb.ipynb").write_bytes(legacy)
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").write_bytes(legacy)
    (tmp_path / "train.py").write_text("import torch\nx = torch.ones(1).cuda(async=True)\n")

    result = run("rewrite", "--check", "--no-notebooks", ".", "nb.ipynb", cwd=tmp_path)
    assert result.stdout.splitlines() == ["would rewrite train.py"], result.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.torch-migrate]\nnotebooks = false\n")
    assert run("rewrite", "--check", ".", cwd=tmp_path).stdout.splitlines() == ["would rewrite train.py"]
    (tmp_path / "pyproject.toml").write_text("[tool.torch-migrate]\nnotebooks = true\n")
    assert run("rewrite", "--check", ".", cwd=tmp_path).stdout.splitlines() == ["would rewrite nb.ipynb",
                                                                                  "would rewrite train.py"]
    assert (tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").read_bytes() == legacy


def test_cached_findings_keep_their_cells(tmp_path, mnist):
    env = dict(os.environ, TORCH_MIGRATE_CACHE_DIR=str(tmp_path / "cache"))
    cold = torch_migrate("check", "mnist.ipynb", cwd=mnist.parent, env=env)
    warm = torch_migrate("check", "mnist.ipynb", cwd=mnist.parent, env=env)
    assert cold.returncode == warm.returncode == 1
    assert warm.stdout == cold.stdout and "mnist.ipynb:cell 7:12:46: TM301" in warm.stdout


def test_change_map_entries_name_the_cell(mnist):
    result = run("rewrite", "--change-map", "changes.json", "mnist.ipynb", cwd=mnist.parent)
    assert result.returncode == 0
    entries = json.loads((mnist.parent / "changes.json").read_text())
    assert {(e["cell"], e["code"]) for e in entries} >= {(7, "TM301"), (9, "TM102"), (4, "TM201")}
    for entry in entries:
        lines = sources(mnist)[entry["cell"] - 1].splitlines()
        assert 1 <= entry["line"] <= entry["end_line"] <= len(lines), entry


# -- rules that break cells are refused ---------------------------------------------------
def with_rule(name: str) -> str:
    """An entry point that adds ``test_notebooks.<name>`` to the registry, then runs the command line."""
    return (f"import sys; sys.path.insert(0, {str(TESTS)!r}); import codemods, test_notebooks; "
            f"codemods.all_rules().append(test_notebooks.{name}); sys.argv[0] = 'torch-migrate'; "
            "from migrate.cli import main; main()")


class WrapAll(Rule):
    """Wraps the whole module in `if True:` (a fix no notebook can take: it spans every cell)."""

    code, name, summary, triggers = "TM981", "wrap-all", "wraps everything", ("wrap_me",)

    def visit_Module(self, node):
        self.report(node, "wrapped", lambda old: old.with_changes(body=[cst.If(
            test=cst.Name("True"), body=cst.IndentedBlock(body=list(old.body)))]))


class DropCalls(Rule):
    """Removes every call statement, IPython placeholders included (a rule that deletes too much)."""

    code, name, summary, triggers = "TM982", "drop-calls", "drops calls", ("drop_me",)

    def visit_SimpleStatementLine(self, node):
        if isinstance(node.body[0], cst.Expr) and isinstance(node.body[0].value, cst.Call):
            self.report(node, "dropped", lambda old: cst.RemoveFromParent())


@pytest.mark.parametrize("rule,text,message", [
    ("WrapAll", "wrap_me = 1", r"nb\.ipynb:cell 1:1:1: a fix crossed a cell boundary, so the cells cannot be told "
                               r"apart after the rewrite; file left untouched"),
    ("DropCalls", "drop_me()", r"nb\.ipynb:cell 2:1:1: a fix moved or removed the IPython line `%time f\(\)` "
                               r"\(cell 2\); file left untouched"),
])
def test_a_fix_that_breaks_the_cells_leaves_the_notebook_untouched(tmp_path, rule, text, message):
    data = notebook_bytes([code(f"import torch\n{text}"), code("%time f()\ng = 2")])
    (tmp_path / "nb.ipynb").write_bytes(data)
    result = run("rewrite", "nb.ipynb", cwd=tmp_path, script=with_rule(rule))
    assert result.returncode == 3, result.stderr
    assert re.search(rf"^{message}$", result.stderr, re.M), result.stderr
    assert (tmp_path / "nb.ipynb").read_bytes() == data
