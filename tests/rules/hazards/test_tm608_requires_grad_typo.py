"""TM608: `require_grad` fails or does nothing; the fix spells the real API."""
import pytest

from hazard_support import CASES, load, rewritten


def test_typos_fail_or_do_nothing():
    module = load(CASES / "typo_bad.py")
    with pytest.raises(AttributeError, match="require_grad_"):
        module.method_typo()
    assert module.attribute_typo().requires_grad is False
    with pytest.raises(TypeError):
        module.keyword_typo()


def test_typo_fix_spells_the_real_api(tmp_path):
    module, _ = rewritten(tmp_path, "typo_bad.py", {"TM608"})
    assert module.method_typo().requires_grad
    assert module.attribute_typo().requires_grad
    assert module.keyword_typo().requires_grad
