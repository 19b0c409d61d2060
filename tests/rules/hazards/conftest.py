import pytest
import torch


@pytest.fixture(autouse=True)
def _anomaly_off():
    """A test that switches anomaly detection on (TM605) must not leave it on for the others."""
    yield
    torch.autograd.set_detect_anomaly(False)
