"""TM405: every reported function is flagged and left; the removed ones are really gone."""
import pytest
import torch

from codemods.torchapi.deprecations import RENAMES, REPORTED, SPECIAL_RENAMES

from deprecated_support import migrate, resolve


@pytest.mark.parametrize("qualified", sorted(q for q, why in REPORTED.items() if why.startswith("removed")))
def test_reported_removed_functions_are_gone_on_this_torch(qualified):
    try:
        function = resolve(qualified)
    except AttributeError:
        return
    if not callable(function):
        return  # `torch.fft` is a module now
    with pytest.raises((RuntimeError, TypeError)):
        function(torch.eye(3), torch.eye(3))

def test_reported_and_renamed_tables_do_not_overlap():
    assert not set(REPORTED) & (set(RENAMES) | set(SPECIAL_RENAMES))

@pytest.mark.parametrize("qualified", sorted(REPORTED))
def test_reported_functions_are_flagged_not_rewritten(qualified):
    module, _, name = qualified.rpartition(".")
    source = f"import {module}\n\nr = {qualified}(x)\n"
    outcome = migrate(source)
    assert outcome.text == source
    assert [f.code for f in outcome.findings] == ["TM405"]
