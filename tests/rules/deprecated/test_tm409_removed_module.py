"""TM409: removed modules. The migrated `torch._six` users run on this torch and compute what they computed
on Python 3 before 2.0; the rest is reported; compatibility shims and other `_six` modules are left."""
import pytest
import torch

from codemods.torchapi.deprecations import REMOVED_MODULES

from deprecated_support import execute, migrate, rule

TM409 = [rule("TM409")]

SIX_USER = """
import torch
from torch._six import container_abcs, string_classes, int_classes, inf, nan, PY3, PY37
from torch import _six


def flatten(x):
    if isinstance(x, string_classes):
        return [x]
    if isinstance(x, int_classes):
        return [x * 2]
    if isinstance(x, container_abcs.Mapping):
        return sorted(x)
    if isinstance(x, container_abcs.Iterable):
        return [y for item in x for y in flatten(item)]
    return [x]


def clip(norms, norm_type=2):
    total = max(norms) if norm_type == inf else sum(n ** norm_type for n in norms) ** (1.0 / norm_type)
    return total if total == total else _six.nan


result = (flatten(["ab", b"c", 3, {"k": 1}, (4, [5])]), clip([3.0, 4.0]), clip([3.0, 4.0], inf), PY3 and PY37,
          nan != nan, isinstance(inf, float))
"""


def test_six_names_become_what_they_were_on_python_3():
    with pytest.raises(ModuleNotFoundError):
        execute(SIX_USER)
    outcome = migrate(SIX_USER, TM409)
    assert "_six" not in outcome.text
    assert "import math" in outcome.text and "import collections.abc" in outcome.text
    result = execute(outcome.text)["result"]
    assert result == (["ab", b"c", 6, "k", 8, 10], 5.0, 4.0, True, True, True)


@pytest.mark.parametrize("source", [
    "import torch\nfrom torch._six import with_metaclass\n\n\nclass A(with_metaclass(Meta, object)):\n    pass\n",
    "import torch\nfrom torch.utils.serialization import load_lua\n\nnet = load_lua('model.t7')\n",
    "import torchtext\nfrom torchtext import data\n\nTEXT = data.Field(lower=True)\nit = data.BucketIterator(ds, 32)\n",
    "import torch\nfrom torchtext.legacy.data import Field\n\nTEXT = Field()\n",
    "import torch\nfrom torch.utils.data.dataloader import DataLoaderIter\n\nit = DataLoaderIter(loader)\n",
    "import torch.utils.ffi\n\next = torch.utils.ffi.create_extension('x', headers=[])\n",
    "import torch\nimport torchtext.legacy.data as data\n\nTEXT = data.Field(lower=True)\n",
    "import torch\n\n\ndef clip(norms):\n    from torch._six import inf\n    return max(norms) == inf\n",
])
def test_removed_without_replacement_is_reported_and_left(source):
    outcome = migrate(source, TM409)
    assert outcome.text == source
    assert outcome.findings and all(f.code == "TM409" and not f.fixable for f in outcome.findings)


@pytest.mark.parametrize("source", [
    "import torch\ntry:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf\nx = inf\n",
    "import torch\nif torch.__version__ < '2':\n    from torch._six import string_classes\nelse:\n"
    "    string_classes = str\n",
    "import torch\nimport six\nfrom six.moves import queue\nok = isinstance(x, six.string_types)\n",
    "import torch\nfrom mypkg._six import inf, string_classes\nfrom . import _six\nx = _six.inf\n",
    "import torch\nimport torch.utils.serialization\nimport torch.utils.model_zoo as model_zoo\n"
    "sd = model_zoo.load_url(url)\n",
    "import torch\nfrom torch.utils.data import default_collate\nbatch = default_collate(items)\n",
])
def test_near_misses_are_left_alone(source):
    outcome = migrate(source, TM409, unsafe=True)
    assert outcome.text == source and not outcome.findings


def test_private_default_collate_moves_to_a_public_name_that_min_torch_has():
    source = ("import torch\nfrom torch.utils.data._utils.collate import default_collate\n"
              "b = default_collate([1, 2])\nc = torch.utils.data._utils.collate.default_collate([3])\n")
    current = migrate(source, TM409).text
    assert current == ("import torch\nfrom torch.utils.data import default_collate\nb = default_collate([1, 2])\n"
                       "c = torch.utils.data.default_collate([3])\n")
    older = migrate(source, TM409, min_torch=(1, 10)).text
    assert older == source.replace("_utils.collate", "dataloader")
    for text in (current, older):
        result = execute(text)
        assert torch.equal(result["b"], torch.tensor([1, 2])) and torch.equal(result["c"], torch.tensor([3]))


@pytest.mark.parametrize("name", sorted(k for k in REMOVED_MODULES if k.startswith("torch._six.")))
def test_every_six_replacement_is_plain_python(name):
    entry = REMOVED_MODULES[name]
    if entry.replacement is None:
        return
    namespace = {}
    exec("".join(f"import {m}\n" for m in entry.imports) + f"value = {entry.replacement}\n", namespace)
    assert namespace["value"] is not None
