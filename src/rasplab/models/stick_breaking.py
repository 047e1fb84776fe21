"""Stick-breaking attention (Tan et al. 2025, "Scaling stick-breaking attention"), in log space.

Query i walks back over the tokens *before* it, nearest first: i-1, i-2, ..., 0. Token j
breaks off ``beta_ij = sigmoid(z_ij)`` of the stick the nearer tokens left over, and the mass
left after token 0 goes to the current token's own value, as in the paper and its released
kernels (``attend_current=False``, output ``o + rem * v``):

    A_ij = beta_ij * prod_{j < l < i} (1 - beta_il)                      (j < i)
    o_i  = sum_{j<i} A_ij v_j + (1 - sum_{j<i} A_ij) v_i
    log A_ij = logsigmoid(z_ij) + sum_{j < l < i, allowed} logsigmoid(-z_il)

The sum is a suffix sum along the key axis (one cumsum over [B, H, T, T]; no loop over
positions). The first token has nothing before it: its output is its own value. Inherently
causal: no encoder form.

>>> from rasplab.models.config import ModelConfig
>>> sb = StickBreakingAttention(ModelConfig(attention="stick_breaking", width=8, heads=2))
>>> q = torch.zeros(1, 2, 3, 4); v = torch.arange(3.0).view(1, 1, 3, 1).expand(1, 2, 3, 4)
>>> sb(None, q, q, v, AttentionContext(causal=True, length=3))[0, 0, :, 0]
tensor([0.0000, 0.5000, 1.0000])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rasplab.models import reference as naive
from rasplab.models.attention import AttentionKind
from rasplab.models.masking import AttentionContext


class _StickBreakingWeights(torch.autograd.Function):
    """Attention weights from logits [B, H, T, T], with a fused hand-written backward.

    Forward: ``log A_ij = ls(z_ij) + sum_{l>j} m_il (ls(z_il) - z_il)`` with ``ls`` =
    logsigmoid and ``log(1 - sigmoid(z)) = ls(z) - z``. Backward: with ``g = dA * A``,
    ``dz_ij = m_ij (g_ij - sigmoid(z_ij) * sum_{l<=j} g_il)`` (one cumsum).
    """

    @staticmethod
    def forward(ctx, logits: torch.Tensor, blocked: torch.Tensor) -> torch.Tensor:
        log_beta = F.logsigmoid(logits)
        log_keep = (log_beta - logits).masked_fill_(blocked, 0.0)  # log(1 - beta)
        prefix = log_keep.cumsum(-1)
        total = prefix[..., -1:].clone()  # [B, H, T, 1]
        after = torch.sub(total, prefix, out=prefix)  # sum over allowed l > j
        weights = after.add_(log_beta).exp_().masked_fill_(blocked, 0.0)
        ctx.save_for_backward(logits, weights, blocked)
        return weights

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        logits, weights, blocked = ctx.saved_tensors
        g = grad * weights  # d loss / d log A (zero where blocked)
        dz = torch.sigmoid(logits).mul_(g.cumsum(-1))
        return torch.sub(g, dz, out=dz).masked_fill_(blocked, 0.0), None


class StickBreakingAttention(AttentionKind):
    """Stick-breaking attention: recency-ordered sigmoid weights instead of a softmax."""

    bidirectional = False

    def fast(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """O(T^2) tensors per head: log weights by a suffix sum, one matmul with v, then the
        leftover stick times the current value."""
        logits = torch.matmul(q, k.transpose(-1, -2)) * self.scale  # [B, H, T, T]
        bias = ctx.bias()
        if bias is not None:
            logits = logits + bias
        T = logits.shape[-1]
        eye = torch.eye(T, dtype=torch.bool, device=logits.device)
        weights = _StickBreakingWeights.apply(logits, ~ctx.allowed() | eye)  # earlier tokens
        leftover = 1 - weights.sum(-1, keepdim=True)  # [B, H, T, 1]
        return torch.matmul(weights, v) + leftover * v

    def reference(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Explicit stick breaking, one earlier token at a time."""
        return naive.stick_breaking(q, k, v, ctx.allowed(), ctx.bias(), self.scale)
