"""Naive reference implementations of every variant: explicit loops, written for clarity.

The fast paths in ``positional.py``, ``attention.py``, ``stick_breaking.py``, ``entmax.py``,
``path.py`` and ``blocks.py`` are tested equal to these (forward and gradients, float64).
They loop over positions in Python and are meant for small shapes only.

Shapes: q, k, v, w [B, H, T, Dh]; per-position gates [B, H, T]; ``allowed`` [B|1, 1, T, T];
``bias`` [H, T, T] or None.

>>> alibi_bias(torch.tensor([0.5]), 3)[0]
tensor([[ 0.0000, -0.5000, -1.0000],
        [-0.5000,  0.0000, -0.5000],
        [-1.0000, -0.5000,  0.0000]])
"""

from __future__ import annotations

import math

import torch


def sinusoidal_table(length: int, width: int) -> torch.Tensor:
    """[1, T, D] with sin(t / 10000^(2i/D)) at column 2i and cos at column 2i + 1."""
    table = torch.zeros(1, length, width, dtype=torch.float64)
    for t in range(length):
        for col in range(width):
            angle = t / 10000.0 ** ((col - col % 2) / width)
            table[0, t, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table


def rope_rotate(x: torch.Tensor, base: float) -> torch.Tensor:
    """RoPE as Su et al. write it: x [..., T, Dh] at position t times the block-diagonal R_t whose
    i-th 2x2 block rotates the coordinate pair (2i, 2i+1) by ``t * base^(-2i/Dh)``."""
    T, Dh = x.shape[-2], x.shape[-1]
    out = []
    for t in range(T):
        rot = torch.zeros(Dh, Dh, dtype=x.dtype, device=x.device)
        for i in range(Dh // 2):
            angle = t * base ** (-2.0 * i / Dh)
            c, s = math.cos(angle), math.sin(angle)
            rot[2 * i, 2 * i], rot[2 * i, 2 * i + 1] = c, -s
            rot[2 * i + 1, 2 * i], rot[2 * i + 1, 2 * i + 1] = s, c
        out.append(x[..., t, :] @ rot.T)
    return torch.stack(out, dim=-2)


def rope_rotate_half_split(x: torch.Tensor, base: float) -> torch.Tensor:
    """The same rotation for head dimensions stored half-split, pair i = (i, i + Dh/2) (the
    GPT-NeoX layout rasplab uses): gather into the paper's interleaved order, rotate, scatter.

    The two layouts differ by a fixed permutation of head dimensions, which the learned query
    and key projections absorb; the frequencies and the rotation are the paper's.
    """
    half = x.shape[-1] // 2
    order = [d for i in range(half) for d in (i, i + half)]  # interleaved position -> stored
    back = [order.index(d) for d in range(2 * half)]
    return rope_rotate(x[..., order], base)[..., back]


def alibi_slopes(heads: int, nope_heads: int = 0) -> torch.Tensor:
    """ALiBi slopes (Press et al.; seed 000 Table 5): ``m_h = (2^(-8/n))^(h+1)`` for head h of n;
    NaPE (seed 000 Table 4) sets the last ``nope_heads`` slopes to 0."""
    slopes = [(2.0 ** (-8.0 / heads)) ** (h + 1) for h in range(heads)]
    for h in range(heads - nope_heads, heads):
        slopes[h] = 0.0
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(slopes: torch.Tensor, length: int) -> torch.Tensor:
    """[H, T, T] with entry -slope_h * |i - j|, filled one entry at a time."""
    bias = torch.zeros(len(slopes), length, length, dtype=slopes.dtype, device=slopes.device)
    for h in range(len(slopes)):
        for i in range(length):
            for j in range(length):
                bias[h, i, j] = slopes[h] * -abs(i - j)
    return bias


def _scores(q, k, i, j, bias, scale):
    """Logit of query i against key j [B, H], with the positional bias."""
    s = (q[:, :, i] * k[:, :, j]).sum(-1) * scale
    return s if bias is None else s + bias[:, i, j]


def softmax_attention(q, k, v, allowed, bias, scale, extra=None):
    """Softmax attention one query row at a time; ``extra`` [B, H, T, T] adds to the logits."""
    B, H, T, _ = q.shape
    rows = []
    for i in range(T):
        logits = torch.stack([_scores(q, k, i, j, bias, scale) for j in range(T)], dim=-1)
        if extra is not None:
            logits = logits + extra[:, :, i]
        logits = logits.masked_fill(~allowed[:, :, i].expand(B, H, T), float("-inf"))
        rows.append(torch.einsum("bhj,bhjd->bhd", torch.softmax(logits, dim=-1), v))
    return torch.stack(rows, dim=2)


def fox_log_gates(x, weight, bias, key_pad=None):
    """FoX (Lin et al. 2025) log forget gates [B, H, T]: ``log f_t = log sigmoid(w_h . x_t + b_h)``
    per head, written out one position at a time; 0 (``f = 1``) at padding positions."""
    B, T, _ = x.shape
    out = torch.zeros(B, weight.shape[0], T, dtype=x.dtype, device=x.device)
    for b in range(B):
        for t in range(T):
            if key_pad is not None and not bool(key_pad[b, t]):
                continue
            f = 1.0 / (1.0 + torch.exp(-(weight @ x[b, t] + bias)))
            out[b, :, t] = torch.log(f)
    return out


def fox_decay(log_f: torch.Tensor, causal: bool) -> torch.Tensor:
    """FoX logit term [B, H, T, T]: sum of log forget gates strictly after j up to i.

    Encoder mode sums the gates between the two positions in either direction.
    """
    B, H, T = log_f.shape
    out = torch.zeros(B, H, T, T, dtype=log_f.dtype, device=log_f.device)
    for i in range(T):
        for j in range(T):
            lo, hi = min(i, j), max(i, j)
            if j <= i or not causal:
                out[:, :, i, j] = log_f[:, :, lo + 1 : hi + 1].sum(-1)
    return out


def stick_breaking(q, k, v, allowed, bias, scale):
    """Stick-breaking attention as Tan et al. define it: query i breaks its stick at the
    tokens before it, i-1, i-2, ..., 0 in turn, and the rest of the stick weighs its own value.

    Token j takes ``beta_ij = sigmoid(logit_ij)`` of what the nearer allowed tokens left over.
    """
    B, H, T, Dh = q.shape
    outs = []
    for i in range(T):
        remaining = torch.ones(B, H, dtype=q.dtype, device=q.device)
        out = torch.zeros(B, H, Dh, dtype=q.dtype, device=q.device)
        for j in range(i - 1, -1, -1):
            ok = allowed[:, 0, i, j].to(q.dtype)[:, None].expand(B, H)
            beta = torch.sigmoid(_scores(q, k, i, j, bias, scale)) * ok
            out = out + (beta * remaining)[..., None] * v[:, :, j]
            remaining = remaining * (1 - beta)
        outs.append(out + remaining[..., None] * v[:, :, i])
    return torch.stack(outs, dim=2)


def entmax_bisect(z: torch.Tensor, alpha: float, iters: int = 100) -> torch.Tensor:
    """alpha-entmax over the last axis by bisection on the threshold, then one Newton step.

    ``p_i = [(alpha-1) z_i - tau]_+^(1/(alpha-1))`` with tau chosen so that sum p = 1. The
    bisection runs without gradients; the final Newton step is differentiable, which gives
    exactly the implicit-function gradient. -inf entries get probability 0.
    """
    am1 = alpha - 1.0
    x = z * am1
    with torch.no_grad():
        hi = x.max(dim=-1, keepdim=True).values  # tau < max: the top entry is in the support
        lo = hi - 1.0  # tau >= max - 1: the top entry alone has mass >= 1
        for _ in range(iters):
            mid = (lo + hi) / 2
            mass = torch.clamp(x - mid, min=0).pow(1 / am1).sum(-1, keepdim=True)
            lo = torch.where(mass >= 1, mid, lo)
            hi = torch.where(mass >= 1, hi, mid)
        tau0 = (lo + hi) / 2
        support = (x > tau0).to(z.dtype)
        slope = (torch.clamp(x - tau0, min=0).pow(1 / am1 - 1) * support).sum(-1, keepdim=True)
    mass = torch.clamp(x - tau0, min=0).pow(1 / am1).sum(-1, keepdim=True)
    tau = tau0 + (mass - 1) * am1 / slope  # Newton: d mass / d tau = -slope / (alpha-1)
    return torch.clamp(x - tau, min=0).pow(1 / am1)


def entmax_attention(q, k, v, allowed, bias, scale, alpha):
    """alpha-entmax attention, one query row at a time, normalised by bisection."""
    B, H, T, _ = q.shape
    rows = []
    for i in range(T):
        logits = torch.stack([_scores(q, k, i, j, bias, scale) for j in range(T)], dim=-1)
        logits = logits.masked_fill(~allowed[:, :, i].expand(B, H, T), float("-inf"))
        rows.append(torch.einsum("bhj,bhjd->bhd", entmax_bisect(logits, alpha), v))
    return torch.stack(rows, dim=2)


def asentmax_attention(q, k, v, x, w_beta, w_gamma, allowed, bias, scale, alpha):
    """ASEntmax (Vasylenko et al. 2025): entmax of ``(delta + beta_i log(n_i)^gamma_i) q_i . k_j``.

    ``beta_i = softplus(w_beta . x_i)``, ``gamma_i = 2 tanh(w_gamma . x_i)``, ``delta = 1``,
    ``n_i = i + 2``; the S rows of ``w_beta`` scale the last S heads (all of them, or the NoPE
    heads of NaPE); a positional bias is added after the scaling.
    """
    B, H, T, _ = q.shape
    S = w_beta.shape[0]
    factor = torch.ones(B, H, T, dtype=q.dtype, device=q.device)
    for b in range(B):
        for s in range(S):
            for i in range(T):
                beta = torch.log1p(torch.exp(x[b, i] @ w_beta[s]))
                gamma = 2.0 * torch.tanh(x[b, i] @ w_gamma[s])
                factor[b, H - S + s, i] = 1.0 + beta * math.log(i + 2) ** gamma
    return entmax_attention(q * factor[..., None], k, v, allowed, bias, scale, alpha)


def path_transforms(x, w_weight, w_bias, conv, b_weight, b_bias, heads, key_pad=None):
    """PaTH's (Yang et al. 2025) directions w [B, H, T, Dh] and strengths beta [B, H, T].

    ``u_t = W_w x_t + b_w`` (zero at padding); ``w_t`` = per-head L2 normalisation of
    ``silu(sum_lag conv[:, lag] * u_(t-lag))`` (a causal depthwise short convolution);
    ``beta_t = 2 sigmoid(W_beta x_t + b_beta)``, 0 at padding.
    """
    B, T, C = x.shape
    Dh = C // heads
    u = torch.zeros(B, T, C, dtype=x.dtype, device=x.device)
    beta = torch.zeros(B, heads, T, dtype=x.dtype, device=x.device)
    for b in range(B):
        for t in range(T):
            if key_pad is None or bool(key_pad[b, t]):
                u[b, t] = w_weight @ x[b, t] + w_bias
                beta[b, :, t] = 2.0 / (1.0 + torch.exp(-(b_weight @ x[b, t] + b_bias)))
    w = torch.zeros(B, heads, T, Dh, dtype=x.dtype, device=x.device)
    for b in range(B):
        for t in range(T):
            c = sum(conv[:, lag] * u[b, t - lag] for lag in range(conv.shape[1]) if t >= lag)
            c = c * torch.sigmoid(c)
            for h in range(heads):
                part = c[h * Dh : (h + 1) * Dh]
                w[b, h, t] = part / torch.clamp(torch.linalg.vector_norm(part), min=1e-12)
    return w, beta


def path_attention(q, k, v, w, beta, allowed, bias, scale):
    """PaTH attention with explicit Householder products for every (query, key) pair.

    logit_ij = q_i^T H_i H_(i-1) ... H_(j+1) k_j with H_s = I - beta_s w_s w_s^T, then softmax.
    """
    B, H, T, Dh = q.shape
    eye = torch.eye(Dh, dtype=q.dtype, device=q.device)
    house = eye - beta[..., None, None] * w[..., :, None] * w[..., None, :]  # [B, H, T, Dh, Dh]
    rows = []
    for i in range(T):
        product = eye.expand(B, H, Dh, Dh)  # H_i ... H_(j+1), empty for j = i
        logits = [None] * T
        for j in range(i, -1, -1):
            qt = (q[:, :, i, None, :] @ product)[..., 0, :]  # q_i^T H_i ... H_(j+1)
            logits[j] = (qt * k[:, :, j]).sum(-1) * scale
            product = product @ house[:, :, j]
        for j in range(i + 1, T):
            logits[j] = torch.zeros(B, H, dtype=q.dtype, device=q.device)
        row = torch.stack(logits, dim=-1)
        if bias is not None:
            row = row + bias[:, i]
        row = row.masked_fill(~allowed[:, :, i].expand(B, H, T), float("-inf"))
        rows.append(torch.einsum("bhj,bhjd->bhd", torch.softmax(row, -1), v))
    return torch.stack(rows, dim=2)


def canon_conv(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Causal depthwise convolution: ``y_t = sum_k weight[:, k] * x_(t-k)`` per channel.

    x [B, T, C], weight [C, K]; positions before the start count as zero.
    """
    B, T, C = x.shape
    out = torch.zeros_like(x)
    for t in range(T):
        for lag in range(weight.shape[1]):
            if t - lag >= 0:
                out[:, t] = out[:, t] + weight[:, lag] * x[:, t - lag]
    return out
