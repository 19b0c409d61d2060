"""TM704: a script using only the API both writers share logs the same scalars through
`torch.utils.tensorboard` as through tensorboardX; a tensorboardX-only call keeps the file as it is."""
import pytest
from ecosystem_support import execute, migrate

pytest.importorskip("tensorboardX")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

SCRIPT = """
import torch
from tensorboardX import SummaryWriter

writer = SummaryWriter(logdir=LOGDIR, flush_secs=1)
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
for step in range(4):
    loss = (w ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    writer.add_scalar('train/loss', loss.item(), step)
    writer.add_histogram('w', w.detach(), step)
writer.close()
"""


def scalars(logdir):
    events = event_accumulator.EventAccumulator(str(logdir))
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars("train/loss")], events.Tags()["histograms"]


def test_the_migrated_writer_logs_the_same_scalars(tmp_path):
    outcome = migrate(SCRIPT, unsafe=True)
    assert "from torch.utils.tensorboard import SummaryWriter" in outcome.text
    assert "SummaryWriter(log_dir=LOGDIR, flush_secs=1)" in outcome.text
    assert {f.code for f in outcome.findings} == {"TM704"} and all(f.unsafe for f in outcome.findings)
    assert migrate(SCRIPT).text == SCRIPT  # unsafe: only with --unsafe-fixes
    execute(SCRIPT, LOGDIR=str(tmp_path / "old"))
    execute(outcome.text, LOGDIR=str(tmp_path / "new"))
    assert scalars(tmp_path / "old") == scalars(tmp_path / "new")
    assert len(scalars(tmp_path / "new")[0]) == 4


def test_a_tensorboardx_only_call_is_reported_and_nothing_moves():
    source = SCRIPT + "writer.export_scalars_to_json('scalars.json')\n"
    outcome = migrate(source, unsafe=True)
    assert outcome.text == source
    assert [f.code for f in outcome.findings] == ["TM704"] and "`export_scalars_to_json`" in outcome.findings[0].message
