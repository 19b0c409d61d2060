"""TM1xx: ``torch.autograd.Variable``, ``volatile=`` and ``Variable`` in type checks.

Since 0.4 tensors carry autograd state themselves and ``Variable`` is a shim
with *different* semantics from the 0.3 wrapper:

- ``Variable(t)`` is ``t.detach()``: a new leaf that shares storage and never
  requires grad, even when ``t`` has a graph. Dropping the wrapper is exact only
  when ``t`` provably has no graph; otherwise the cut is kept as ``.detach()``.
- ``Variable(t, requires_grad=True)`` is ``t.detach().requires_grad_()``: ``t``
  itself is left alone.
- ``volatile=True`` only warns; the legacy meaning ("no graph for anything
  computed from this") is ``torch.no_grad()`` around the inference code.
- ``type(t) == Variable`` is always False, ``isinstance(t, Variable)`` is a
  roundabout ``isinstance(t, torch.Tensor)``.

One rule per module (``tm101_variable_wrapper.py``, ...), found by ``codemods.family_rules``; they share
one analysis per file (``analysis.py``: typed facts, each of a kind one rule owns) fed from the engine's
traversal by ``common.py``.
"""
