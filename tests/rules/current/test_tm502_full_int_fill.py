"""TM502: `torch.full` with an int fill keeps the legacy float dtype."""
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from current_support import codes, execute, migrate


def test_full_labels_train_again_after_migration():
    source = """
    import torch
    import torch.nn as nn
    real_label = 1
    fake_label = 0
    criterion = nn.BCELoss()
    out = torch.sigmoid(torch.zeros(4))
    label = torch.full((4,), real_label)
    loss_real = criterion(out, label)
    label = torch.full((4,), fake_label)
    loss_fake = criterion(out, label)
    """
    with pytest.raises(RuntimeError, match="expected Float"):
        execute(textwrap.dedent(source))
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM502", "TM502"]
    done = execute(outcome.text)
    assert done["label"].dtype == torch.float32
    assert done["loss_real"].item() == pytest.approx(np.log(2), rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(-2 ** 53, 2 ** 53), st.sampled_from([torch.float32, torch.float64]))
def test_full_fill_rewrite_is_the_legacy_default_float(value, default):
    """Legacy: the int converted straight to the default dtype. The rewrite must give the same value."""
    text = migrate(f"import torch\nt = torch.full((1,), {value})\n").text
    saved = torch.get_default_dtype()
    try:
        torch.set_default_dtype(default)
        migrated = execute(text)["t"]
        legacy = torch.tensor([value], dtype=torch.int64).to(default)
    finally:
        torch.set_default_dtype(saved)
    assert migrated.dtype == default and torch.equal(migrated, legacy)


def test_full_bool_fill_and_huge_int():
    assert "torch.full((2,), 1.0)" in migrate("import torch\nm = torch.full((2,), True)\n").text
    literal = migrate(f"import torch\nm = torch.full((2,), {2 ** 60})\n")
    assert literal.findings and not literal.findings[0].fixable
