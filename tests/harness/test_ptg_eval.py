"""Scoring a saved PTG run on the named splits (the harness side of ``tasks.ptg.evaluate``)."""

from __future__ import annotations

import json

import pytest

from rasplab.harness import experiment_from_dict, train
from rasplab.harness.ptg_eval import load_run, main
from rasplab.tasks.ptg.scoring import score_predictions


def _run(tmp_path, task="ptg"):
    data = {
        "task": task,
        "model": {"pe": "nope", "layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 2, "batch_size": 2, "eval_every": 2, "early_stop": False},
        "eval": {"size": 2, "batch_size": 2},
    }
    if task == "ptg":
        data["task_options"] = {"scale": "cpu"}
    train(experiment_from_dict(data), run_dir=tmp_path)
    return tmp_path


def test_a_saved_ptg_run_is_scored_per_split_as_its_predictions_say(tmp_path, capsys):
    run = _run(tmp_path)
    main([str(run), "--n", "2", "--splits", "id_short,longer_lists"])
    out = json.loads(capsys.readouterr().out)
    assert list(out["splits"]) == ["id_short", "longer_lists"] and out["n"] == 2
    # the same numbers from the model's own argmax, scored one example at a time
    _, task, encoder, model = load_run(str(run))
    import torch

    for name, got in out["splits"].items():
        examples = sorted(task.dataset(name, n=2, seed=0), key=lambda ex: len(ex.tokens))
        batch = encoder.encode(examples)
        with torch.inference_mode():
            ids = model(batch.input_ids, batch.pad_mask, None).argmax(-1)
        scores = [
            score_predictions(ex, [encoder.classes[i] for i in row[: len(ex.tokens)].tolist()])
            for ex, row in zip(examples, ids)
        ]
        assert got["whole_trace_accuracy"] == pytest.approx(
            sum(s.correct for s in scores) / len(scores)
        )
        assert got["mean_steps_to_first_error"] == pytest.approx(
            sum(s.first_error for s in scores) / len(scores)
        )
        right = sum(s.steps_right for s in scores) / sum(s.steps for s in scores)
        assert got["step_accuracy"] == pytest.approx(right)


def test_a_run_of_another_task_is_a_usage_error(tmp_path, capsys):
    run = _run(tmp_path, task="binary_majority")
    with pytest.raises(SystemExit) as done:
        main([str(run), "--n", "2"])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not ptg" in err[0]
