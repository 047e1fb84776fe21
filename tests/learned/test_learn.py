"""The orchestrator's measurements: accuracy past the training length, whole-sequence
accuracy, the length-generalization plot."""

from __future__ import annotations

import warnings

import pytest
import torch

from rasplab.learned import LearnConfig, learn
from rasplab.learned.data import IGNORE, UNKNOWN, Batch
from rasplab.learned.plot import plot_by_length
from rasplab.learned.train import accuracy, sequence_accuracy

TINY = dict(
    cat_heads=0, count_heads=1, mlps=0, epochs=3, train_n=400, val_n=100, test_n=100,
    verify_length=2, random_checks=30,
)  # fmt: skip


def test_by_length_scores_model_and_program_past_training_and_they_agree():
    done = learn(LearnConfig(task="rasp_hist", test_beyond=3, test_per_length=40, **TINY))
    by_length = done.result["by_length"]
    assert list(by_length) == ["8", "9", "10"]  # rasp_hist trains on 1..7 symbols
    for row in by_length.values():
        assert row["examples"] == 40 and 0.0 <= row["model"] <= 1.0
        assert row["model"] == row["program"]  # program == model holds past training too


def test_result_keeps_each_epochs_validation_and_the_kept_epoch_is_its_best():
    result = learn(LearnConfig(task="rasp_hist", **TINY)).result
    curve = result["val_by_epoch"]
    assert len(curve) == TINY["epochs"]
    assert curve[result["best_epoch"] - 1] == pytest.approx(result["val_accuracy"], abs=1e-6)
    assert max(curve) == pytest.approx(result["val_accuracy"], abs=1e-6)


def test_sequence_accuracy_needs_every_scored_position_and_ignores_filler():
    targets = torch.tensor([[IGNORE, 1, 2], [IGNORE, 1, IGNORE], [IGNORE, UNKNOWN, 0]])
    batch = Batch(torch.zeros(3, 3, dtype=torch.long), torch.ones(3, 3, dtype=torch.bool), targets)
    pred = torch.tensor([[0, 1, 0], [5, 1, 5], [0, 0, 0]])
    assert sequence_accuracy(pred, batch) == pytest.approx(
        1 / 3
    )  # only the second row is wholly right
    assert accuracy(pred, batch) == 3 / 5  # a label the model has no class for is wrong


def test_plot_by_length_writes_a_png(tmp_path):
    rows = [
        {"task": "rasp_hist", "trained_up_to": 7, "by_length": {"8": {"model": 0.5}}},
        {"task": "rasp_hist", "trained_up_to": 7, "by_length": {"8": {"model": 0.7}}},
    ]
    path = plot_by_length(rows, tmp_path / "p.png")
    assert path.read_bytes()[:4] == b"\x89PNG" and [p.name for p in tmp_path.iterdir()] == ["p.png"]


@pytest.mark.parametrize("tested", [False, True])
def test_plot_by_length_draws_a_legend_only_for_lines(tmp_path, tested):
    """A tiny sweep's rows test no length past training (no ``by_length``): no legend, hence
    no matplotlib "No artists with labels" warning; with lines, one legend entry per line."""
    from rasplab.plotting import plt

    rows = [{"task": "rasp_hist", "trained_up_to": 7, "by_length": {}}]
    if tested:
        rows.append({"task": "rasp_sort", "trained_up_to": 7, "by_length": {"8": {"model": 1.0}}})
    captured = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(plt, "close", lambda fig=None: captured.setdefault("fig", fig))
            plot_by_length(rows, tmp_path / "p.png")
    legend = captured["fig"].axes[0].get_legend()
    plt.close(captured["fig"])
    assert (legend is not None) == tested
    if tested:
        assert [t.get_text() for t in legend.get_texts()] == ["rasp_sort (n=7)"]
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
