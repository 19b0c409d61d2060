"""TM3xx: ``.data[0]``, 0.3 Python numbers, ``.data`` reads and ``.data`` updates.

In 0.3 a ``Variable`` wrapped a tensor and ``.data`` unwrapped it. A loss was a
1-element 1-dim tensor, so ``loss.data[0]`` was a Python number, and a full
reduction of a *tensor* (``x.data.sum()``, ``pred.eq(target).sum()``) returned
a Python number as well. Since 0.4 a loss is 0-dim (``loss.data[0]`` raises
IndexError), reductions return 0-dim tensors (counters silently turn into
tensors), and ``.data`` is an escape hatch that hides changes from autograd:
reads become ``detach()`` (same values; autograd still sees in-place changes)
and updates become ``with torch.no_grad():`` blocks.

One rule per module (``tm301_data_index_zero.py``, ...), found by ``codemods.family_rules``. The
rules stand on the file's semantic model (``codemods.model``) and on the family's own decisions
(``analysis.py``: for every ``.data`` attribute the one kind of site it is, so that no two fixes
touch the same ``.data``); ``common.py`` holds what their fixes share.
"""

# The behaviour changes the family handles, for the README's table (``migrate.docs``); each ``script`` (in
# tests/rules/legacy_behaviour/) shows the change on the installed torch.
BEHAVIOUR_CHANGES = (
    {"change": "an integer index into a 1-dim tensor gives a 0-dim tensor (0.3: a (1,) Variable, or a Python "
               "number for a plain tensor): `criterion(out, target[i])` with a (1, C) `out` raises 'Expected input "
               "batch_size (1) to match target batch_size (0)'; `'%s' % x[0]`, `print(x[0] > 0.5)` show "
               "`tensor(...)`; a 0-dim tensor is no dict key; `x.data[0]` of a (1,) value is a tensor",
     "version": "0.4", "handling": "TM306", "script": "zero_dim_index.py"},
)
