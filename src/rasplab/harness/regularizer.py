"""Training penalties of seed 003: positional attention products and mean squared weights.

Huang et al. (2025), "A formal framework for understanding length generalization in
transformers", Definition 5, regularises a transformer by (among terms for size and
precision) term (8): the attention products between the first position's encoding and every
other position's, through each layer's and head's key and query matrices,

    pe_penalty = sum over layers l, heads h, positions j of (p_1^T K_{l,h}^T Q_{l,h} p_j)^2

(summed over the whole position table; ``p_j`` is row j of the learned APE table). The idea
(§3): discourage attention between far-apart positions that never occur together in
training. Here the product is taken as the paper writes it, on the raw table rows and each
head's slices of the fused query/key projection (the pre-LN LayerNorm is left out). Our copy
of the paper lost the symbols of the formula; squaring each product is our reading, and the
weight of the term is a training option (``train.pe_penalty``), not a value from the paper.

Appendix G.2 adds "mean squared weights (i.e., squared Frobenius norm divided by the number
of elements)" to the loss with coefficient 0.01 "to mimic the training regularizer":
``train.weight_penalty`` is that coefficient, applied to every matrix of the model.

Both work on parameters stacked along a leading run axis R (``name → [R, ...]``), so the
separate trainer (R = 1) and stacked run groups share one computation.

>>> from rasplab.models import ModelConfig, build_model
>>> model = build_model(ModelConfig(pe="ape", layers=1, heads=2, width=8), 5, 3, 16, seed=0)
>>> params = {n: p[None] for n, p in model.named_parameters()}
>>> pen = penalties(params, model.config, torch.tensor([1.0]), torch.tensor([0.0]))
>>> pen.shape, bool(pen[0] > 0)
(torch.Size([1]), True)
"""

from __future__ import annotations

import torch

from rasplab.models.config import ModelConfig


def pe_products(params: dict, config: ModelConfig) -> torch.Tensor:
    """Term (8) per run: the sum of squared positional attention products, [R].

    Zero for models without a learned position table (NoPE).
    """
    table = params.get("pe.table.weight")  # [R, N, D]
    if table is None:
        first = next(iter(params.values()))
        return first.new_zeros(first.shape[0])
    R, N, D = table.shape
    H = config.heads
    total = table.new_zeros(R)
    for i in range(config.layers):
        w = params[f"blocks.{i}.attn.qkv.weight"]  # [R, 3D, D]: query, key, value rows
        queries = torch.matmul(table, w[:, :D].transpose(1, 2)).view(R, N, H, D // H)
        key_1 = torch.matmul(table[:, :1], w[:, D : 2 * D].transpose(1, 2)).view(R, H, D // H)
        products = torch.einsum("rnhe,rhe->rhn", queries, key_1)  # [R, H, N]
        total = total + products.pow(2).sum((1, 2))
    return total


def mean_squared_weights(params: dict) -> torch.Tensor:
    """Appendix G.2's penalty per run: the sum over matrices of their mean squared entry, [R]."""
    terms = [p.pow(2).flatten(1).mean(1) for p in params.values() if p.dim() >= 3]
    return torch.stack(terms).sum(0)


def penalties(
    params: dict, config: ModelConfig, pe_weight: torch.Tensor, weight_weight: torch.Tensor
) -> torch.Tensor:
    """The weighted penalties of each run, [R] (``pe_weight``, ``weight_weight``: [R])."""
    total = next(iter(params.values())).new_zeros(pe_weight.shape[0])
    if bool((pe_weight > 0).any()):
        total = total + pe_weight.to(total.dtype) * pe_products(params, config)
    if bool((weight_weight > 0).any()):
        total = total + weight_weight.to(total.dtype) * mean_squared_weights(params)
    return total
