"""TM404: `dim=1` is the legacy implicit choice for 2- and 4-dim inputs only, hence unsafe."""
import pytest
import torch

from deprecated_support import PRELUDE, migrate, run


@pytest.mark.parametrize("shape,matches", [((2, 5), True), ((2, 3, 4, 5), True), ((2, 3, 4), False)])
def test_softmax_unsafe_dim_matches_the_legacy_choice_for_2_and_4_dim_inputs(shape, matches):
    source = f"x = torch.randn{shape}\nresult = F.log_softmax(x)"
    assert migrate(PRELUDE + source).text == PRELUDE + source  # reported only
    fixed = migrate(PRELUDE + source, unsafe=True).text
    assert fixed.endswith("F.log_softmax(x, dim=1)")
    namespace = {}
    exec(compile(fixed, "<migrated>", "exec"), namespace)
    legacy = run(source)
    assert torch.equal(legacy, namespace["result"]) is matches
