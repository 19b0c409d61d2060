"""TM604: `retain_graph=True` on the only backward keeps graphs alive and hides the seed bug."""
import pytest

from hazard_support import CASES, SECOND_BACKWARD, check, load, rule


def test_retained_graphs_stay_alive():
    module = load(CASES / "retain_graph_bad.py")
    module.bptt_windows(), module.frozen_features()
    for loss in (module.training_loop(), module.single_step(), module.functional_backward()[0]):
        loss.backward()  # the buffers of the last graph were kept: it can be back-propagated again


def test_retain_graph_hides_the_seed_bug(tmp_path):
    """Without retain_graph the seed's loop fails; without the needless requires_grad it does not need it."""
    text = (CASES / "retain_graph_bad.py").read_text()
    bare = tmp_path / "bare.py"
    bare.write_text(text.replace("loss.backward(retain_graph=True)  # TM604", "loss.backward()"))
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        load(bare, "retain_graph_bare").frozen_features()
    fixed = check(bare.read_text(), [rule("TM607")], unsafe_fixes=True).text
    assert "style = torch.rand(1, 3, 4, 4)  # TM607" in fixed
    (tmp_path / "fixed.py").write_text(fixed)
    load(tmp_path / "fixed.py", "retain_graph_fixed").frozen_features()
