"""Printed text: what differs between two runs of one program is not a difference; what a
migration changes is (no subprocess: fast)."""
from __future__ import annotations

import pytest

from migrate.harness import text

OLD = text.Context.of("/home/me/project", "/home/me/project/train.py")
NEW = text.Context.of("/tmp/torch-migrate-new-x1/tree", "/tmp/torch-migrate-new-x1/tree/train_migrated.py")
FLOAT32 = (1.3e-6, 1e-5)


def differ(old: str, new: str, drop_warnings: bool = False) -> text.StreamDifference | None:
    return text.compare_streams(text.normalise(old, OLD, drop_warnings)[0], text.normalise(new, NEW, drop_warnings)[0],
                                *FLOAT32)


@pytest.mark.parametrize("old, new", [
    ("epoch 1 took 0.53s\n", "epoch 1 took 1.91s\n"),
    ("done in 12 ms, 512 samples/s\n", "done in 7 ms, 1034 samples/s\n"),
    ("2024-01-02 10:11:12,345 INFO loss 0.5\n", "2025-03-04 11:12:13,999 INFO loss 0.5\n"),
    ("finished at Mon Jan  1 12:00:00 2024\n", "finished at Tue Feb  2 13:01:02 2024\n"),
    ("| epoch 1 | ms/batch 45.67 | loss 5.67 |\n", "| epoch 1 | ms/batch 12.01 | loss 5.67 |\n"),
    ("Epoch: [0][10/50]\tTime 0.512 (0.612)\tData 0.001 (0.050)\tLoss 6.9 (6.9)\n",
     "Epoch: [0][10/50]\tTime 0.101 (0.220)\tData 0.300 (0.400)\tLoss 6.9 (6.9)\n"),
    ("scratch /tmp/tmpab12cd/x.pt\n", "scratch /tmp/tmpzz99qq/x.pt\n"),
    ("model <__main__.Net object at 0x7f3a2b1c0d90>\n", "model <__main__.Net object at 0x7f11aa22bb30>\n"),
    ("saved /home/me/project/out/model.pt\n", "saved /tmp/torch-migrate-new-x1/tree/out/model.pt\n"),
    ("usage: train.py [-h]\n", "usage: train_migrated.py [-h]\n"),
    ("worker pid 4242 started\n", "worker pid 977 started\n"),
    ("\r 33%|###  | 1/3 [00:00<00:01, 9.1it/s]\r100%|#####| 3/3 [00:01<00:00, 9.3it/s]\n",
     "\r 50%|##   | 1/3 [00:01<00:02, 1.1it/s]\r 66%|#### | 2/3 [00:01<00:01, 1.5it/s]"
     "\r100%|#####| 3/3 [00:02<00:00, 1.2it/s]\n"),
    ("\x1b[32mloss 0.25\x1b[0m\n", "loss 0.25\n"),
    ("loss 0.123456\n", "loss 0.1235\n"),  # the same float at another printed precision
    ("loss 0.1234\n", "loss 0.1235\n"),  # two values within tolerance may round to neighbours
    ("loss 0.5\n\n\n", "loss 0.5\n"),
], ids=["duration", "rate", "log timestamp", "ctime", "ms/batch", "imagenet meters", "temp path", "address",
        "root", "script name", "pid", "progress bar redraws", "escape codes", "precision", "rounding",
        "trailing blank lines"])
def test_what_differs_between_runs_of_one_program_is_no_difference(old, new):
    assert differ(old, new) is None


def test_warnings_are_left_out_of_stderr_only():
    warned = ("/x/train.py:12: UserWarning: volatile was removed and now has no effect.\n"
              "  data = Variable(data, volatile=True)\nloss 0.5\n")
    assert differ(warned, "loss 0.5\n", drop_warnings=True) is None
    assert differ(warned, "loss 0.5\n") is not None


@pytest.mark.parametrize("old, new, what", [
    ("acc 0.5\n", "acc tensor(0.5000)\n", "printed value changed type: 0.5 in OLD, tensor(0.5000) in NEW"),
    ("positive False\n", "positive tensor(False)\n", "printed value changed type: False in OLD, tensor(False) in NEW"),
    ("loss 0.5\n", "loss tensor(0.5000, grad_fn=<NllLossBackward0>)\n", "printed value changed type"),
    ("[1.0, 2.0]\n", "tensor([1., 2.])\n", "printed value changed type"),
    ("correct 5\n", "correct 5.0\n", "printed value changed type: 5 in OLD, 5.0 in NEW"),
    ("mean 0.5\n", "mean np.float64(0.5)\n", "printed value changed type"),
    ("Accuracy: 45/512 (9%)\n", "Accuracy: 46/512 (9%)\n", "45 in OLD, 46 in NEW"),
    ("loss 0.1234\n", "loss 0.1240\n", "0.1234 in OLD, 0.1240 in NEW"),
    ("epoch 1 took 0.53s\n", "epoch 2 took 0.53s\n", "1 in OLD, 2 in NEW"),
    ("train loss 0.5\n", "test loss 0.5\n", "text differs"),
    ("a\nb\n", "a\nb\nc\n", "NEW printed 1 more line"),
], ids=["tensor", "tensor bool", "grad_fn", "list", "int to float", "numpy", "count", "beyond tolerance",
        "number beside a duration", "text", "extra line"])
def test_what_a_migration_changes_is_a_difference(old, new, what):
    found = differ(old, new)
    assert found is not None and found.difference.what.startswith(what)


def test_the_first_difference_names_its_line_and_counts_the_others():
    found = differ("a 1\nb 2\nc 3\nd 4\n", "a 1\nb 5\nc 3\nd 6\n")
    assert (found.old.number, found.old.shown, found.new.shown, found.differing) == (2, "b 2", "b 5", 2)


def test_labelled_numbers_form_series_and_time_columns_of_a_table_are_masked():
    lines = text.normalise("Test set: Average loss: 0.1234, Accuracy: 45/512 (9%)\n"
                           "Test set: Average loss: 0.1000, Accuracy: 50/512 (10%)\n", OLD)[0]
    series = text.series(lines)
    labelled = {lines[0].labels[index]: [v.text for _, v in found] for (_, index), found in series.items()}
    assert labelled == {"Average loss": ["0.1234", "0.1000"], "Accuracy": ["45", "50"]}
    assert text.mask_table(["epoch,acc,seconds", "1,0.5,12.3"]) == ["epoch,acc,seconds", "1,0.5,<time>"]
    assert text.mask_table(["1,2", "3,4"]) == ["1,2", "3,4"]
