"""``eval.slices``: accuracy broken down by per-example attributes (parity's number of ones)."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.harness.config import load_config
from rasplab.harness.evaluate import evaluate
from rasplab.harness.setup import prepare_run
from rasplab.harness.store import ResultsStore
from rasplab.harness.train import _metrics_json, run_test_sets, train
from rasplab.tasks import get_task

LIMIT = 6  # the fake predictor is right exactly when the input holds at most LIMIT ones

SLICED = [
    "task=parity",
    "model.layers=1",
    "model.heads=1",
    "model.width=8",
    "train.steps=2",
    "train.batch_size=8",
    "train.eval_every=2",
    "train.bin=1-10",
    "eval.size=120",
    "eval.batch_size=50",
    "eval.bins=[1-10, 11-16]",
    "eval.slices=[length, ones]",
]


class ParityUpTo(torch.nn.Module):
    """Answers the right parity when the input has at most ``limit`` ones, else the wrong one."""

    def __init__(self, encoder, limit: int) -> None:
        super().__init__()
        self.ids = encoder.token_ids
        self.classes = encoder.class_ids
        self.limit = limit

    def forward(self, ids, mask, offsets):
        ones = (ids == self.ids["1"]).sum(1)  # [B]
        odd = (ones % 2 == 1) ^ (ones > self.limit)  # the parity it answers
        out = torch.zeros(*ids.shape, len(self.classes))
        out[..., self.classes["<eos>"]] = 1.0  # after the answer: <eos>
        answer = torch.where(odd, self.classes["o"], self.classes["e"])  # [B]
        at_sep = ids == self.ids["<sep>"]  # [B, T]
        rows, cols = at_sep.nonzero(as_tuple=True)
        out[rows, cols] = 0.0
        out[rows, cols, answer[rows]] = 1.0
        return out


def expected(config, bin_name: str) -> dict:
    """Per slice and value, (right, count) of the fake predictor, from the examples themselves."""
    examples = get_task("parity").dataset("test", bin_name, config.eval.size, config.seed)
    table: dict = {"length": Counter(), "ones": Counter()}
    right: dict = {"length": Counter(), "ones": Counter()}
    for ex in examples:
        bits = ex.tokens[1 : ex.tokens.index("<sep>")]
        ones = sum(b == "1" for b in bits)
        for name, value in (("length", len(bits)), ("ones", ones)):
            table[name][value] += 1
            right[name][value] += ones <= LIMIT
    return {s: {v: (right[s][v], n) for v, n in sorted(t.items())} for s, t in table.items()}


def test_slices_count_what_a_known_predictor_gets_right():
    config = load_config(None, SLICED)
    setup = prepare_run(config)
    model = ParityUpTo(setup.encoder, LIMIT)
    metrics = evaluate(model, setup.encoder, run_test_sets(config, setup))
    for name in ("1-10", "11-16"):
        want = expected(config, name)
        assert metrics[name].slices == want
        right = sum(r for r, _ in want["ones"].values())
        assert metrics[name].accuracy == right / metrics[name].count
    ones = metrics["11-16"].slices["ones"]
    assert any(v > LIMIT for v in ones) and any(v <= LIMIT for v in ones)  # both sides seen


def test_unsliced_metrics_stay_as_they_were():
    config = load_config(None, SLICED[:-1])
    setup = prepare_run(config)
    metrics = evaluate(
        ParityUpTo(setup.encoder, LIMIT), setup.encoder, run_test_sets(config, setup)
    )
    assert all(m.slices is None for m in metrics.values())
    assert "slices" not in _metrics_json(metrics)


def test_a_trained_run_stores_its_slices(tmp_path):
    config = load_config(None, SLICED)
    result = train(config)
    for name, by_slice in result.slices.items():
        for table in by_slice.values():
            assert sum(n for _, n in table.values()) == result.counts[name]
            right = sum(r for r, _ in table.values())
            assert right == round(result.bins[name] * result.counts[name])
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.register(config)
        store.finish(result)
        (record,) = store.runs()
    assert record.metrics["slices"] == result.slices


def test_a_slice_the_task_does_not_have_is_refused():
    config = load_config(None, [*SLICED[:-1], "task=tomita2", "train.bin=1-8", "eval.bins=[1-8]",
                                "eval.slices=[ones]"])  # fmt: skip
    with pytest.raises(RasplabError, match="eval.slices name for task 'tomita2'"):
        prepare_run(config)
    with pytest.raises(RasplabError, match="lists 'ones' twice"):
        load_config(None, [*SLICED[:-1], "eval.slices=[ones, ones]"])


def test_task_option_balance_ones_reaches_test_sets_and_training_batches():
    """``task_options.balance=ones``: the harness's test sets are the task's balanced sets
    (their law is tested in tests/tasks/test_parity_balance.py) and its training batches are
    drawn as many per number of ones (counts 0-10 in bin 1-10, ~200 each of 2,200; the default
    draw gives ~20 at 10 ones)."""
    import numpy as np

    config = load_config(None, [*SLICED, "task_options.balance=ones"])
    setup = prepare_run(config)
    assert setup.task.balance == "ones"
    balanced = get_task("parity", balance="ones")
    for name, (batches, count) in run_test_sets(config, setup).items():
        want = Counter(
            ex.tokens.count("1") for ex in balanced.dataset("test", name, config.eval.size, 0)
        )
        got = Counter()
        for batch in batches:
            got.update(batch.slices["ones"].tolist())
        assert got == want and count == config.eval.size
    one_id = setup.encoder.token_ids["1"]
    batch = setup.encoder.train_batch(np.random.default_rng(0), setup.train_bin, 2200, None)
    train = Counter(((batch.input_ids == one_id) & batch.pad_mask).sum(1).tolist())
    assert set(train) == set(range(11)) and all(130 <= c <= 270 for c in train.values())
    assert load_config(None, SLICED).hash() != config.hash()
