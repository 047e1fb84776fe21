"""The bound calculator (seed 004): margins of hand-built models in closed form, the logit
table against the model's own forward pass, γ against a brute force over the definition."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from rasplab.analysis.bounds import bound_quantities, length_bound, logit_margin, parameter_norm
from rasplab.analysis.bounds.construct import modp_task_model, simple_task_model
from rasplab.analysis.bounds.logits import (
    attention_logits,
    attention_weights,
    forward_logits,
    period,
)
from rasplab.errors import RasplabError
from rasplab.models import ModelConfig, build_model


def _eps(model) -> float:
    return model.blocks[0].ln1.eps


@pytest.mark.parametrize("beta", [0.5, 3.0, 40.0])
def test_simple_task_margin_is_beta_over_layernorm_scale(beta):
    model = simple_task_model(beta)
    assert logit_margin(model, [0, 1, 2], range(12)) == pytest.approx(
        beta / (1 + _eps(model)), rel=1e-9
    )
    assert logit_margin(model, [0, 1], range(12)) == math.inf  # every logit tied
    assert period(model, range(12)) == 1


@pytest.mark.parametrize("p,k", [(2, 1), (3, 0), (5, 1), (7, 3)])
def test_modp_task_margin_and_period(p, k):
    beta = 6.0
    model = modp_task_model(p, k, beta)
    q = bound_quantities(model, [0, 1], range(3 * p), epsilon=0.1)
    assert q["gamma"] == pytest.approx(beta / (2 + _eps(model)), rel=1e-9)
    assert (q["delta"], q["tau"]) == (p, 0)


def test_value_part_of_L_in_closed_form():
    model = simple_task_model(2.0)
    block = model.blocks[0]
    with torch.no_grad():
        mlp = (block.mlp.up.weight * block.ln2.weight).norm() * block.mlp.down.weight.norm()
    expected = float(mlp) / math.sqrt(1 + _eps(model))  # |V E_0| = |V E_1| = 1/sqrt(1+eps)
    assert parameter_norm(model, [0, 1, 2], range(4)) == pytest.approx(expected, rel=1e-6)


def test_large_margin_gives_uniform_attention_on_k_positions():
    p, k, T = 5, 1, 80
    model = modp_task_model(p, k, beta=80.0)
    ids = torch.randint(0, 2, (4, T), generator=torch.Generator().manual_seed(0))
    w = attention_weights(model, ids)[:, 0, -1]  # last query, [B, T]
    on = (torch.arange(1, T + 1) % p) == k
    assert torch.allclose(w[:, on], torch.full_like(w[:, on], 1 / int(on.sum())), atol=1e-6)
    assert float(w[:, ~on].max()) < 1e-12


def _random_one_layer(pe="ape", causal=True, seed=3):
    cfg = ModelConfig(pe=pe, layers=1, heads=2, width=8, mlp_ratio=2, causal=causal)
    model = build_model(cfg, vocab_size=3, num_outputs=1, max_positions=6, seed=seed)
    with torch.no_grad():
        model.blocks[0].attn.qkv.weight.mul_(40)  # logits of order 1
    return model


@pytest.mark.parametrize("pe", ["ape", "nope", "sinusoidal"])
def test_logit_table_matches_the_forward_pass(pe):
    model = _random_one_layer(pe)
    table = attention_logits(model, [0, 1, 2], range(6))  # [H, V, P, V, P]
    ids = torch.randint(0, 3, (5, 6), generator=torch.Generator().manual_seed(1))
    live = forward_logits(model, ids)  # [B, H, T, T]
    for b, h, i, j in itertools.product(range(5), range(2), range(6), range(6)):
        y, z = int(ids[b, i]), int(ids[b, j])
        assert float(live[b, h, i, j]) == pytest.approx(float(table[h, y, i, z, j]), abs=1e-4)


@pytest.mark.parametrize("causal", [True, False])
def test_margin_equals_brute_force_over_sequences(causal):
    """γ from the definition: collect A_(y,i) from forward passes on every sequence, then take
    the smallest positive difference over all pairs."""
    model = _random_one_layer(causal=causal)
    T = 4
    ids = torch.tensor(list(itertools.product(range(2), repeat=T)))  # every sequence over {0, 1}
    live = forward_logits(model, ids).double()
    sets: dict = {}
    for b, h, i in itertools.product(range(len(ids)), range(2), range(T)):
        keys = range(i + 1) if causal else range(T)
        entry = sets.setdefault((h, int(ids[b, i]), i), {})
        for j in keys:
            entry[(int(ids[b, j]), j)] = float(live[b, h, i, j])
    gaps = [
        a - c
        for logits in sets.values()
        for a in logits.values()
        for c in logits.values()
        if a - c > 1e-5
    ]
    assert logit_margin(model, [0, 1], range(T)) == pytest.approx(min(gaps), abs=1e-4)


def test_bad_inputs_are_one_line_errors():
    deep = build_model(ModelConfig(layers=2, width=8, heads=2), 3, 1, 8, seed=0)
    with pytest.raises(RasplabError, match="one-layer models; this model has 2 layers"):
        logit_margin(deep, [0, 1], range(4))
    rope = build_model(ModelConfig(pe="rope", layers=1, width=8, heads=2), 3, 1, 8, seed=0)
    with pytest.raises(RasplabError, match="model.pe is 'rope'"):
        logit_margin(rope, [0, 1], range(4))
    model = simple_task_model(1.0, max_positions=8)
    with pytest.raises(RasplabError, match="positions must lie in 0..7"):
        logit_margin(model, [0, 1], range(9))
    with pytest.raises(RasplabError, match="epsilon must be a finite number > 0"):
        length_bound(1.0, 1.0, 1, 0, epsilon=-1.0)


def test_length_bound_terms():
    b = length_bound(gamma=math.inf, L=2.0, delta=3, tau=2, epsilon=0.5)
    assert (b.hardmax, b.averaging, b.N) == (1.0, 2 * 3 * 4 / 0.25, 96.0)
    small = length_bound(gamma=1e-3, L=1.0, delta=1, tau=0, epsilon=0.1, constant=2.0)
    assert small.N == math.inf and small.log2_N == pytest.approx(1 + 24 / 1e-3)
    assert small.to_json()["N"] is None
    # N grows linearly with Δ and as L² once the averaging term dominates
    base = length_bound(50.0, 1.0, 1, 0, 0.01).N
    assert length_bound(50.0, 1.0, 4, 0, 0.01).N == pytest.approx(4 * base)
    assert length_bound(50.0, 3.0, 1, 0, 0.01).N == pytest.approx(9 * base)
