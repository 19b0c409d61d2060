"""TM505: uint8 masks become bool at their uses."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from current_support import codes, execute, migrate


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=8))
def test_uint8_mask_rewrite_selects_what_uint8_selected(values):
    source = (f"import torch\nx = torch.arange({len(values)}.0)\nmask = torch.ByteTensor({values})\n"
              "filled = x.masked_fill(mask, -1)\npicked = x.masked_select(mask)\ny = x.clone()\ny[mask] = 7\n")
    outcome = migrate(source)
    assert codes(outcome, applied=True) == ["TM505"] * 3
    done = execute(outcome.text)
    selected = np.array(values) != 0  # legacy: a non-zero byte selects
    assert done["picked"].tolist() == np.arange(len(values))[selected].tolist()
    assert done["filled"].tolist() == np.where(selected, -1, np.arange(len(values))).tolist()
    assert done["y"].tolist() == np.where(selected, 7, np.arange(len(values))).tolist()


def test_uint8_mask_from_a_function_of_the_file():
    source = """
    import torch
    def padding_mask(lengths, max_len):
        mask = torch.ByteTensor(len(lengths), max_len).zero_()
        for b, n in enumerate(lengths):
            mask[b, n:] = 1
        return mask
    mask = padding_mask([1, 2], 3)
    scores = torch.zeros(2, 3).masked_fill_(mask, -1.0)
    """
    outcome = migrate(source)
    assert "masked_fill_(mask.bool(), -1.0)" in outcome.text
    assert execute(outcome.text)["scores"].tolist() == [[0.0, -1.0, -1.0], [0.0, 0.0, -1.0]]
