"""Training: every target kind, determinism, early stop, APE offsets, checkpoints and resume."""

from __future__ import annotations

import copy

import pytest
import torch
from safetensors.torch import load_file

from rasplab.errors import RasplabError
from rasplab.harness import experiment_from_dict, train
from rasplab.harness.encoding import Encoder, encoded_test_set
from rasplab.harness.evaluate import evaluate, greedy_correct, sequence_correct
from rasplab.harness.train import CHECKPOINT, FINAL, load_run
from rasplab.tasks import get_task


def _config(tiny, **changes):
    tiny = copy.deepcopy(tiny)
    for key, value in changes.items():
        section, _, name = key.partition("__")
        if name:
            tiny[section][name] = value
        else:
            tiny[section] = value
    return experiment_from_dict(tiny)


@pytest.mark.parametrize("task", ["toy_majority", "toy_prefix_parity", "toy_next_set", "toy_mean"])
def test_every_target_kind_trains_and_reports_each_bin(tiny, task):
    result = train(_config(tiny, task=task))
    bins = [str(b) for b in get_task(task).test_bins]
    assert list(result.bins) == bins
    assert all(0.0 <= a <= 1.0 for a in result.bins.values())
    assert result.counts[bins[0]] == (5 if task == "toy_next_set" else 24)  # a^1..a^5 only
    assert result.steps in (3, 6) and result.curves[0]["step"] == 3
    if task == "toy_mean":
        assert set(result.mse) == set(bins) and all(m >= 0 for m in result.mse.values())
    else:
        assert result.mse is None


def test_same_config_and_seed_give_identical_results(tiny):
    config = _config(tiny)
    a, b = train(config), train(config)
    assert a.bins == b.bins and a.curves == b.curves
    c = train(_config(tiny, seed=1))
    assert c.curves != a.curves


def test_early_stop_when_in_distribution_is_perfect(tiny):
    result = train(
        _config(
            tiny,
            task="toy_next_set",
            train={"steps": 60, "batch_size": 8, "eval_every": 5, "lr": 0.03},
        )
    )
    assert result.fitted and result.stopped_early and result.steps < 60
    assert result.bins["1-5"] == 1.0


def test_ape_trains_with_random_offsets(tiny, monkeypatch):
    seen = []
    original = Encoder.train_batch

    def spy(self, rng, bin, size, max_positions, pack_tokens=0):
        seen.append(max_positions)
        return original(self, rng, bin, size, max_positions, pack_tokens)

    monkeypatch.setattr(Encoder, "train_batch", spy)
    train(_config(tiny, model={"pe": "ape", "layers": 1, "heads": 1, "width": 8}))
    assert seen and all(p == 15 + 4 for p in seen)  # P fits the longest test example (n=15)
    seen.clear()
    train(_config(tiny))  # NoPE: no offsets
    assert seen and all(p is None for p in seen)


def test_greedy_decoding_equals_teacher_forcing_for_causal_models(tiny, tmp_path):
    config = _config(
        tiny, task="toy_copy", train={"steps": 40, "batch_size": 16, "eval_every": 40, "lr": 0.02}
    )
    train(config, run_dir=tmp_path)
    _, setup = load_run(tmp_path)  # the trained model, rebuilt from the run folder
    right = total = 0
    for b in setup.test_bins:
        for batch in encoded_test_set(setup.encoder, {}, b, 60, 0, 16)[0]:
            with torch.no_grad():
                tf = sequence_correct(setup.model(batch.input_ids, batch.pad_mask, None), batch)
                greedy = greedy_correct(setup.model, setup.encoder, batch)  # token by token
            assert torch.equal(tf, greedy)
            right, total = right + int(tf.sum()), total + len(tf)
    assert 0 < right < total  # some right, some wrong: the comparison is not vacuous
    sets = {str(b): encoded_test_set(setup.encoder, {}, b, 60, 0, 16) for b in setup.test_bins}
    looped = evaluate(setup.model, setup.encoder, sets, "greedy", causal=False)
    forced = evaluate(setup.model, setup.encoder, sets, "teacher_forced")
    assert looped == forced


class Interrupt(Exception):
    """Raised by the test to stop a run in the middle."""


def test_resume_from_checkpoint_equals_uninterrupted_run(tiny, tmp_path, monkeypatch):
    config = _config(
        tiny,
        train={
            "steps": 9,
            "batch_size": 8,
            "eval_every": 3,
            "lr": 0.01,
            "checkpoint_every": 2,
            "early_stop": False,
        },
    )
    whole = train(config, run_dir=tmp_path / "whole")

    calls = {"n": 0}
    original = Encoder.train_batch

    def stop_at_step_6(self, *args):
        calls["n"] += 1
        if calls["n"] == 6:
            raise Interrupt
        return original(self, *args)

    monkeypatch.setattr(Encoder, "train_batch", stop_at_step_6)
    with pytest.raises(Interrupt):
        train(config, run_dir=tmp_path / "cut")
    assert (tmp_path / "cut" / CHECKPOINT).is_file() and not (tmp_path / "cut" / FINAL).exists()
    monkeypatch.setattr(Encoder, "train_batch", original)
    resumed = train(config, run_dir=tmp_path / "cut")

    assert resumed.bins == whole.bins and resumed.curves == whole.curves
    assert resumed.steps == whole.steps == 9
    a, b = load_file(tmp_path / "whole" / FINAL), load_file(tmp_path / "cut" / FINAL)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert (tmp_path / "cut" / "config.yaml").is_file() and (
        tmp_path / "cut" / "result.json"
    ).is_file()
    assert not (tmp_path / "cut" / CHECKPOINT).exists()


def test_finished_run_is_returned_without_training(tiny, tmp_path, monkeypatch):
    config = _config(tiny)
    first = train(config, run_dir=tmp_path)

    def no_training(*args):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(Encoder, "train_batch", no_training)
    again = train(config, run_dir=tmp_path)
    assert again.bins == first.bins and again.curves == first.curves and again.steps == first.steps


def test_corrupt_checkpoint_is_a_clear_error(tiny, tmp_path):
    (tmp_path / CHECKPOINT).write_bytes(b"\x00not a safetensors file")
    with pytest.raises(RasplabError, match="corrupt"):
        train(_config(tiny), run_dir=tmp_path)
    other = _config(tiny, model={"pe": "nope", "layers": 1, "heads": 1, "width": 16})
    train(other, run_dir=tmp_path / "w16")
    (tmp_path / "w16" / FINAL).rename(tmp_path / CHECKPOINT)
    with pytest.raises(RasplabError, match="does not fit"):
        train(_config(tiny), run_dir=tmp_path)


def test_bins_the_task_cannot_fill_are_rejected(tiny):
    with pytest.raises(RasplabError, match="no examples"):
        train(_config(tiny, eval={"size": 8, "bins": ["2-2"]}))  # toy_majority has odd lengths only


def test_the_progress_bar_shows_the_run_steps_and_loss(tiny, capsys):
    result = train(_config(tiny), progress=True)
    err = capsys.readouterr().err
    config = _config(tiny)
    assert f"train {config.task} {config.variant} seed {config.seed}" in err
    assert f"{result.steps}/{config.train.steps}" in err
    assert f"loss {result.curves[-1]['loss']:.4f}" in err
