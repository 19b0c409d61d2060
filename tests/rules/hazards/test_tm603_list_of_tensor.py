"""TM603: `list(tensor)` hands the optimizer rows; `[tensor]` optimises the tensor."""
import pytest
import torch

from hazard_support import CASES, load, rewritten


def test_list_of_tensor_gives_the_optimizer_rows():
    module = load(CASES / "list_tensor_bad.py")
    before, after = module.seed_perturbation()
    assert torch.equal(before, after), "the perturbation was never optimised"
    for hazard in (module.starred_parameter, module.param_group, module.legacy_variable):
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            hazard()


def test_list_fix_optimises_the_tensor(tmp_path):
    module, outcome = rewritten(tmp_path, "list_tensor_bad.py", {"TM603"})
    assert "list(image_transformer.parameters()) + [perturbation]" in outcome.text
    assert "torch.optim.SGD([z], lr=0.1)" in outcome.text
    before, after = module.seed_perturbation()
    assert not torch.equal(before, after)
    module.starred_parameter(), module.param_group(), module.legacy_variable()
