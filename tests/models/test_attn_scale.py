"""``model.attn_scale``: μP's 1/Dh logit scale against the formula, and what it leaves alone."""

from __future__ import annotations

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.harness.config import ExperimentConfig, load_config
from rasplab.harness.stacked import stackable
from rasplab.models import ModelConfig, build_model

GEN = torch.Generator().manual_seed(3)


def attention_by_formula(model, ids, dh_power: float) -> torch.Tensor:
    """First block's attention output (before W_o), softmax(q k^T / Dh^power) v, causal."""
    block = model.blocks[0]
    captured = {}
    handle = block.attn.register_forward_hook(lambda m, a, out: captured.setdefault("x", a[0]))
    model(ids)
    handle.remove()
    x = captured["x"]
    B, T, D = x.shape
    H = model.config.heads
    qkv = block.attn.qkv(x).view(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    logits = q @ k.transpose(-1, -2) / (D // H) ** dh_power
    logits = logits.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return (logits.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)


@pytest.mark.parametrize(("scale", "power"), [("sqrt", 0.5), ("mup", 1.0)])
def test_logit_scale_follows_the_formula(scale, power):
    config = ModelConfig(pe="nope", width=16, heads=2, layers=1, attn_scale=scale)
    model = build_model(config, 5, 5, 12, seed=0).double()
    ids = torch.randint(0, 5, (2, 9), generator=GEN)
    expected = attention_by_formula(model, ids, power)
    captured = {}
    handle = model.blocks[0].attn.out.register_forward_hook(
        lambda m, a, out: captured.setdefault("heads", a[0])
    )
    model(ids)
    handle.remove()
    torch.testing.assert_close(captured["heads"], expected)
    assert model.blocks[0].attn.kind.scale == pytest.approx(8**-power)


def test_mup_scale_stacks_and_bad_names_are_refused():
    # stacked groups apply μP's 1/Dh (grouped equals alone: tests/harness/test_group.py,
    # test_regression_mup_runs_group_and_equal_separate_runs)
    assert stackable(ModelConfig(pe="nope"))
    assert stackable(ModelConfig(pe="nope", attn_scale="mup"))
    with pytest.raises(RasplabError, match="model.attn_scale"):
        ModelConfig(attn_scale="inverse")


def test_default_scale_keeps_run_ids():
    base = load_config(None, [])
    explicit = load_config(None, ["model.attn_scale=sqrt"])
    mup = load_config(None, ["model.attn_scale=mup"])
    assert isinstance(base, ExperimentConfig)
    assert base.hash() == explicit.hash()
    assert mup.hash() != base.hash()
