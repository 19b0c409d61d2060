"""TM406: the rename to `interpolate` is exact today; the unsafe `align_corners=True` restores 0.3's values."""
import torch

from deprecated_support import PRELUDE, migrate, run


def test_upsample_rename_is_exact_today_and_the_unsafe_fix_restores_0_3_corners():
    source = "result = F.upsample(x, scale_factor=2, mode='bilinear')"
    safe = migrate(PRELUDE + source)
    assert [(f.code, f.applied) for f in safe.findings] == [("TM401", True), ("TM406", False)]
    unsafe = migrate(PRELUDE + source, unsafe=True)
    assert unsafe.text.endswith("F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)")
    namespace = {}
    exec(compile(unsafe.text, "<migrated>", "exec"), namespace)
    assert torch.equal(namespace["result"], run("result = F.upsample_bilinear(x, scale_factor=2)"))
    assert not torch.equal(namespace["result"], run(source))  # today's default differs from 0.3
