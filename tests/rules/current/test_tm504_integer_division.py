"""TM504: integer tensor division keeps the legacy truncation."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from current_support import execute, migrate


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=5), st.integers(-50, 50).filter(bool))
def test_integer_division_rewrite_truncates_like_legacy(values, divisor):
    source = f"import torch\nidx = torch.LongTensor({values})\nq = idx / {divisor}\nidx /= {divisor}\n"
    text = migrate(source).text
    assert "rounding_mode" in text
    done = execute(text)
    legacy = [int(v / divisor) for v in values]  # C division: truncation toward zero
    assert done["q"].tolist() == legacy and done["q"].dtype == torch.int64
    assert done["idx"].tolist() == legacy


def test_integer_division_diagnostics_and_quiet_float_math():
    source = """
    import torch
    lengths = torch.LongTensor([3, 4])
    half = lengths / n
    acc = correct / total
    avg = loss_sum / len(loader)
    ratio = torch.arange(10) / 2
    scaled = lengths.float() / 2
    """
    outcome = migrate(source)
    assert [(f.code, f.line, f.fixable) for f in outcome.findings] == [("TM504", 4, False)]


def test_integer_division_without_torch_name_imports_it():
    source = "from torch import LongTensor\nt = LongTensor([5]) / 2\n"
    text = migrate(source).text
    assert text == "from torch import LongTensor\nimport torch\n\nt = torch.div(LongTensor([5]), 2, rounding_mode=\"trunc\")\n"
    assert execute(text)["t"].tolist() == [2]


def test_integer_division_through_reassignment():
    source = "import torch\nt = x.long()\nt = t + 1\nr = t / 2\n"
    assert "torch.div(t, 2, rounding_mode=\"trunc\")" in migrate(source).text
