"""TM705: apex O1 becomes autocast + GradScaler. apex cannot run here (nor build against current torch), so
the migrated script runs on the CPU, where both the CUDA autocast and the CUDA GradScaler switch themselves
off: it must train exactly like the same loop written in plain float32, a GAN's two updates included."""
import torch
from ecosystem_support import applied, execute, migrate

GAN = """
import torch
import torch.nn.functional as F
from apex import amp

torch.manual_seed(0)
G, D = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
[G, D], [opt_g, opt_d] = amp.initialize([G, D], [opt_g, opt_d], opt_level='O1')
"""
SINGLE = """
import torch
import torch.nn.functional as F
from apex import amp

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level='O1', loss_scale='dynamic')
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
for x, y in data:
    optimizer.zero_grad()
    out = model(x)
    loss = F.mse_loss(out, y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""


def test_migrated_o1_loop_trains_like_float32_where_cuda_is_absent():
    outcome = migrate(SINGLE, unsafe=True)
    assert set(applied(outcome)) == {"TM705"} and "apex" not in outcome.text
    assert "scaler.scale(loss).backward()" in outcome.text and "scaler.update()" in outcome.text
    assert 'with torch.amp.autocast("cuda"):\n        out = model(x)\n        loss = F.mse_loss(out, y)' in outcome.text
    migrated, _ = execute(outcome.text)
    reference, _ = execute(SINGLE.replace("from apex import amp\n", "").replace(
        "model, optimizer = amp.initialize(model, optimizer, opt_level='O1', loss_scale='dynamic')\n", "").replace(
        "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n        scaled_loss.backward()\n",
        "    loss.backward()\n"))
    assert torch.equal(migrated["model"].weight, reference["model"].weight)
    torch.manual_seed(0)
    assert not torch.equal(migrated["model"].weight, torch.nn.Linear(4, 1).weight)  # it trained


def test_o2_several_models_and_master_params_are_reported_and_left():
    for source in (SINGLE.replace("'O1'", "'O2'"), GAN,
                   SINGLE + "torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)\n"):
        outcome = migrate(source, unsafe=True)
        assert outcome.text == source and outcome.findings and not applied(outcome)
    assert "fp16 master weights" in migrate(SINGLE.replace("'O1'", "'O2'")).findings[0].message
