"""The behaviour changes after 0.4 that break legacy scripts on current PyTorch, and how the tool handles each.

Every row is checked on the installed torch by its script in ``tests/rules/legacy_behaviour/``;
``python -m migrate.docs`` renders the table into the README.
"""
from __future__ import annotations

from typing import Dict, Tuple


def _change(change: str, version: str, handling: str, script: str) -> Dict[str, str]:
    """A ``BEHAVIOUR_CHANGES`` row; ``script`` (in tests/rules/legacy_behaviour/) shows it on current torch."""
    return {"change": change, "version": version, "handling": handling, "script": script}


# handling: a rule code, "harness compat", or "not handled: <why>".
BEHAVIOUR_CHANGES: Tuple[Dict[str, str], ...] = (
    _change("`torch.load` defaults to `weights_only=True` and refuses pickled modules, optimizers, "
            "`argparse.Namespace` and numpy values (state dicts, tensors and plain containers still load)",
            "2.6", "TM501", "load_weights_only.py"),
    _change("`torch.full(size, <int or bool>)` returns int64/bool instead of the default float dtype "
            "(e.g. BCELoss then fails: 'Found dtype Long but expected Float')",
            "1.7 (1.5 warned, 1.6 raised)", "TM502", "full_dtype.py"),
    _change("`.numpy()` on a tensor that requires grad raises (0.3 code called it on `.data`)",
            "0.4", "TM503", "numpy_requires_grad.py"),
    _change("`/` and `torch.div` on integer tensors divide truly (they truncated toward zero); "
            "`t /= 2` on an integer tensor raises; `//` floors (it truncated until 1.13)",
            "1.7 (1.5 warned, 1.6 raised)", "TM504", "integer_division.py"),
    _change("uint8 masks: `masked_fill(_)`, `masked_select`, `masked_scatter` and `x[mask] = v` raise; "
            "`x[mask]` and `torch.where` only warn", "1.2 deprecated, later removed", "TM505",
            "uint8_masks.py"),
    _change("`lr_scheduler.step()` before `optimizer.step()`: the constructor already sets the first "
            "lr, so stepping at the top of the epoch shifts the whole schedule one epoch early",
            "1.1", "TM506", "scheduler_order.py"),
    _change("torchvision `transforms.Scale`/`RandomSizedCrop` removed; `make_grid`/`save_image` "
            "`range=` is `value_range=`; `pretrained=True` still works with a warning and maps to the "
            "`*_Weights.IMAGENET1K_V1` enum", "torchvision 0.13-0.28", "TM507", "torchvision_renames.py"),
    _change("torchvision `transforms.ToTensor` (and `F.to_tensor`) on a tensor raises 'pic should be PIL Image or "
            "ndarray' while the other transforms take tensors", "torchvision 0.8 (tensor transforms)", "TM512",
            "torchvision_tensor_inputs.py"),
    _change("torchvision `Normalize` with 3-channel mean/std on a 1-channel image raises (legacy torchvision "
            "zipped the statistics with the channels and used the first)", "torchvision 0.2.2", "TM703",
            "torchvision_tensor_inputs.py"),
    _change("torchvision datasets' `train_data`/`train_labels`/`test_*` are `data`/`targets` (MNIST keeps "
            "warning aliases, CIFAR's are gone)", "torchvision 0.2.2", "TM702", "torchvision_tensor_inputs.py"),
    _change("`F.grid_sample`/`F.affine_grid` default `align_corners` changed from True to False "
            "(values differ; a warning on every call)", "1.3", "TM508", "grid_sample_align.py"),
    _change("numpy aliases of builtins `np.float`, `np.int`, `np.object`, `np.str`, `np.complex`, "
            "`np.unicode` removed (numpy 1.24; torch 2.13 runs on numpy 2)", "numpy 1.24", "TM509",
            "numpy_aliases.py"),
    _change("legacy autograd `Function` with a non-static `forward` (called as `MyFn()(x)` or `MyFn(k)(x)`) raises; "
            "`ctx.saved_variables` warns (`saved_tensors`)",
            "1.3 (deprecated since 0.4)", "TM510", "legacy_autograd_function.py"),
    _change("elementwise results (comparisons, arithmetic, conversions) keep the layout of a transposed input "
            "instead of being contiguous: `.view()` of them raises 'view size is not compatible with input tensor's "
            "size and stride' (the ImageNet `accuracy()`'s `correct[:k].view(-1)`)", "1.7 (pytorch/examples#836)",
            "TM511", "view_non_contiguous.py"),
    _change("comparison results are `bool`, not uint8: `1 - (x > 0)` and `-(x > 0)` raise, "
            "`(a > 0) + (b > 0)` is a logical or", "1.2",
            "not handled: the legacy uint8 arithmetic has no short exact spelling; TM505 covers masks",
            "bool_comparisons.py"),
    _change("`torch.arange` of integers returns int64 (a FloatTensor in 0.3 and 0.4.0): in-place float "
            "ops, `.mean()` and `requires_grad` on it raise", "0.4.1",
            "not handled: 0.4.1+ code relies on the int64 result (indexing), the era is not visible",
            "arange_dtype.py"),
    _change("`torch.randint` returns int64 (float in 0.4.x)", "1.0",
            "not handled: 0.4-era code converted it explicitly; 1.0+ code relies on int64",
            "arange_dtype.py"),
    _change("`.mean()` of an integer tensor raises ('could not infer output dtype')", "1.x",
            "not handled: the legacy integer mean is not known exactly", "arange_dtype.py"),
    _change("`torch.set_default_tensor_type` is deprecated (still works, warns)", "2.1",
            "not handled: still works", "removed_apis.py"),
    _change("`torch.gels`, `torch.rfft` removed; `torch.stft` needs `return_complex`", "1.2-2.0",
            "not handled: renamed/removed functions are TM4xx's", "removed_apis.py"),
    _change("`torch.utils.serialization.load_lua`, `torch.legacy`, `torch.utils.trainer`, "
            "`dataloader.DataLoaderIter` removed", "1.0", "not handled: no replacement in torch",
            "removed_apis.py"),
    _change("unchanged, checked: `torch.cat` with an empty 1-D tensor, `index_add_`, `nonzero()` shape, "
            "`Tensor.type()` strings, `torch.norm`, `sum()` of uint8 (int64), `pin_memory` without GPU "
            "(warns), `nn.DataParallel` on CPU, `register_backward_hook`", "-",
            "nothing to do", "unchanged_apis.py"),
)
