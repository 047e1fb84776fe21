"""Positional encodings: absolute embeddings (APE, sinusoidal), RoPE, ALiBi/NaPE biases, NoPE.

Each encoding is an object with three hooks, all no-ops by default: ``embed`` adds a vector
to each token embedding (absolute encodings), ``rotate`` turns queries and keys (RoPE) and
``logit_bias`` adds a fixed [H, T, T] bias to attention logits (ALiBi, NaPE). Every hook has
a fast path and a naive one (``reference=True``, from ``reference.py``).

>>> from rasplab.models.config import ModelConfig
>>> pe = ALiBi(ModelConfig(pe="alibi", heads=2, width=8), max_positions=16)
>>> pe.logit_bias(3, device="cpu", dtype=torch.float32)[0]
tensor([[ 0.0000, -0.0625, -0.1250],
        [-0.0625,  0.0000, -0.0625],
        [-0.1250, -0.0625,  0.0000]])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn

from rasplab.errors import RasplabError
from rasplab.models import reference as naive

if TYPE_CHECKING:
    from rasplab.models.config import ModelConfig
    from rasplab.models.masking import AttentionContext

INIT_STD = 0.02  # GPT-2 initialisation scale, shared with transformer.py
ROPE_BASE = 10000.0  # seed 000 Table 5


class PositionalEncoding(nn.Module):
    """No positional information (NoPE); the base of every encoding."""

    rotary = False  # rotates queries and keys: needs an even head dimension
    uses_offset = False  # reads ``position_offset`` (absolute learned positions)

    def __init__(self, config: ModelConfig, max_positions: int) -> None:
        super().__init__()
        self.width, self.heads, self.max_positions = config.width, config.heads, max_positions

    def embed(self, like: torch.Tensor, offset, pad_mask=None, reference: bool = False):
        """Vectors [B|1, T, D] added to the token embeddings ``like`` [B, T, D], or None.

        ``offset`` [B] shifts absolute positions; ``pad_mask`` [B, T] marks real tokens.
        """
        return None

    def rotate(self, q: torch.Tensor, k: torch.Tensor, ctx: AttentionContext):
        """Queries and keys [B, H, T, Dh] after the encoding's rotation."""
        return q, k

    def logit_bias(self, length: int, device, dtype, reference: bool = False):
        """Additive attention-logit bias [H, T, T], or None."""
        return None


class LearnedAbsolute(PositionalEncoding):
    """Learned absolute positions (APE) read at ``offset + t``, as in seed 003 Appendix E.3."""

    uses_offset = True

    def __init__(self, config: ModelConfig, max_positions: int) -> None:
        super().__init__(config, max_positions)
        self.table = nn.Embedding(max_positions, config.width)

    def embed(self, like, offset, pad_mask=None, reference=False):
        """Rows ``offset + t`` of the table; a real token past the table is an error.

        Padding slots past the table read its last row (their embedding is never used).
        """
        length = like.shape[1]
        if offset is not None and int(offset.min()) < 0:
            raise RasplabError(f"position_offset must be >= 0, got {int(offset.min())}")
        if offset is None and length <= self.max_positions:
            return self.table.weight[:length].unsqueeze(0)  # [1, T, D], no gather
        positions = torch.arange(length, device=like.device)[None, :]  # [1, T]
        if offset is not None:
            positions = positions + offset[:, None]  # [B, T]
        real = positions if pad_mask is None else torch.where(pad_mask, positions, 0)
        last = int(real.max())
        if last >= self.max_positions:
            raise RasplabError(
                f"APE has {self.max_positions} positions but a token sits at position {last} "
                f"(offset + index); build the model with max_positions > {last} "
                "or use shorter inputs / smaller offsets"
            )
        return self.table(positions.clamp_max(self.max_positions - 1))


class Sinusoidal(PositionalEncoding):
    """Fixed sin/cos positions (Vaswani et al.), scaled to the embeddings' initial RMS."""

    def embed(self, like, offset, pad_mask=None, reference=False):
        """The table for positions 0..T-1 (offsets are only for learned APE)."""
        table = naive.sinusoidal_table if reference else sinusoidal_table
        scale = INIT_STD * math.sqrt(2.0)  # per-coordinate RMS 0.02, like the token embeddings
        return (table(like.shape[1], self.width) * scale).to(like.device, like.dtype)


