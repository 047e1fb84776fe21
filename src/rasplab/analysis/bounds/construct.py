"""Hand-built one-layer models of seed 004 Appendix A.2, with closed-form logit margins.

Token and position vectors are rows of a Sylvester-Hadamard matrix (entries ±1, mutually
orthogonal, zero mean except row 0), so the pre-attention LayerNorm only divides by a known
constant and every attention logit is known exactly:

* :func:`simple_task_model` (SimpleTask, no positions): logit β/(1+eps) on tokens 0 and 1,
  0 on token 2, so γ = β/(1+eps) (eps: the LayerNorm's epsilon). Values: V E_0 = -V E_1.
* :func:`modp_task_model` (ModPTask, learned absolute positions with period p): logit
  β/(2+eps) on positions t ≡ k (mod p) (1-based t = row + 1), 0 elsewhere, so
  γ = β/(2+eps) and Δ = p. Values: +1/√(2+eps) for token 1, -1/√(2+eps) for token 0.

The MLP keeps its (seeded) random initialisation: the constructions fix the attention, which
is what γ, Δ and the value part of L measure.

>>> model = modp_task_model(p=5, k=1, beta=4.0)
>>> model.config.layers, model.config.width, model.blocks[0].mlp.up.weight.shape[0]
(1, 16, 256)
"""

from __future__ import annotations

import torch

from rasplab.errors import RasplabError
from rasplab.models import ModelConfig, build_model

WIDTH = 16  # seed 004 Appendix B: d = 16, MLP width 256
MLP_RATIO = 16


def hadamard(n: int) -> torch.Tensor:
    """The n x n Sylvester-Hadamard matrix (n a power of two), float64.

    >>> hadamard(4)[1:].sum(dim=1).tolist()       # rows after the first have zero mean
    [0.0, 0.0, 0.0]
    """
    H = torch.ones(1, 1, dtype=torch.float64)
    while H.shape[0] < n:
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)], 0)
    return H


def _appendix_b_model(pe: str, vocab_size: int, max_positions: int, seed: int):
    """The Appendix B architecture: one layer, one head, d = 16, MLP width 256."""
    cfg = ModelConfig(pe=pe, layers=1, heads=1, width=WIDTH, mlp_ratio=MLP_RATIO)
    return build_model(
        cfg, vocab_size=vocab_size, num_outputs=1, max_positions=max_positions, seed=seed
    )


def _set_attention(model, h: torch.Tensor, g: torch.Tensor, w: torch.Tensor) -> None:
    """q = u (h.x), k = u (g.x), v = e_0 (w.x), W_o = I, with |u|^2 * scale = 1."""
    D = model.config.width
    u = torch.zeros(D, dtype=torch.float64)
    u[0] = D**0.25  # scale = 1/sqrt(D) for one head, so scale * |u|^2 = 1
    e0 = torch.zeros(D, dtype=torch.float64)
    e0[0] = 1.0
    W = torch.cat([torch.outer(u, h), torch.outer(u, g), torch.outer(e0, w)])  # [3D, D]
    attn = model.blocks[0].attn
    with torch.no_grad():
        attn.qkv.weight.copy_(W.float())
        attn.qkv.bias.zero_()
        attn.out.weight.copy_(torch.eye(D))
        attn.out.bias.zero_()


def simple_task_model(beta: float, max_positions: int = 256, seed: int = 0):
    """SimpleTask (vocabulary 0, 1, 2; id 3 = padding): uniform attention on 0s and 1s as β grows."""
    H = hadamard(WIDTH)
    E = H[1:5]  # tokens 0, 1, 2 and padding
    model = _appendix_b_model("nope", 4, max_positions, seed)
    with torch.no_grad():
        model.embed.weight.copy_(E.float())
    n = float(WIDTH)
    _set_attention(
        model, h=(E[0] + E[1] + E[2]) / n, g=beta * (E[0] + E[1]) / n, w=(E[0] - E[1]) / n
    )
    return model


def modp_task_model(p: int, k: int, beta: float, max_positions: int = 256, seed: int = 0):
    """ModPTask (vocabulary 0, 1; id 2 = padding): position row j holds q_((j+1) mod p)."""
    if not 1 <= p <= WIDTH - 4 or not 0 <= k < p:
        raise RasplabError(
            f"modp_task_model needs 1 <= p <= {WIDTH - 4} and 0 <= k < p; got p={p}, k={k}"
        )
    H = hadamard(WIDTH)
    E, Q = H[1:4], H[4 : 4 + p]  # tokens 0, 1, padding; one vector per residue
    model = _appendix_b_model("ape", 3, max_positions, seed)
    rows = (torch.arange(max_positions) + 1) % p
    with torch.no_grad():
        model.embed.weight.copy_(E.float())
        model.pe.table.weight.copy_(Q[rows].float())
    h = (E[0] + E[1] + Q.sum(0)) / (2 * WIDTH)
    _set_attention(model, h=h, g=beta * Q[k] / WIDTH, w=(E[1] - E[0]) / WIDTH)
    return model
