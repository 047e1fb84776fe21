"""The logit margin γ(f) and the parameter norm L of seed 004 (Section 3.2 and Theorem 4.1).

γ(f) = min over queries (y, i) of the smallest positive gap a - a' between two logits of the
set A_(y,i) of every attention logit the model can compute when it processes token y at
position i. Here A_(y,i) holds the logits for every key token z at every key position j the
query can see (j <= i for a causal model, every position for an encoder); the seed's set
ranges over offsets k = 0..τ of a Δ-periodic model, which, with φ = 0 beyond τ, is the same
collection read modulo Δ. An empty set of positive gaps (all logits equal) gives +inf.

L = ||A||_F ||B||_F max_s ||V E_s|| (Theorem 4.1) with A, B the MLP's two weight matrices
(the LayerNorm gain before the MLP folded into A) and V E_s the value vector of the
attention (output projection included) for a "token" s = (token, position): the proof's
last paragraph treats each (token, position mod Δ) pair as its own token. With several
heads the per-head maxima add (triangle inequality).

>>> from rasplab.analysis.bounds.construct import simple_task_model
>>> model = simple_task_model(beta=3.0)
>>> round(logit_margin(model, [0, 1, 2], range(8)), 6)       # β / (1 + LayerNorm eps)
2.99997
>>> logit_margin(model, [0, 1], range(8))                    # only tied logits: no gap
inf
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from rasplab.analysis.bounds.logits import attention_logits, layer_inputs, qkv_heads


def logit_margin(
    model,
    vocabulary: Sequence[int],
    positions: Sequence[int],
    tie_tolerance: float = 1e-9,
) -> float:
    """γ(f) of a one-layer model over token ids ``vocabulary`` and 0-based ``positions``.

    Gaps at most ``tie_tolerance * max(1, max |logit|)`` count as ties (float64 rounding of
    logits that are equal in exact arithmetic); ``tie_tolerance=0`` takes every nonzero gap.
    A multi-layer model, an unsupported encoding or an id out of range is a RasplabError.
    """
    positions = list(positions)
    logits = attention_logits(model, vocabulary, positions)  # [H, V, P, V, P]
    H, V, P = logits.shape[:3]
    tie = tie_tolerance * max(1.0, float(logits.abs().max()))
    pos = torch.tensor(positions)
    visible = (pos[None, :] <= pos[:, None]) if model.config.causal else torch.ones(P, P).bool()
    rows = logits.permute(0, 1, 2, 4, 3).reshape(H, V, P, P, V)  # [H, V, Pq, Pk, Vk]
    rows = torch.where(visible[None, None, :, :, None], rows, torch.nan)
    rows = rows.reshape(H * V * P, P * V).sort(dim=1).values  # NaN (invisible keys) sort last
    gaps = rows[:, 1:] - rows[:, :-1]  # adjacent gaps: the smallest positive gap is one of them
    gaps = gaps[~torch.isnan(gaps) & (gaps > tie)]
    return float(gaps.min()) if gaps.numel() else math.inf


def value_norms(model, vocabulary: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
    """||V E_s|| [H, V, P]: each head's value vector after the output projection."""
    h = layer_inputs(model, vocabulary, positions)
    _, _, v = qkv_heads(model, h)  # [H, V, P, Dh]
    attn = model.blocks[0].attn
    W_o = attn.out.weight.detach().double()  # [D, H*Dh]
    H, Dh = attn.heads, attn.head_dim
    per_head = W_o.reshape(-1, H, Dh).permute(1, 0, 2)  # [H, D, Dh]
    out = torch.einsum("hed,hvpd->hvpe", per_head, v)
    return out.norm(dim=-1)


def parameter_norm(model, vocabulary: Sequence[int], positions: Sequence[int]) -> float:
    """L = ||A||_F ||B||_F Σ_heads max_s ||V E_s|| (Theorem 4.1) of a one-layer model."""
    block = model.blocks[0]
    A = block.mlp.up.weight.detach().double() * block.ln2.weight.detach().double()[None, :]
    B = block.mlp.down.weight.detach().double()
    values = value_norms(model, vocabulary, positions)
    return float(A.norm() * B.norm() * values.flatten(1).max(dim=1).values.sum())
