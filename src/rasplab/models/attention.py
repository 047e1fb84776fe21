"""Attention kinds: softmax and FoX here; stick-breaking, entmax and PaTH in their own modules.

An attention kind turns per-head queries, keys and values [B, H, T, Dh] (already rotated
by the positional encoding) into per-head outputs [B, H, T, Dh], honouring the layer's
:class:`~rasplab.models.masking.AttentionContext` (causal/window/padding mask and positional
logit bias). Kinds with their own parameters (FoX's forget gate, PaTH's Householder vectors)
read them from the layer input x [B, T, D]. ``ctx.reference`` selects the naive path.

>>> from rasplab.models.config import ModelConfig
>>> cfg = ModelConfig(attention="fox", width=8, heads=2)
>>> fox = ForgettingAttention(cfg)
>>> q = k = v = torch.randn(1, 2, 5, 4)
>>> fox(torch.randn(1, 5, 8), q, k, v, AttentionContext(causal=True, length=5)).shape
torch.Size([1, 2, 5, 4])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from rasplab.models import kernels
from rasplab.models import reference as naive
from rasplab.models.linear import Linear
from rasplab.models.masking import AttentionContext

if TYPE_CHECKING:
    from rasplab.models.config import ModelConfig


class AttentionKind(nn.Module):
    """Softmax attention (the base kind): ``softmax(q k^T / sqrt(Dh) + bias) v``.

    Every kind multiplies its logits by ``self.scale``: 1/sqrt(Dh), or 1/Dh with
    ``model.attn_scale=mup``.
    """

    bidirectional = True  # has an encoder (non-causal) form

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.heads, self.head_dim = config.heads, config.head_dim
        # 1/sqrt(Dh), or μP's 1/Dh (Yang et al. 2022) under ``model.attn_scale=mup``
        self.scale = 1.0 / (
            config.head_dim if config.attn_scale == "mup" else math.sqrt(config.head_dim)
        )

    def forward(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Outputs [B, H, T, Dh] of the fast path, or of the naive one under ``ctx.reference``."""
        if ctx.reference:
            return self.reference(x, q, k, v, ctx)
        return self.fast(x, q, k, v, ctx)

    def fast(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """``scaled_dot_product_attention``: ``is_causal`` when the mask is plain."""
        mask = ctx.additive()
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=ctx.causal, scale=self.scale)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)

    def reference(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Row-by-row softmax attention."""
        return naive.softmax_attention(q, k, v, ctx.allowed(), ctx.bias(), self.scale)


class ForgettingAttention(AttentionKind):
    """FoX (Lin et al. 2025): a data-dependent forget gate added to the attention logits.

    ``f_t = sigmoid(w_h . x_t + b_h)`` per head; the logit of query i for key j <= i gains
    ``sum_{l=j+1..i} log f_l``. Encoder form: the gates between i and j in either direction,
    ``-|c_i - c_j|`` with ``c`` the cumulative sum of log gates. Padding gates are 1.
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.gate = Linear(config.width, config.heads)

    def log_forget(self, x: torch.Tensor, ctx: AttentionContext) -> torch.Tensor:
        """log f [B, H, T]; zero (no forgetting) at padding positions."""
        log_f = F.logsigmoid(self.gate(x)).transpose(1, 2)
        if ctx.key_pad is not None:
            log_f = log_f * ctx.key_pad[:, None, :].to(log_f.dtype)
        return log_f

    def fast(self, x, q, k, v, ctx):
        """Cumulative sums of log gates folded into SDPA (flash kernel in decoder mode).

        Decoder: the logit term ``c_i - c_j`` (``c`` = cumulative log gates) loses its row
        constant ``c_i`` to the softmax, and ``-c_j`` rides along as one extra key coordinate
        (query coordinate 1), so SDPA keeps its fused kernel and needs no [T, T] mask gradient.
        Encoder: the symmetric term ``-|c_i - c_j|`` as an additive mask.
        """
        log_f = self.log_forget(x, ctx)
        if kernels.usable(q, ctx):
            return kernels.forgetting_attention(q, k, v, log_f, self.scale)  # gpu-only
        c = log_f.cumsum(-1)  # [B, H, T]
        if not ctx.causal:
            decay = -(c[..., :, None] - c[..., None, :]).abs()
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=decay + ctx.additive_full(), scale=self.scale
            )
        ones = q.new_ones(q.shape[:-1] + (1,))
        q_aug = torch.cat([q, ones], dim=-1)  # [B, H, T, Dh + 1]
        k_aug = torch.cat([k, (-c / self.scale)[..., None]], dim=-1)
        v_aug = torch.cat([v, torch.zeros_like(ones)], dim=-1)  # equal widths keep the kernel
        mask = ctx.additive()
        out = F.scaled_dot_product_attention(
            q_aug, k_aug, v_aug, attn_mask=mask, is_causal=mask is None, scale=self.scale
        )
        return out[..., :-1]

    def reference(self, x, q, k, v, ctx):
        """Gates from the paper's formula, gate sums by explicit loops, row-by-row softmax."""
        log_f = naive.fox_log_gates(x, self.gate.weight, self.gate.bias, ctx.key_pad)
        decay = naive.fox_decay(log_f, ctx.causal)
        return naive.softmax_attention(q, k, v, ctx.allowed(), ctx.bias(), self.scale, decay)
