"""TM606: `.grad` of a non-leaf is None with a warning."""
import pytest

from hazard_support import CASES, load


def test_non_leaf_grad_is_none_with_a_warning():
    module = load(CASES / "nonleaf_grad_bad.py")
    for function in (module.doubled, module.viewed, module.module_output, module.matrix_product,
                     module.converted_leaf):
        with pytest.warns(UserWarning, match="not a leaf Tensor"):
            result = function()
        grads = result if isinstance(result, tuple) else (None, result)
        assert grads[-1] is None
