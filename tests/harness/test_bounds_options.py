"""Harness options for seed 004's training: μP init and learning rates, online training until a
loss threshold, regression runs scored by MSE per length bin."""

from __future__ import annotations

import dataclasses

import pytest

from rasplab.errors import RasplabError
from rasplab.harness.config import EvalConfig, ExperimentConfig, TrainConfig, _hashed
from rasplab.harness.param_groups import parameter_groups
from rasplab.harness.train import train
from rasplab.models import ModelConfig, build_model

APPENDIX_B = ModelConfig(pe="ape", layers=1, heads=1, width=16, mlp_ratio=16, init="mup")


def test_mup_init_scales():
    model = build_model(APPENDIX_B, vocab_size=4, num_outputs=1, max_positions=512, seed=0)
    assert float(model.pe.table.weight.detach().std()) == pytest.approx(1.0, rel=0.1)
    up = model.blocks[0].mlp.up.weight  # [256, 16]: fan-in 16
    down = model.blocks[0].mlp.down.weight  # [16, 256]: fan-in 256
    assert float(up.detach().std()) == pytest.approx(16**-0.5, rel=0.1)
    assert float(down.detach().std()) == pytest.approx(256**-0.5, rel=0.1)
    assert float(model.head.weight.detach().abs().max()) < 4 / 16  # read-out std 1/fan_in


def test_mup_groups_split_embeddings_from_matrices():
    model = build_model(APPENDIX_B, vocab_size=4, num_outputs=1, max_positions=8, seed=0)
    hidden, embeddings, vectors = parameter_groups(model, 0.0, "mup")
    ids = lambda group: {id(p) for p in group["params"]}  # noqa: E731
    assert ids(embeddings) == {id(model.embed.weight), id(model.pe.table.weight)}
    assert id(model.head.weight) in ids(hidden) and id(model.blocks[0].attn.qkv.weight) in ids(
        hidden
    )
    assert (hidden["lr_scale"], embeddings["lr_scale"]) == (1 / 16, 1.0)
    n = sum(1 for p in model.parameters())
    assert len(ids(hidden) | ids(embeddings) | ids(vectors)) == n


def _config(**train) -> ExperimentConfig:
    return ExperimentConfig(
        task="simple_task",
        task_options={"omega": 2.0},
        model=APPENDIX_B,
        train=TrainConfig(
            bin="1-10", batch_size=32, lr=1e-2, param_groups="mup", weight_decay=0.0,
            schedule="constant", grad_clip=0.0, early_stop=False, eval_every=50, **train,
        ),
        eval=EvalConfig(size=40, bins=["1-10", "40-40"]),
    )  # fmt: skip


def test_stop_loss_reached_and_recorded(tmp_path):
    result = train(_config(steps=30, stop_loss=10.0), run_dir=tmp_path)
    assert (result.loss_reached_step, result.steps, result.stopped_early) == (1, 1, True)
    assert set(result.mse) == {"1-10", "40-40"}  # regression: MSE per length bin


def test_stop_loss_not_reached_runs_to_the_cap():
    result = train(_config(steps=6, stop_loss=1e-12))
    assert (result.loss_reached_step, result.steps, result.stopped_early) == (None, 6, False)


def test_mup_lr_changes_the_run_and_defaults_keep_old_hashes():
    mup = _config(steps=5)
    single = dataclasses.replace(mup, train=dataclasses.replace(mup.train, param_groups="single"))
    assert train(mup).mse != train(single).mse  # hidden layers at lr/16 vs lr
    hashed = _hashed(ExperimentConfig(task="simple_task").to_dict())
    assert "init" not in hashed["model"]  # unset new keys stay out of old run ids
    assert not {"param_groups", "stop_loss"} & set(hashed["train"])
    assert "init" in _hashed(mup.to_dict())["model"]


def test_bad_options():
    with pytest.raises(RasplabError, match="train.param_groups"):
        TrainConfig(param_groups="layerwise")
    with pytest.raises(RasplabError, match="train.stop_loss must be >= 0"):
        TrainConfig(stop_loss=-1.0)
    with pytest.raises(RasplabError, match="model.init"):
        ModelConfig(init="xavier")
