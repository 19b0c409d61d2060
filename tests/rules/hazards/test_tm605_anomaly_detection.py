"""TM605: anomaly detection left on; the fix switches it off."""
import warnings

import pytest
import torch

from hazard_support import CASES, load, rewritten


def test_anomaly_detection_stays_on():
    module = load(CASES / "anomaly_bad.py")
    module.enable_globally()
    assert torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(False)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        module.train(steps=1)


def test_anomaly_fix_switches_it_off(tmp_path):
    module, outcome = rewritten(tmp_path, "anomaly_bad.py", {"TM605"})
    assert "detect_anomaly()" not in outcome.text and "set_detect_anomaly(True)" not in outcome.text
    module.enable_globally()
    module.enable_by_keyword()
    assert not torch.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.train(steps=1)
        module.context_form(torch.nn.Linear(2, 1), torch.randn(1, 2))
