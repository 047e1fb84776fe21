"""The attention-logit table of a one-layer model: every logit it can compute, by (token, position).

For a one-layer rasplab model with an additive absolute positional encoding (``ape``,
``sinusoidal``) or none (``nope``) and softmax attention, the attention logit of a query
token y at position i for a key token z at position j depends on (y, i, z, j) only:
``a = scale * (W_q h(y, i) + b_q) . (W_k h(z, j) + b_k)`` with ``h = LN1(E + p)``. Seed 004
writes it ``(E_z + p_j)^T K^T Q (E_y + p_i)`` (Section 3.2; the LayerNorm of a pre-LN block is
a per-position map, so the table is still indexed by token and position). The table is
computed in float64 from the weights, not by running sequences through the model.

>>> from rasplab.analysis.bounds.construct import modp_task_model
>>> model = modp_task_model(p=3, k=1, beta=2.0)
>>> attention_logits(model, [0, 1], range(6)).shape          # [H, V, P, V, P]
torch.Size([1, 2, 6, 2, 6])
>>> period(model, range(12)), locality(model)
(3, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from rasplab.errors import RasplabError
from rasplab.models.transformer import TransformerModel

#: positional encodings whose positions enter as a vector added to the token embedding
ADDITIVE_PE = ("ape", "nope", "sinusoidal")


def check_one_layer(model) -> None:
    """Raise a RasplabError unless ``model`` is a one-layer model the bound applies to."""
    if not isinstance(model, TransformerModel):
        raise RasplabError(
            f"the bound needs a rasplab TransformerModel, got {type(model).__name__}"
        )
    cfg = model.config
    if cfg.layers != 1:
        raise RasplabError(
            f"the bound of seed 004 (Theorem 4.1) is for one-layer models; this model has "
            f"{cfg.layers} layers (train with model.layers=1)"
        )
    if cfg.pe not in ADDITIVE_PE:
        raise RasplabError(
            f"logit_margin needs positions added to the embeddings ({', '.join(ADDITIVE_PE)}); "
            f"model.pe is {cfg.pe!r}"
        )
    if cfg.attention != "softmax" or cfg.canon or cfg.swan:
        raise RasplabError(
            "logit_margin needs plain softmax attention without Canon/SWAN layers; "
            f"model.attention is {cfg.attention!r}"
        )


def checked_ids(model, values: Iterable[int], what: str, limit: int) -> list[int]:
    """``values`` as a non-empty list of distinct ints in ``0..limit-1``."""
    ids = [int(v) for v in values]
    if not ids:
        raise RasplabError(f"{what} must list at least one id")
    bad = [v for v in ids if not 0 <= v < limit]
    if bad:
        raise RasplabError(f"{what} must lie in 0..{limit - 1}; got {bad[0]}")
    if len(set(ids)) != len(ids):
        raise RasplabError(f"{what} lists an id twice")
    return ids


def position_vectors(model, positions: Sequence[int]) -> torch.Tensor:
    """The vectors p_i [P, D] (float64) added at ``positions`` (zeros for NoPE)."""
    P = max(positions) + 1
    like = torch.zeros(1, P, model.config.width)
    with torch.no_grad():
        table = model.pe.embed(like, None)
    if table is None:
        return torch.zeros(len(positions), model.config.width, dtype=torch.float64)
    return table[0, list(positions)].detach().double()


def layer_inputs(model, vocabulary: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
    """``LN1(E_z + p_j)`` [V, P, D] in float64: what the attention layer reads."""
    check_one_layer(model)
    vocabulary = checked_ids(model, vocabulary, "vocabulary", model.vocab_size)
    positions = checked_ids(model, positions, "positions", model.max_positions)
    E = model.embed.weight.detach().double()[vocabulary]  # [V, D]
    x = E[:, None, :] + position_vectors(model, positions)[None]  # [V, P, D]
    ln = model.blocks[0].ln1
    return torch.nn.functional.layer_norm(
        x, x.shape[-1:], ln.weight.detach().double(), ln.bias.detach().double(), ln.eps
    )


def qkv_heads(model, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Queries, keys and values [H, ..., Dh] of layer inputs ``h`` [..., D] (float64)."""
    attn = model.blocks[0].attn
    W = attn.qkv.weight.detach().double()
    b = attn.qkv.bias.detach().double() if attn.qkv.bias is not None else 0.0
    qkv = h @ W.T + b  # [..., 3D]
    H, Dh = attn.heads, attn.head_dim
    q, k, v = qkv.reshape(*h.shape[:-1], 3, H, Dh).movedim(-2, 0).unbind(-2)
    return q, k, v


def attention_logits(model, vocabulary: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
    """Logits [H, V, P, V, P]: head, query (token, position), key (token, position).

    ``vocabulary`` are token ids (a task's tokens are ids ``0..|Σ|-1`` in the harness);
    ``positions`` are 0-based rows of the position table.
    """
    h = layer_inputs(model, vocabulary, positions)
    q, k, _ = qkv_heads(model, h)  # [H, V, P, Dh]
    scale = model.blocks[0].attn.kind.scale
    return torch.einsum("hyid,hzjd->hyizj", q, k) * scale


def period(model, positions: Sequence[int], tol: float = 1e-6) -> int:
    """Δ: the smallest Δ with p_i = p_{i+Δ} (within ``tol``, max-abs) over ``positions``
    (a contiguous range is expected); ``len(positions)`` when no shorter period exists
    (each position its own class), 1 without positional vectors."""
    positions = list(positions)
    p = position_vectors(model, positions)
    for delta in range(1, len(positions)):
        if float((p[delta:] - p[:-delta]).abs().max()) <= tol:
            return delta
    return len(positions)


def locality(model) -> int:
    """τ: the logit offset φ(j, i) of seed 004 is zero for additive absolute encodings
    (no relative bias), so the model is 0-local."""
    check_one_layer(model)
    return 0


@torch.no_grad()
def forward_logits(model, input_ids: torch.Tensor) -> torch.Tensor:
    """Attention logits [B, H, T, T] of the model's own forward pass on ``input_ids`` [B, T]
    (queries and keys captured at the attention kind; no mask applied)."""
    check_one_layer(model)
    captured = {}

    def hook(module, args):
        captured["q"], captured["k"] = args[1], args[2]

    kind = model.blocks[0].attn.kind
    handle = kind.register_forward_pre_hook(hook)
    try:
        model(input_ids)
    finally:
        handle.remove()
    return captured["q"] @ captured["k"].transpose(-1, -2) * kind.scale


def attention_weights(model, input_ids: torch.Tensor) -> torch.Tensor:
    """Post-softmax attention probabilities [B, H, T, T] (causal mask for decoders), as used
    for seed 004 Figure 3."""
    logits = forward_logits(model, input_ids)
    if model.config.causal:
        T = logits.shape[-1]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        logits = logits.masked_fill(future, float("-inf"))
    return logits.softmax(-1)
