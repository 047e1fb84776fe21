"""The layers of a pre-LN transformer block: self-attention, MLP and Canon convolutions.

Block (pre-LN, GPT-2 style), with the Canon positions "abc" of seed 000 Table 5:

    h = LN1(x); h = h + canonA(h)                        # Canon-A (optional)
    qkv = W_qkv h; qkv = qkv + canonB(qkv)               # Canon-B (optional)
    x = x + W_out attention(q, k, v)
    h = LN2(x); h = h + canonC(h)                        # Canon-C (optional)
    x = x + MLP(h)

>>> from rasplab.models.config import ModelConfig
>>> from rasplab.models.masking import AttentionContext
>>> from rasplab.models.positional import PositionalEncoding
>>> cfg = ModelConfig(width=8, heads=2, canon=True)
>>> ctx = AttentionContext(causal=True, length=5, pe=PositionalEncoding(cfg, 5))
>>> Block(cfg, AttentionKind)(torch.randn(3, 5, 8), ctx).shape
torch.Size([3, 5, 8])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rasplab.models import reference as naive
from rasplab.models.attention import AttentionKind
from rasplab.models.config import ModelConfig
from rasplab.models.hook_points import HookPoint, attention_pattern, pattern_wanted
from rasplab.models.linear import Linear
from rasplab.models.masking import AttentionContext

CANON_KERNEL = 4  # seed 000 Table 5: Canon conv window 4


class CanonConv(nn.Module):
    """Canon layer (Allen-Zhu 2025): ``h + causal depthwise conv(h)``, kernel 4, no bias."""

    def __init__(self, channels: int, kernel: int = CANON_KERNEL) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(channels, kernel))  # [C, K]; K = lag 0..K-1

    def forward(self, h: torch.Tensor, ctx: AttentionContext) -> torch.Tensor:
        """h [B, T, C] plus its convolution; padding positions enter the sum as zeros."""
        src = h if ctx.key_pad is None else h * ctx.key_pad[..., None].to(h.dtype)
        if ctx.reference:
            return h + naive.canon_conv(src, self.weight)
        T, K = h.shape[1], self.weight.shape[1]
        padded = F.pad(src, (0, 0, K - 1, 0))  # [B, T + K - 1, C], zeros before the start
        conv = padded[:, K - 1 :] * self.weight[:, 0]
        for lag in range(1, K):
            conv = conv + padded[:, K - 1 - lag : K - 1 - lag + T] * self.weight[:, lag]
        return h + conv


def _gelu(h: torch.Tensor) -> torch.Tensor:
    """Exact (erf) GELU; GPT-2 uses the tanh approximation (within 5e-4), slower on CPU."""
    return F.gelu(h)


def _swiglu(h: torch.Tensor) -> torch.Tensor:
    """SwiGLU: silu(gate) * value from the two halves of the up-projection."""
    gate, value = h.chunk(2, dim=-1)
    return F.silu(gate) * value


MLP_ACTIVATIONS = {"gelu": (_gelu, 1), "swiglu": (_swiglu, 2)}  # activation, up-proj multiplier


class MLP(nn.Module):
    """Position-wise MLP: GELU with hidden ``ratio*D``, or SwiGLU with hidden ``2*ratio*D/3``."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.activation, parts = MLP_ACTIVATIONS[config.mlp]
        hidden = config.mlp_ratio * config.width
        if parts == 2:
            hidden = max(1, 2 * hidden // 3)  # parameter count of the GELU MLP
        self.up = Linear(config.width, parts * hidden)
        self.down = Linear(hidden, config.width)
        self.down.residual_projection = True
        self.hook_post = HookPoint()  # activations [B, T, hidden]

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """[B, T, D] -> [B, T, D]."""
        return self.down(self.hook_post(self.activation(self.up(h))))


class SelfAttention(nn.Module):
    """Multi-head self-attention: fused QKV projection, a registry attention kind, output."""

    def __init__(self, config: ModelConfig, kind: type[AttentionKind]) -> None:
        super().__init__()
        self.heads, self.head_dim = config.heads, config.head_dim
        self.qkv = Linear(config.width, 3 * config.width)
        self.canon_b = CanonConv(3 * config.width) if config.canon else None
        self.kind = kind(config)
        self.out = Linear(config.width, config.width)
        self.out.residual_projection = True
        self.hook_pattern = HookPoint()  # attention weights [B, H, T, T], formed only if hooked
        self.hook_z = HookPoint()  # head outputs [B, T, H, Dh]
        self.record_pattern = False  # form the weights even with no hook (hook_points.py)

    def forward(self, h: torch.Tensor, ctx: AttentionContext) -> torch.Tensor:
        """h [B, T, D] -> [B, T, D]."""
        B, T, D = h.shape
        qkv = self.qkv(h)  # [B, T, 3D]
        if self.canon_b is not None:
            qkv = self.canon_b(qkv, ctx)
        q, k, v = qkv.view(B, T, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        q, k = ctx.pe.rotate(q, k, ctx)  # each [B, H, T, Dh]
        if pattern_wanted(self.hook_pattern, self.record_pattern):
            pattern = self.hook_pattern(attention_pattern(self.kind, h, q, k, ctx))
            out = pattern @ v  # every kind is linear in its values
        else:
            out = self.kind(h, q, k, v, ctx)  # [B, H, T, Dh]
        return self.out(self.hook_z(out.transpose(1, 2)).reshape(B, T, D))


class Block(nn.Module):
    """One pre-LN transformer block (attention then MLP, each added residually)."""

    def __init__(self, config: ModelConfig, kind: type[AttentionKind]) -> None:
        super().__init__()
        width = config.width
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.canon_a = CanonConv(width) if config.canon else None
        self.canon_c = CanonConv(width) if config.canon else None
        self.attn = SelfAttention(config, kind)
        self.mlp = MLP(config)
        self.drop = nn.Dropout(config.dropout) if config.dropout > 0 else None
        self.hook_resid_pre, self.hook_resid_mid = HookPoint(), HookPoint()
        self.hook_resid_post = HookPoint()  # each [B, T, D]

    def forward(self, x: torch.Tensor, ctx: AttentionContext) -> torch.Tensor:
        """x [B, T, D] -> [B, T, D]."""
        x = self.hook_resid_pre(x)
        h = self.ln1(x)
        if self.canon_a is not None:
            h = self.canon_a(h, ctx)
        a = self.attn(h, ctx)
        x = self.hook_resid_mid(x + (a if self.drop is None else self.drop(a)))
        h = self.ln2(x)
        if self.canon_c is not None:
            h = self.canon_c(h, ctx)
        m = self.mlp(h)
        return self.hook_resid_post(x + (m if self.drop is None else self.drop(m)))
