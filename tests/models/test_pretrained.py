"""save_pretrained / from_pretrained, and trained runs opening in one line."""

from __future__ import annotations

import json

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.harness import experiment_from_dict, train
from rasplab.harness.setup import load_run
from rasplab.models import ModelConfig, Transformer, build_model, pretrained


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


def _small(width=8):
    cfg = ModelConfig(pe="nope", layers=1, width=width, heads=1)
    return build_model(cfg, vocab_size=5, num_outputs=3, max_positions=10, seed=0)


def test_weights_missing_garbled_or_of_another_size_are_one_line(tmp_path):
    _small().save_pretrained(tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"\x00garbage")
    with pytest.raises(RasplabError, match="^cannot read '.*model.safetensors': "):
        Transformer.from_pretrained(tmp_path / "m")
    _small(width=16).save_pretrained(tmp_path / "wide")
    (tmp_path / "m" / "model.safetensors").write_bytes(
        (tmp_path / "wide" / "model.safetensors").read_bytes()
    )
    with pytest.raises(RasplabError) as caught:
        Transformer.from_pretrained(tmp_path / "m")
    assert "do not fit its config (Error(s) in loading state_dict" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_saving_where_a_file_is_fails_in_one_line_without_leftovers(tmp_path, monkeypatch):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(RasplabError, match="^cannot save the model to '.*plain'"):
        _small().save_pretrained(tmp_path / "plain")

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pretrained, "save_file", full_disk)
    with pytest.raises(RasplabError, match="No space left on device"):
        _small().save_pretrained(tmp_path / "m")
    assert list((tmp_path / "m").iterdir()) == []
