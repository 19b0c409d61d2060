"""TM701: the device-specific amp names warn on every call since 2.4; the `torch.amp` spelling computes
the same and does not warn. CPU autocast (bfloat16) runs here, so old and new run side by side."""
import torch
from ecosystem_support import applied, execute, migrate

LEGACY = """
import torch
from torch.cuda.amp import GradScaler

torch.manual_seed(0)
model = torch.nn.Linear(8, 4)
x = torch.randn(16, 8)
scaler = GradScaler(2.0 ** 8, enabled=False)
outputs = []
for step in range(3):
    with torch.cpu.amp.autocast(True, torch.bfloat16):
        out = model(x)
    loss = out.float().pow(2).mean()
    scaler.scale(loss).backward()
    outputs.append(out)
"""


def test_migrated_amp_computes_the_same_in_bfloat16_without_the_warnings():
    old, old_warnings = execute(LEGACY)
    assert any("torch.cpu.amp.autocast(args...)` is deprecated" in m for m in old_warnings)
    assert any("torch.cuda.amp.GradScaler(args...)` is deprecated" in m for m in old_warnings)
    outcome = migrate(LEGACY)
    assert applied(outcome) == ["TM701", "TM701"]
    assert 'torch.amp.autocast("cpu", enabled=True, dtype=torch.bfloat16)' in outcome.text
    assert 'torch.amp.GradScaler("cuda", 2.0 ** 8, enabled=False)' in outcome.text
    assert "from torch.cuda.amp" not in outcome.text
    new, new_warnings = execute(outcome.text)
    assert not [m for m in new_warnings if "deprecated" in m], new_warnings
    assert all(o.dtype == n.dtype == torch.bfloat16 and o.equal(n)
               for o, n in zip(old["outputs"], new["outputs"]))
    assert old["model"].weight.grad.equal(new["model"].weight.grad)


def test_a_call_with_star_arguments_is_reported_not_rewritten():
    source = "import torch\n\nwith torch.cuda.amp.autocast(**amp_options):\n    y = model(x)\n"
    outcome = migrate(source)
    assert outcome.text == source and [f.code for f in outcome.findings] == ["TM701"]
    assert "with its arguments by name" in outcome.findings[0].message
