"""alpha-entmax attention (Peters et al. 2019; seed 000 uses alpha = 1.5): sparse attention.

``entmax_alpha(z)_i = [(alpha-1) z_i - tau]_+^(1/(alpha-1))`` with tau such that the weights
sum to one; keys whose logits fall below the threshold get exactly zero weight.

* alpha = 1.5 (the default): exact, sort-based threshold (O(T log T) per row).
* other alpha in (1, 2]: vectorized bisection on tau (40 halvings in float32, 60 in float64).

Both use a custom backward, the closed-form Jacobian ``diag(s) - s s^T / sum(s)`` with
``s = p^(2-alpha)`` on the support. The naive reference (``reference.entmax_bisect``) bisects
row by row and gets its gradient by autograd through one Newton step.

ASEntmax (adaptive-scalable entmax, Vasylenko et al. 2025, "Long-context generalization with
sparse attention"; seed 000 Table 5 "ASEntmax alpha 1.5") is ``model.attention=asentmax``:
alpha-entmax of logits whose query is first scaled by a learned, length-dependent temperature,

    q_i <- q_i * (delta + beta_i * log(n_i)^gamma_i),
    beta_i = softplus(W_beta x_i),  gamma_i = 2 tanh(W_gamma x_i),  delta = 1,

per head, ``x_i`` the layer input at query i and ``n_i = i + 2`` (the authors' released code
starts positions at log 2 so that the first query is scaled too). Under NaPE only the NoPE
heads (slope 0) are scaled, as in the paper; ALiBi heads keep their plain logits.

>>> entmax15(torch.tensor([[2.0, 1.0, -3.0]]))
tensor([[0.8307, 0.1693, 0.0000]])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rasplab.models import reference as naive
from rasplab.models.attention import AttentionKind
from rasplab.models.linear import Linear
from rasplab.models.masking import AttentionContext

#: ASEntmax's fixed offset delta and the range of its exponent gamma (the authors' defaults)
AS_DELTA, AS_GAMMA_RANGE = 1.0, 2.0


class _EntmaxFunction(torch.autograd.Function):
    """alpha-entmax over the last axis with the closed-form backward."""

    @staticmethod
    def forward(ctx, scores: torch.Tensor, alpha: float) -> torch.Tensor:
        if alpha == 1.5:
            root = _entmax15_root(scores)  # s = sqrt(p) = p^(2 - alpha)
            probs = root.square()
        else:
            probs = _entmax_bisect(scores, alpha)
            root = torch.where(probs > 0, probs ** (2 - alpha), 0)
        ctx.save_for_backward(root)
        return probs

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (s,) = ctx.saved_tensors  # p^(2 - alpha) on the support, 0 elsewhere
        gs = grad * s
        return gs.sub_(s * (gs.sum(-1, keepdim=True) / s.sum(-1, keepdim=True))), None


def _entmax15_root(scores: torch.Tensor) -> torch.Tensor:
    """sqrt of exact entmax-1.5: sort, find the support size k*, tau from its mean and variance."""
    z = (scores - scores.amax(-1, keepdim=True)).mul_(0.5)  # max 0; -inf entries ...
    z = z.clamp_min_(-2.0)  # ... and anything below -1 lie outside the support (tau >= -1)
    zs = z.sort(dim=-1, descending=True).values
    n = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    mean = zs.cumsum(-1).div_(n)
    mean_sq = (zs * zs).cumsum(-1).div_(n)
    delta = (1 - n * (mean_sq - mean * mean)) / n
    tau = mean.sub_(delta.clamp_min_(0).sqrt_())  # threshold if the support were the top k
    support = (tau <= zs).sum(-1, keepdim=True)  # k*: the largest k that is consistent
    tau_star = tau.gather(-1, support - 1)
    return z.sub_(tau_star).clamp_min_(0)


def _entmax_bisect(scores: torch.Tensor, alpha: float) -> torch.Tensor:
    """alpha-entmax by bisection on tau, renormalised (any alpha in (1, 2])."""
    am1 = alpha - 1.0
    x = (scores - scores.amax(-1, keepdim=True)) * am1  # max 0, tau in [-1, 0]
    lo = torch.full_like(x[..., :1], -1.0)
    hi = torch.zeros_like(lo)
    for _ in range(60 if scores.dtype == torch.float64 else 40):
        mid = (lo + hi) / 2
        big = (x - mid).clamp_min(0).pow(1 / am1).sum(-1, keepdim=True) >= 1
        lo, hi = torch.where(big, mid, lo), torch.where(big, hi, mid)
    probs = (x - lo).clamp_min(0).pow(1 / am1)
    return probs / probs.sum(-1, keepdim=True)


def entmax(scores: torch.Tensor, alpha: float = 1.5) -> torch.Tensor:
    """alpha-entmax over the last axis; -inf scores get weight 0 (each row needs a finite one)."""
    return _EntmaxFunction.apply(scores, float(alpha))


def entmax15(scores: torch.Tensor) -> torch.Tensor:
    """entmax-1.5 over the last axis (exact, sort-based)."""
    return entmax(scores, 1.5)


class EntmaxAttention(AttentionKind):
    """Attention whose weights are alpha-entmax of the logits (``model.entmax_alpha``)."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.alpha = float(config.entmax_alpha)

    def fast(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Masked logits [B, H, T, T], entmax over keys, one matmul with v."""
        logits = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        return torch.matmul(entmax(ctx.logits_mask(logits), self.alpha), v)

    def reference(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Row-by-row bisection entmax."""
        return naive.entmax_attention(q, k, v, ctx.allowed(), ctx.bias(), self.scale, self.alpha)


class ASEntmaxAttention(EntmaxAttention):
    """ASEntmax: alpha-entmax with a learned per-query, length-dependent logit scale."""

    def __init__(self, config) -> None:
        super().__init__(config)
        # NaPE: the scale applies to the NoPE heads only (the last floor(H/2) heads)
        self.scaled = config.heads // 2 if config.pe == "nape" else config.heads
        self.beta_proj = Linear(config.width, self.scaled, bias=False)
        self.gamma_proj = Linear(config.width, self.scaled, bias=False)

    def query_scale(self, x: torch.Tensor) -> torch.Tensor:
        """The factor [B, H, T, 1] each query is multiplied by (1 for unscaled heads)."""
        T = x.shape[1]
        beta = F.softplus(self.beta_proj(x)).transpose(1, 2)  # [B, S, T]
        gamma = AS_GAMMA_RANGE * torch.tanh(self.gamma_proj(x)).transpose(1, 2)
        log_n = torch.log(torch.arange(2, T + 2, device=x.device, dtype=x.dtype))  # [T]
        scale = AS_DELTA + beta * log_n.pow(gamma)
        ones = scale.new_ones(x.shape[0], self.heads - self.scaled, T)
        return torch.cat([ones, scale], dim=1)[..., None]

    def fast(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """Scaled queries, then entmax attention."""
        return super().fast(x, q * self.query_scale(x), k, v, ctx)

    def reference(self, x, q, k, v, ctx: AttentionContext) -> torch.Tensor:
        """The paper's scale computed element by element, then row-by-row bisection entmax."""
        return naive.asentmax_attention(
            q,
            k,
            v,
            x,
            self.beta_proj.weight,
            self.gamma_proj.weight,
            ctx.allowed(),
            ctx.bias(),
            self.scale,
            self.alpha,
        )
