"""TM509: ``np.float``/``np.int``/... (removed in NumPy 1.24) become the builtins they were."""
from __future__ import annotations

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.syntax import code


class NumpyBuiltinAliases(Rule):
    """``np.float``, ``np.int``, ``np.object``, ... were the Python builtins themselves; NumPy 1.24 removed them
    (AttributeError), and current PyTorch runs with NumPy 2. The builtin is exactly what they were."""

    code = "TM509"
    min_torch = "0.4"
    name = "numpy-builtin-aliases"
    summary = "`np.float`/`np.int`/`np.object`/... (removed in NumPy 1.24) become the builtins they were"
    triggers = tuple(f"{prefix}.{alias}" for prefix in ("np", "numpy") for alias in ("float", "int", "object", "str",
                                                                                    "complex", "unicode"))
    changes = (
        Example("import numpy as np\na = np.zeros(3, dtype=np.float)\nn = np.int(a.sum())\n",
                "import numpy as np\na = np.zeros(3, dtype=float)\nn = int(a.sum())\n"),
    )
    keeps = (
        "import numpy as np\na = np.zeros(3, dtype=np.float32)\nb = np.bool_(True)\n",
        "class np:\n    float = 1\nx = np.float\n",
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        builtin = torchapi.NUMPY_REMOVED_ALIASES.get(self.ctx.model.qualname(node) or "")
        if builtin is not None:
            self.report(node, f"`{code(node)}` was removed in NumPy 1.24: it was the builtin `{builtin}`",
                        lambda updated: cst.Name(builtin, lpar=updated.lpar, rpar=updated.rpar))


RULE = NumpyBuiltinAliases
