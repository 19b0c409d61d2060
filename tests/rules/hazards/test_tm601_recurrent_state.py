"""TM601: recurrent state carried with its graph fails on the second backward; the detach fix trains."""
import pytest

from hazard_support import CASES, SECOND_BACKWARD, load, rewritten


def test_recurrent_state_fails_on_the_second_backward():
    module = load(CASES / "recurrent_bad.py")
    for hazard in module.HAZARDS:
        with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
            hazard()


def test_detach_fix_lets_the_seed_cell_train(tmp_path):
    module, outcome = rewritten(tmp_path, "recurrent_bad.py", {"TM601"})
    assert "        self.hx = out.detach()  # TM601\n" in outcome.text
    module.seed_cell(steps=3)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        module.lstm_loop()  # a tuple state has no unsafe fix: only reported
