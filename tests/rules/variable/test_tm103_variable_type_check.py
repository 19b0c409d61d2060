"""TM103: `Variable` in type checks becomes `torch.Tensor`."""
import textwrap

import pytest

from variable_support import legacy, migrate, rewrite_line


# -- TM103 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("before,after", [
    ("ok = type(h) == Variable\n", "ok = isinstance(h, torch.Tensor)\n"),
    ("ok = type(h) is Variable\n", "ok = isinstance(h, torch.Tensor)\n"),
    ("ok = Variable == type(h)\n", "ok = isinstance(h, torch.Tensor)\n"),
    ("ok = (type(h) != Variable)\n", "ok = (not isinstance(h, torch.Tensor))\n"),
    ("ok = isinstance(h, Variable)\n", "ok = isinstance(h, torch.Tensor)\n"),
    ("ok = isinstance(h, (Variable, tuple))\n", "ok = isinstance(h, (torch.Tensor, tuple))\n"),
    ("ok = isinstance(h, (torch.Tensor, Variable))\n", "ok = isinstance(h, torch.Tensor)\n"),
    ("ok = type(h) in (Variable, list)\n", "ok = type(h) in (torch.Tensor, list)\n"),
    ("ok = issubclass(C, Variable)\n", "ok = issubclass(C, torch.Tensor)\n"),
    ("def f(x: Variable) -> Variable:\n    pass\n", "def f(x: torch.Tensor) -> torch.Tensor:\n    pass\n"),
])
def test_type_checks(before, after):
    assert rewrite_line(before) == after


def test_repackage_hidden_is_the_modern_helper():
    source = legacy("""
    def repackage_hidden(h):
        \"\"\"Wraps hidden states in new Variables, to detach them from their history.\"\"\"
        if type(h) == Variable:
            return Variable(h.data)
        else:
            return tuple(repackage_hidden(v) for v in h)
    """)
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent("""\
    import torch

    def repackage_hidden(h):
        \"\"\"Wraps hidden states in new Variables, to detach them from their history.\"\"\"
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)
    """)
