"""Packed training batches (``train.pack_tokens``): rows, scoring, determinism, resume, errors."""

from __future__ import annotations

import math

import pytest
import torch
from safetensors.torch import load_file

from rasplab.errors import RasplabError
from rasplab.harness import experiment_from_dict, train
from rasplab.harness.config import ExperimentConfig, TrainConfig
from rasplab.harness.encoding import Encoder
from rasplab.harness.setup import prepare_run
from rasplab.harness.sweep import validate_runs
from rasplab.harness.train import CHECKPOINT, FINAL
from rasplab.seeding import generator
from rasplab.tasks import get_task

PACK = 1024  # ptg at cpu scale caps examples at 1,024 tokens

#: ``ExperimentConfig().hash()`` recorded before ``train.pack_tokens`` existed
DEFAULT_HASH = "e3df5ed12177b782"


def _ptg(**train):
    """A tiny ptg (cpu scale) run with packed batches (``train`` keys override)."""
    return experiment_from_dict(
        {
            "task": "ptg",
            "task_options": {"scale": "cpu"},
            "model": {"pe": "nope", "layers": 1, "heads": 1, "width": 8},
            "train": {
                "steps": 3,
                "batch_size": 2,
                "eval_every": 3,
                "pack_tokens": PACK,
                "early_stop": False,
                **train,
            },
            "eval": {"size": 4, "batch_size": 4},
        }
    )


@pytest.fixture(scope="module")
def ptg_encoder():
    return Encoder(get_task("ptg", scale="cpu"))


def _batch(encoder, step, size=8, positions=None, seed=0):
    rng = generator(seed, "harness", "train", step)
    return encoder.train_batch(rng, encoder.task.train_bin, size, positions, PACK)


def test_rows_fit_pack_tokens_and_most_hold_several_examples(ptg_encoder):
    batch = _batch(ptg_encoder, 0)
    assert len(batch) == 8
    lengths = batch.pad_mask.sum(1)
    assert int(lengths.max()) <= PACK
    # real tokens form a prefix of the row (right padding only)
    assert torch.equal(batch.pad_mask, torch.arange(batch.pad_mask.shape[1]) < lengths[:, None])
    starts = (batch.input_ids == ptg_encoder.token_ids["<bos>"]).sum(1)
    assert int((starts > 1).sum()) > len(batch) // 2
    assert batch.offsets is None


def test_only_trace_positions_are_scored(ptg_encoder):
    batch = _batch(ptg_encoder, 1)
    bos, sep = ptg_encoder.token_ids["<bos>"], ptg_encoder.token_ids["<sep>"]
    for b in range(len(batch)):
        n = int(batch.pad_mask[b].sum())
        ids = batch.input_ids[b, :n].tolist()
        starts = [t for t, i in enumerate(ids) if i == bos]
        assert starts[0] == 0
        expected = torch.zeros(batch.scored.shape[1], dtype=torch.bool)
        for lo, hi in zip(starts, [*starts[1:], n]):
            trace = ids.index(sep, lo)  # the trace starts after <sep>; the last token is <eos>
            assert trace < hi
            expected[trace : hi - 1] = True
            for t in range(trace, hi - 1):  # teacher forcing: each target is the next token
                token = ptg_encoder.tokens[ids[t + 1]]
                assert int(batch.targets[b, t]) == ptg_encoder.class_ids[token]
        assert torch.equal(batch.scored[b], expected)


def test_same_step_gives_the_same_batch(ptg_encoder):
    a, b = _batch(ptg_encoder, 5), _batch(ptg_encoder, 5)
    for name in ("input_ids", "pad_mask", "targets", "scored"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    c = _batch(ptg_encoder, 6)
    assert a.input_ids.shape != c.input_ids.shape or not torch.equal(a.input_ids, c.input_ids)


def test_ape_offsets_are_per_row_and_fit_the_table(ptg_encoder):
    batch = _batch(ptg_encoder, 2, size=4, positions=PACK + 100)
    assert batch.offsets is not None and batch.offsets.shape == (4,)
    assert int((batch.offsets + batch.pad_mask.sum(1)).max()) <= PACK + 100


def test_position_table_covers_pack_tokens():
    assert prepare_run(_ptg(pack_tokens=3000)).positions == 3000
    assert prepare_run(_ptg(pack_tokens=0)).positions < 3000


class Interrupt(Exception):
    """Raised by the test to stop a run in the middle."""


def test_packed_run_trains_and_resume_equals_uninterrupted(tmp_path, monkeypatch):
    config = _ptg(checkpoint_every=1)
    seen = []
    original = Encoder.train_batch

    def spy(self, *args):
        seen.append(args[-1])
        return original(self, *args)

    monkeypatch.setattr(Encoder, "train_batch", spy)
    whole = train(config, run_dir=tmp_path / "whole")
    assert seen == [PACK] * 3
    assert whole.steps == 3 and all(math.isfinite(c["loss"]) for c in whole.curves)

    def stop_at_step_3(self, *args):
        seen.append(args[-1])
        if len(seen) == 6:
            raise Interrupt
        return original(self, *args)

    monkeypatch.setattr(Encoder, "train_batch", stop_at_step_3)
    with pytest.raises(Interrupt):
        train(config, run_dir=tmp_path / "cut")
    assert (tmp_path / "cut" / CHECKPOINT).is_file()
    monkeypatch.setattr(Encoder, "train_batch", original)
    resumed = train(config, run_dir=tmp_path / "cut")

    assert resumed.bins == whole.bins and resumed.curves == whole.curves
    a, b = load_file(tmp_path / "whole" / FINAL), load_file(tmp_path / "cut" / FINAL)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _one_line_error(make, match):
    with pytest.raises(RasplabError, match=match) as err:
        make()
    assert "train.pack_tokens" in str(err.value) and "\n" not in str(err.value)


def test_negative_pack_tokens_is_rejected():
    _one_line_error(lambda: _ptg(pack_tokens=-1), "must be >= 0")


def test_task_without_pack_is_rejected(tiny):
    tiny["train"]["pack_tokens"] = 64
    config = experiment_from_dict(tiny)  # toy_majority has no pack method
    _one_line_error(lambda: validate_runs([config]), "tasks that do: .*ptg")
    _one_line_error(lambda: train(config), "no pack method")


def test_pack_tokens_below_the_longest_example_is_rejected_before_writing(tmp_path):
    config = _ptg(pack_tokens=PACK - 1)
    _one_line_error(lambda: validate_runs([config]), f"set train.pack_tokens >= {PACK}")
    _one_line_error(lambda: train(config, run_dir=tmp_path / "run"), "longest training example")
    assert not (tmp_path / "run").exists()


def test_encoder_models_cannot_pack():
    data = _ptg().to_dict()
    data["model"]["causal"] = False
    config = experiment_from_dict(data)
    _one_line_error(lambda: validate_runs([config]), "causal")
    _one_line_error(lambda: prepare_run(config), "model.causal=true")


def test_configs_without_pack_tokens_hash_as_before():
    assert ExperimentConfig().hash() == DEFAULT_HASH
    assert ExperimentConfig(train=TrainConfig(pack_tokens=0)).hash() == DEFAULT_HASH
    packed = ExperimentConfig(train=TrainConfig(pack_tokens=4096))
    assert packed.hash() != DEFAULT_HASH
    assert packed.to_dict()["train"]["pack_tokens"] == 4096
