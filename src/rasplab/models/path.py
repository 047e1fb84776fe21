"""PaTH attention (Yang et al. 2025): positions as cumulative Householder transforms.

Each position s carries ``H_s = I - beta_s w_s w_s^T``, both computed from the tokens as the
paper's layer does: ``w_s`` is the per-head unit vector of a short causal convolution (width
3, depthwise, then SiLU) over the projections ``W_w x`` of tokens s-2..s, and
``beta_s = 2 sigmoid(W_beta x_s + b)`` in (0, 2) (negative eigenvalues allowed); and

    logit_ij = q_i^T H_i H_(i-1) ... H_(j+1) k_j / sqrt(Dh)        (j <= i)

Fast path: all T^2 products at once, without forming any matrix product. Walking the
product from the query side, ``u^(s) = H_(s+1) ... H_i q_i`` and ``c_is = w_s . u^(s)``
satisfy the unit upper-triangular system ``c_is + sum_{s<t<=i} beta_t (w_s . w_t) c_it =
(q_i . w_s)`` for s <= i, so with ``N = strict_upper(W W^T) diag(beta)``

    C = tril(Q W^T) (I + N)^(-T)          (one triangular solve for all queries)
    logits = Q K^T - C strict_lower(diag(beta) W K^T)

Cost per head: T x T x Dh products (Q W^T, W W^T, W K^T, then SDPA's Q K^T and P V), one
T x T unit-triangular solve with T right-hand sides and one T x T x T product:
O(T^3 + T^2 Dh) time and O(T^2) memory, against O(T^2 Dh^3) for the explicit matrix
products of the reference. At T = 100, Dh = 16 the T^3 terms dominate (about 10x softmax,
forward+backward; see ``benchmarks/bench_models.py``). The correction enters SDPA as an
additive mask that needs a gradient, which keeps SDPA on its unfused path. Padding
positions get ``beta = 0`` (identity) and enter the convolution as zeros. The convolution
starts as the identity (lag-0 weight 1). Only causal: the transforms between key and query
have no encoder form.

>>> from rasplab.models.config import ModelConfig
>>> cfg = ModelConfig(attention="path", width=8, heads=2)
>>> PathAttention(cfg)(torch.randn(1, 3, 8), *torch.randn(3, 1, 2, 3, 4),
...                    AttentionContext(causal=True, length=3)).shape
torch.Size([1, 2, 3, 4])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rasplab.models import kernels
from rasplab.models import reference as naive
from rasplab.models.attention import AttentionKind
from rasplab.models.linear import Linear
from rasplab.models.masking import AttentionContext

#: width of the short convolution on w (the authors' layer uses 3)
W_CONV = 3


class PathAttention(AttentionKind):
    """Softmax attention with PaTH's data-dependent Householder position transforms."""

    bidirectional = False

    def __init__(self, config) -> None:
        super().__init__(config)
        self.w_proj = Linear(config.width, config.width)  # one direction per head
        conv = torch.zeros(config.width, W_CONV)  # [C, K]: lag 0..K-1
        conv[:, 0] = 1.0
        self.w_conv = torch.nn.Parameter(conv)
        self.beta_proj = Linear(config.width, config.heads)

    def householder(self, x: torch.Tensor, ctx: AttentionContext):
        """Unit directions w [B, H, T, Dh] and strengths beta [B, H, T] (0 at padding)."""
        B, T, _ = x.shape
        u = self.w_proj(x)
        if ctx.key_pad is not None:
            u = u * ctx.key_pad[..., None].to(u.dtype)
        padded = F.pad(u, (0, 0, W_CONV - 1, 0))  # zeros before the start
        conv = sum(
            padded[:, W_CONV - 1 - lag : W_CONV - 1 - lag + T] * self.w_conv[:, lag]
            for lag in range(W_CONV)
        )
        w = F.silu(conv).view(B, T, self.heads, self.head_dim).transpose(1, 2)
        w = F.normalize(w, dim=-1)
        beta = 2 * torch.sigmoid(self.beta_proj(x)).transpose(1, 2)
        if ctx.key_pad is not None:
            beta = beta * ctx.key_pad[:, None, :].to(beta.dtype)
        return w, beta

    def fast(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Logit correction by one triangular solve, then SDPA with it as additive mask."""
        w, beta = self.householder(x, ctx)
        if kernels.usable(q, ctx, kernels.PATH_HEAD_DIMS):
            return kernels.path_attention(q, k, v, w, beta, self.scale)  # gpu-only
        qw = torch.matmul(q, w.transpose(-1, -2)).tril_()  # [i, s]: q_i . w_s for s <= i
        gram = torch.matmul(w, w.transpose(-1, -2))  # [s, t]: w_s . w_t
        n = (gram * beta[..., None, :]).triu_(1)  # N_st = beta_t w_s . w_t for t > s
        c_t = torch.linalg.solve_triangular(n, qw.transpose(-1, -2), upper=True, unitriangular=True)
        wk = (beta[..., :, None] * torch.matmul(w, k.transpose(-1, -2))).tril_(-1)  # [s, j], s > j
        correction = torch.matmul(c_t.transpose(-1, -2), wk)  # [i, j]: q_i^T (I - H..H) k_j
        mask = ctx.additive_full() - correction * self.scale
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)

    def reference(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """w and beta from the paper's formulas, then explicit Householder products for
        every (query, key) pair."""
        w, beta = naive.path_transforms(
            x,
            self.w_proj.weight,
            self.w_proj.bias,
            self.w_conv,
            self.beta_proj.weight,
            self.beta_proj.bias,
            self.heads,
            ctx.key_pad,
        )
        return naive.path_attention(q, k, v, w, beta, ctx.allowed(), ctx.bias(), self.scale)
