"""Encoding of every target kind, and whole-sequence accuracy (filler and padding never scored)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.harness.encoding import IGNORE, Encoder, encoded_test_set
from rasplab.harness.evaluate import evaluate, sequence_correct
from rasplab.seeding import generator
from rasplab.tasks import Example, get_task


def test_answer_targets_only_at_answer_and_eos():
    enc = Encoder(get_task("toy_majority"))
    ex = Example(
        ("<bos>", "1", "1", "0", "<sep>", "1", "<eos>"),
        (None, None, None, None, "1", "<eos>", None),
        3,
    )
    short = Example(("<bos>", "0", "<sep>", "0", "<eos>"), (None, None, "0", "<eos>", None), 1)
    batch = enc.encode([ex, short])
    assert batch.input_ids.shape == (2, 7)
    assert batch.scored.tolist() == [
        [False] * 4 + [True, True, False],
        [False, False, True, True] + [False] * 3,
    ]
    assert batch.pad_mask[1].tolist() == [True] * 5 + [False] * 2
    assert batch.input_ids[1, 5:].tolist() == [enc.pad_id] * 2
    classes = enc.classes
    assert batch.targets[0, 4] == classes.index("1") and batch.targets[0, 5] == classes.index(
        "<eos>"
    )
    assert (batch.targets[~batch.scored] == IGNORE).all()
    assert enc.num_outputs == len(get_task("toy_majority").classes)


def test_labels_next_set_and_regression_kinds():
    labels = Encoder(get_task("toy_prefix_parity"))
    b = labels.encode([get_task("toy_prefix_parity").sample(generator(0, "t"), 4)])
    assert labels.num_outputs == 2 and b.scored[0].tolist() == [False, True, True, True, True]

    sets = Encoder(get_task("toy_next_set"))
    b = sets.encode([get_task("toy_next_set").sample(generator(0, "t"), 2)])
    assert b.targets[0, :3].tolist() == [0, 0, 0]  # the set ('<eos>', 'a') is one class id
    assert b.scored[0].tolist() == [True, True, True, False]

    reg = Encoder(get_task("toy_mean"))
    b = reg.encode([Example(("<bos>", "1", "0"), (None, 1.0, 0.5), 2)])
    assert reg.num_outputs == 1 and b.targets.dtype == torch.float32
    assert b.targets[0].tolist() == [0.0, 1.0, 0.5] and b.scored[0].tolist() == [False, True, True]


def test_train_batch_offsets_fit_the_position_table():
    enc = Encoder(get_task("toy_majority"))
    batch = enc.train_batch(generator(0, "x"), Bin(1, 9), 64, max_positions=20)
    lengths = batch.pad_mask.sum(1)
    assert ((batch.offsets >= 0) & (batch.offsets + lengths <= 20)).all()
    assert len(set(batch.offsets.tolist())) > 3
    assert enc.train_batch(generator(0, "x"), Bin(1, 9), 4, None).offsets is None


class Oracle(torch.nn.Module):
    """A model that predicts the batch's targets, optionally wrong at chosen positions."""

    def __init__(self, batch, wrong=()):
        super().__init__()
        self.batch, self.wrong = batch, wrong

    def forward(self, ids, mask, offsets):
        targets = self.batch.targets.clamp(min=0)
        logits = torch.nn.functional.one_hot(targets, 6).float()
        for b, t in self.wrong:
            logits[b, t] = logits[b, t].roll(1)
        return logits


def test_accuracy_ignores_filler_and_padding():
    enc = Encoder(get_task("toy_majority"))
    task = get_task("toy_majority")
    examples = [task.sample(generator(1, "acc"), n) for n in (1, 3, 9, 9)]
    batch = enc.encode(examples)
    # wrong at an unscored position (filler) and in the padding: still all correct
    model = Oracle(batch, wrong=[(0, 0), (0, 6), (1, 1)])
    assert sequence_correct(model(batch.input_ids, None, None), batch).tolist() == [True] * 4
    # wrong at one scored position of example 2: only that example fails
    answer_pos = batch.scored[2].nonzero()[0].item()
    model = Oracle(batch, wrong=[(2, answer_pos)])
    assert sequence_correct(model(batch.input_ids, None, None), batch).tolist() == [
        True,
        True,
        False,
        True,
    ]
    metrics = evaluate(model, enc, {"all": ([batch], 4)})
    assert metrics["all"].accuracy == pytest.approx(0.75) and metrics["all"].count == 4


def test_regression_accuracy_is_within_tolerance():
    enc = Encoder(get_task("toy_mean"))
    batch = enc.encode(
        [
            Example(("<bos>", "1", "0"), (None, 1.0, 0.5), 2),
            Example(("<bos>", "1", "1"), (None, 1.0, 1.0), 2),
        ]
    )

    class Off(torch.nn.Module):
        def forward(self, ids, mask, offsets):
            return (batch.targets + torch.tensor([[9.0, 0.04, 0.0], [9.0, 0.0, 0.2]]))[..., None]

    m = evaluate(Off(), enc, {"b": ([batch], 2)}, tolerance=0.05)["b"]
    assert m.accuracy == 0.5  # example 2 is 0.2 off at a scored position
    assert m.mse == pytest.approx((0.04**2 + 0.2**2) / 4)  # position 0 (score 9 off) is filler


