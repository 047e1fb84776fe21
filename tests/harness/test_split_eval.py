"""Scoring a finished run on a named split of its task (SCAN's own training split)."""

from __future__ import annotations

import json

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.harness import experiment_from_dict, train
from rasplab.harness.setup import load_run
from rasplab.harness.split_eval import main, score_split


@pytest.fixture(scope="module")
def scan_run(tmp_path_factory):
    """A 1-layer SCAN model trained just long enough to get a few training commands right."""
    run = tmp_path_factory.mktemp("scan_run")
    data = {
        "task": "scan",
        "task_options": {"split": "length"},
        "model": {"pe": "rope", "layers": 1, "heads": 2, "width": 32},
        "train": {"steps": 150, "batch_size": 32, "eval_every": 150, "early_stop": False,
                  "lr": 3e-3, "threads": 1},
        "eval": {"size": 50, "batch_size": 50},
    }  # fmt: skip
    train(experiment_from_dict(data), run_dir=run)
    return run


def test_split_accuracy_counts_the_commands_the_model_gets_wholly_right(scan_run):
    got = score_split(scan_run, "train", n=300)
    assert got.count == 300
    # the same count, one command at a time, with no batching, sorting or padding
    config, setup = load_run(scan_run)
    examples = setup.task.dataset("train", None, 300, 0)
    right = 0
    for ex in examples:
        b = setup.encoder.encode([ex])
        with torch.inference_mode():
            pred = setup.model(b.input_ids, b.pad_mask, None).argmax(-1)
        right += bool((pred[b.scored] == b.targets[b.scored]).all())
    assert 0 < right < 300  # the check can tell right from wrong commands
    assert got.accuracy == right / 300


def test_the_test_split_differs_from_the_training_split(scan_run):
    train_acc = score_split(scan_run, "train", n=300).accuracy
    test_acc = score_split(scan_run, "test", n=300).accuracy
    assert train_acc > test_acc  # the length split's test commands are the long ones


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--split", "dev"], "has no split 'dev'"),
        (["--split", "train", "--n", "0"], "--n must be a positive"),
    ],
)
def test_bad_input_is_one_line_exit_2(scan_run, capsys, args, needle):
    assert main([str(scan_run), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rasplab: error:") and needle in err and "\n" not in err


def test_a_folder_without_a_finished_run_is_refused(tmp_path):
    with pytest.raises(RasplabError, match="holds no finished run"):
        score_split(tmp_path, "train")


def test_main_prints_one_json_object(scan_run, capsys):
    assert main([str(scan_run), "--split", "train", "--n", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["split"] == "train" and out["count"] == 20 and 0 <= out["accuracy"] <= 1
