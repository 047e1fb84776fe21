"""save_pretrained / from_pretrained, and trained runs opening in one line."""

from __future__ import annotations

import json

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.harness import experiment_from_dict, train
from rasplab.harness.setup import load_run
from rasplab.models import ModelConfig, Transformer, build_model


def test_round_trip_keeps_config_and_outputs(tmp_path):
    cfg = ModelConfig(pe="alibi", attention="fox", layers=2, width=16, heads=2)
    model = build_model(cfg, vocab_size=7, num_outputs=4, max_positions=20, seed=3)
    model.save_pretrained(tmp_path)
    data = json.loads((tmp_path / "config.json").read_text())
    assert data["model"]["pe"] == "alibi" and data["vocab_size"] == 7
    again = Transformer.from_pretrained(tmp_path)
    assert again.config == cfg and not again.training
    x = torch.tensor([[1, 2, 3, 4, 5]])
    assert torch.equal(model.eval()(x), again(x))


def test_a_trained_run_opens_in_one_line(tmp_path):
    run = tmp_path / "run"
    config = {
        "task": "binary_majority",
        "model": {"pe": "nope", "layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 4, "batch_size": 8, "eval_every": 4},
        "eval": {"size": 8},
    }
    train(experiment_from_dict(config), run)
    model = Transformer.from_pretrained(run)
    _, setup = load_run(run)
    x = torch.tensor([[0, 1, 2, 1, 0]])
    assert torch.equal(model(x), setup.model(x))


def test_bad_folders_are_one_clear_error(tmp_path):
    with pytest.raises(RasplabError, match="config.json is missing"):
        Transformer.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(RasplabError, match="not valid JSON"):
        Transformer.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text('{"format": "something else"}')
    with pytest.raises(RasplabError, match="not a rasplab model config"):
        Transformer.from_pretrained(tmp_path)