def test_test_sets_are_fixed_and_cached():
    enc = Encoder(get_task("toy_majority"))
    a, n = encoded_test_set(enc, {}, Bin(1, 9), 30, 0, 8)
    b, _ = encoded_test_set(enc, {}, Bin(1, 9), 30, 0, 8)
    assert a is b and n == 30 and len(a) == 4
    c, _ = encoded_test_set(enc, {}, Bin(1, 9), 30, 1, 8)  # another seed: another set

    def rows(batches):
        return {tuple(r.tolist()) for b in batches for r in b.input_ids}

    assert rows(a) != rows(c)


def _same_bits(a, b, positions):
    """Batches ``a`` and ``b`` hold the same tensors, dtypes included; offsets only with a
    position table."""
    for field in ("input_ids", "pad_mask", "targets", "scored", "offsets"):
        x, y = getattr(a, field), getattr(b, field)
        if field == "offsets" and positions is None:
            assert x is None and y is None
        else:
            assert x.dtype == y.dtype and torch.equal(x, y), field


@pytest.mark.parametrize(
    "name, options", [("simple_task", {"omega": 3.0}), ("modp_task", {"p": 5, "k": 1}),
                      ("modp_task", {"p": 3, "k": 0})],
)  # fmt: skip
@pytest.mark.parametrize("positions", [None, 96])
def test_array_batches_of_the_bounds_tasks_equal_the_example_path(name, options, positions):
    task = get_task(name, **options)
    fast, slow = Encoder(task), Encoder(task)
    slow._arrays = False  # the per-example path: sample_many, sample_offset, encode
    assert fast._arrays
    for seed in range(3):
        for bin in (Bin(1, 32), Bin(5, 5), Bin(3, 80)):
            a = fast.train_batch(generator(seed, "t"), bin, 200, positions)
            b = slow.train_batch(generator(seed, "t"), bin, 200, positions)
            _same_bits(a, b, positions)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("p, k", [(5, 1), (3, 0), (2, 1)])
def test_modp_offsets_keep_the_target_a_function_of_the_table_rows(fast, p, k):
    # ModPTask's target reads positions t = k (mod p); with APE offsets o the model sees the
    # table row o + t - 1, so the target must be the mean of the tokens on rows r with
    # r + 1 = k (mod p) whatever the offset (offsets are multiples of p)
    task = get_task("modp_task", p=p, k=k)
    enc = Encoder(task)
    enc._arrays = fast
    batch = enc.train_batch(generator(4, "t"), Bin(p, 40), 300, 160)
    offsets = batch.offsets.numpy()
    assert (offsets % p == 0).all() and len(set(offsets.tolist())) > 10
    assert offsets.max() > 80  # the whole table is reached, not just its start
    for b in range(300):
        n = int(batch.pad_mask[b].sum())
        rows = offsets[b] + np.arange(n)
        picked = batch.input_ids[b, :n].numpy()[(rows + 1) % p == k]
        expected = np.mean([int(task.vocab[i]) for i in picked])
        assert batch.targets[b, n - 1].item() == pytest.approx(expected, abs=1e-6)


def test_simple_task_offsets_are_not_restricted():
    batch = Encoder(get_task("simple_task", omega=2.0)).train_batch(
        generator(0, "t"), Bin(1, 16), 200, 64
    )
    assert len({int(o) % 5 for o in batch.offsets}) == 5


@pytest.mark.parametrize("name", ["tomita4", "d2", "aa_star", "ab_d_bc", "aa_bb_cc_dd_ee"])
@pytest.mark.parametrize("positions", [None, 160])
def test_array_batches_of_the_languages_equal_the_example_path(name, positions):
    task = get_task(name)
    fast, slow = Encoder(task), Encoder(task)
    slow._label_arrays = False  # the per-example path: sample_bin, sample_offset, encode
    assert fast._label_arrays
    for seed in range(3):
        for bin in (Bin(1, 50), Bin(8, 8), Bin(2, 150)):
            a = fast.train_batch(generator(seed, "t"), bin, 64, positions)
            b = slow.train_batch(generator(seed, "t"), bin, 64, positions)
            _same_bits(a, b, positions)


def test_language_array_batches_refuse_what_the_example_path_refuses():
    task = get_task("aa_star")
    with pytest.raises(RasplabError, match="no strings of length 3"):
        task.sample_label_arrays(generator(0), [2, 3])
    slow = Encoder(task)
    slow._label_arrays = False
    for enc in (Encoder(task), slow):
        with pytest.raises(RasplabError, match="does not fit"):
            enc.train_batch(generator(0), Bin(40, 50), 8, 30)
