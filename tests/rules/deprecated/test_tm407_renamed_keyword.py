"""TM407: the old keywords fail (or warn) on this torch; the new ones mean what the old ones meant."""
import pytest
import torch



def test_retain_variables_is_a_type_error_and_retain_graph_keeps_the_graph():
    """TM407's premise on the installed torch: the old keyword fails, the new one means what it meant."""
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(TypeError):
        y.backward(retain_variables=True)
    y.backward(retain_graph=True)
    y.backward()  # the graph was kept for a second pass
    assert torch.equal(x.grad, 4 * x.detach())