class Rotary(PositionalEncoding):
    """RoPE (Su et al.): rotate query/key pairs (d, d + Dh/2) by position-dependent angles."""

    rotary = True

    def rotate(self, q, k, ctx):
        """Rotate q and k [B, H, T, Dh] by angle ``t * base^(-2i/Dh)`` at position t."""
        if ctx.reference:
            return naive.rope_rotate_half_split(q, ROPE_BASE), naive.rope_rotate_half_split(
                k, ROPE_BASE
            )
        key = ("rope", q.shape[-2], q.shape[-1], q.dtype)
        if key not in ctx.cache:
            ctx.cache[key] = rope_tables(q.shape[-2], q.shape[-1], q.device, q.dtype)
        cos, sin = ctx.cache[key]
        return rope_apply(q, cos, sin), rope_apply(k, cos, sin)


class ALiBi(PositionalEncoding):
    """ALiBi (Press et al.): head h adds ``-m_h |i - j|`` with ``m_h = 2^(-8(h+1)/H)``."""

    def slopes(self) -> torch.Tensor:
        """Per-head slopes [H] (seed 000 Table 5: ``(2^(-8/n))^(i+1)``)."""
        return torch.tensor([2.0 ** (-8.0 * (h + 1) / self.heads) for h in range(self.heads)])

    def logit_bias(self, length, device, dtype, reference=False):
        """``-m_h (i - j)`` below the diagonal; ``-m_h |i - j|`` in encoder mode."""
        if reference:  # slopes from the formula, written out on their own
            nope_heads = self.heads // 2 if isinstance(self, NaPE) else 0
            slopes = naive.alibi_slopes(self.heads, nope_heads).to(device=device, dtype=dtype)
            return naive.alibi_bias(slopes, length)
        slopes = self.slopes().to(device=device, dtype=dtype)
        pos = torch.arange(length, device=device)
        neg_dist = (-(pos[:, None] - pos[None, :]).abs()).to(dtype)  # [T, T], -|i - j|
        return slopes[:, None, None] * neg_dist  # [H, T, T]; causal masking happens elsewhere


class NaPE(ALiBi):
    """NaPE (seed 000 Table 4): ALiBi whose latter half of heads have slope 0 (NoPE heads)."""

    def slopes(self) -> torch.Tensor:
        """ALiBi slopes for the first ceil(H/2) heads, zero for the last floor(H/2)."""
        slopes = super().slopes()
        slopes[self.heads - self.heads // 2 :] = 0.0
        return slopes


def sinusoidal_table(length: int, width: int) -> torch.Tensor:
    """Sinusoidal table [1, T, D]: even columns sin(t w_i), odd columns cos(t w_i)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, width, 2, dtype=torch.float64) * (-math.log(10000.0) / width))
    table = torch.zeros(length, width, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)[:, : width // 2]
    return table.unsqueeze(0)


def rope_tables(length: int, head_dim: int, device, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables [T, Dh] for the half-split RoPE convention."""
    inv = ROPE_BASE ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.arange(length, dtype=torch.float64)[:, None] * inv  # [T, Dh/2]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().to(device, dtype), angles.sin().to(device, dtype)


def rope_apply(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x [..., T, Dh]: pairs (d, d + Dh/2) turn by the angle of their position."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def sample_position_offsets(
    lengths: torch.Tensor, max_positions: int, generator: torch.Generator
) -> torch.Tensor:
    """Random APE offsets [B], uniform in ``0 .. max_positions - length`` (seed 003 E.3).

    >>> from rasplab.seeding import torch_generator
    >>> off = sample_position_offsets(torch.tensor([3, 10]), 10, torch_generator(0, "doc"))
    >>> off.tolist()[1], 0 <= off.tolist()[0] <= 7
    (0, True)
    """
    room = max_positions - lengths.to(torch.long)  # offsets 0 .. room inclusive
    if int(room.min()) < 0:
        raise RasplabError(
            f"an input of length {int(lengths.max())} does not fit in {max_positions} positions"
        )
    draws = torch.rand(lengths.shape, generator=generator, dtype=torch.float64)
    return torch.minimum((draws * (room + 1).to(torch.float64)).floor().to(torch.long), room)
