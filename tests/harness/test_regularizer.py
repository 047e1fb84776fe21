"""Seed 003's regularizer: the vectorized penalty against a loop written from the formula."""

from __future__ import annotations

import torch

from rasplab.harness.regularizer import mean_squared_weights, pe_products, penalties
from rasplab.models import ModelConfig, build_model


def _naive_pe_products(model) -> float:
    """sum over layers l, heads h, positions j of (p_1^T K_{l,h}^T Q_{l,h} p_j)^2, by loops."""
    cfg = model.config
    D, Dh = cfg.width, cfg.width // cfg.heads
    table = model.pe.table.weight.detach().double()
    total = 0.0
    for block in model.blocks:
        w = block.attn.qkv.weight.detach().double()
        for h in range(cfg.heads):
            Q = w[h * Dh : (h + 1) * Dh]
            K = w[D + h * Dh : D + (h + 1) * Dh]
            for j in range(table.shape[0]):
                total += float((K @ table[0]) @ (Q @ table[j])) ** 2
    return total


def test_pe_products_match_the_formula_and_vanish_without_a_table():
    for seed in (0, 1):
        model = build_model(ModelConfig(pe="ape", layers=2, heads=2, width=8), 5, 3, 12, seed=seed)
        with torch.no_grad():
            model.pe.table.weight.mul_(30)  # products well above float noise
        params = {n: p[None] for n, p in model.named_parameters()}
        got = float(pe_products(params, model.config)[0].detach())
        assert abs(got - _naive_pe_products(model)) <= 1e-4 * max(1.0, got)
    nope = build_model(ModelConfig(pe="nope", layers=1, heads=1, width=8), 5, 3, 12, seed=0)
    params = {n: p[None] for n, p in nope.named_parameters()}
    assert float(pe_products(params, nope.config)[0]) == 0.0


def test_mean_squared_weights_counts_matrices_only():
    model = build_model(ModelConfig(pe="ape", layers=1, heads=1, width=8), 5, 3, 12, seed=0)
    expected = sum(float(p.detach().pow(2).mean()) for p in model.parameters() if p.dim() >= 2)
    params = {n: p[None] for n, p in model.named_parameters()}
    assert abs(float(mean_squared_weights(params)[0].detach()) - expected) < 1e-6


def test_penalties_weigh_each_run_on_its_own():
    models = [
        build_model(ModelConfig(pe="ape", layers=1, heads=1, width=8), 5, 3, 12, seed=s)
        for s in (0, 1)
    ]
    stacked = {n: torch.stack([dict(m.named_parameters())[n] for m in models]) for n, _ in
               models[0].named_parameters()}  # fmt: skip
    pen = penalties(stacked, models[0].config, torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.5]))
    one = {n: p[:1] for n, p in stacked.items()}
    two = {n: p[1:] for n, p in stacked.items()}
    assert torch.allclose(pen[0], pe_products(one, models[0].config)[0])
    assert torch.allclose(pen[1], 0.5 * mean_squared_weights(two)[0])
