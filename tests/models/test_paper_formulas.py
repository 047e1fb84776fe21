"""Each variant against its paper's formula, written out here, and references that catch a wrong
gate, slope or strength (the naive references in ``reference.py`` share no parameter code with
the fast paths)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from rasplab.models import ModelConfig
from rasplab.models import reference as naive
from rasplab.models.attention import ForgettingAttention
from rasplab.models.entmax import ASEntmaxAttention, entmax
from rasplab.models.masking import AttentionContext
from rasplab.models.path import PathAttention
from rasplab.models.positional import ALiBi, NaPE, rope_apply, rope_tables
from rasplab.models.stick_breaking import StickBreakingAttention

from .conftest import GEN, make_model, outputs_and_grads, random_ids

sig = torch.sigmoid


def _one_hot_keys(z: torch.Tensor):
    """q, k [1, 1, T, T] whose scaled logits q_i . k_j / sqrt(T) are exactly ``z`` [T, T]."""
    T = z.shape[0]
    return (z * math.sqrt(T))[None, None], torch.eye(T, dtype=z.dtype)[None, None]


def test_stick_breaking_follows_tan_et_al():
    # Tan et al.: query i breaks its stick over the tokens before it, nearest first; the
    # leftover weighs its own value. Three tokens, written out by hand.
    z = torch.tensor([[0.0, 0.0, 0.0], [0.7, 0.0, 0.0], [-1.2, 0.4, 0.0]], dtype=torch.float64)
    v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [5.0, -3.0]], dtype=torch.float64)[None, None]
    q, k = _one_hot_keys(z)
    kind = StickBreakingAttention(ModelConfig(attention="stick_breaking", width=3, heads=1))
    out = kind.fast(None, q, k, v, AttentionContext(causal=True, length=3))[0, 0]
    b10, b21, b20 = sig(z[1, 0]), sig(z[2, 1]), sig(z[2, 0])
    expected = torch.stack(
        [
            v[0, 0, 0],  # nothing before the first token: all of its own value
            b10 * v[0, 0, 0] + (1 - b10) * v[0, 0, 1],
            b21 * v[0, 0, 1] + (1 - b21) * b20 * v[0, 0, 0] + (1 - b21) * (1 - b20) * v[0, 0, 2],
        ]
    )
    torch.testing.assert_close(out, expected)


def test_stick_breaking_weights_and_leftover_sum_to_one():
    kind = StickBreakingAttention(ModelConfig(attention="stick_breaking", width=8, heads=2))
    q, k = torch.randn(2, 1, 2, 7, 4, generator=GEN, dtype=torch.float64)
    v = torch.full((1, 2, 7, 4), 3.0, dtype=torch.float64)
    out = kind.fast(None, q, k, v, AttentionContext(causal=True, length=7))
    torch.testing.assert_close(out, v)  # a convex combination of equal values


def test_asentmax_scales_queries_by_the_papers_temperature():
    config = ModelConfig(attention="asentmax", pe="nope", width=4, heads=1)
    kind = ASEntmaxAttention(config).double()
    with torch.no_grad():
        kind.beta_proj.weight.copy_(torch.tensor([[0.5, -1.0, 0.0, 2.0]]))
        kind.gamma_proj.weight.copy_(torch.tensor([[0.3, 0.0, -0.2, 0.1]]))
    kind.requires_grad_(False)
    T = 5
    x = torch.randn(1, T, 4, generator=GEN, dtype=torch.float64)
    q, k, v = torch.randn(3, 1, 1, T, 4, generator=GEN, dtype=torch.float64)
    out = kind.fast(x, q, k, v, AttentionContext(causal=True, length=T))[0, 0]
    rows = []
    for i in range(T):  # Vasylenko et al.: delta + softplus(beta.x) * log(n)^(2 tanh(gamma.x))
        beta = math.log1p(math.exp(float(x[0, i] @ kind.beta_proj.weight[0])))
        gamma = 2 * math.tanh(float(x[0, i] @ kind.gamma_proj.weight[0]))
        factor = 1.0 + beta * math.log(i + 2) ** gamma
        z = (q[0, 0, i] * factor) @ k[0, 0, : i + 1].T / 2.0  # sqrt(Dh) = 2
        rows.append(entmax(z[None], 1.5)[0] @ v[0, 0, : i + 1])
    torch.testing.assert_close(out, torch.stack(rows))
    plain = entmax((q[0, 0, -1] @ k[0, 0].T / 2.0)[None], 1.5)[0] @ v[0, 0]
    assert not torch.allclose(plain, out[-1])  # the scale matters


def test_asentmax_under_nape_scales_only_the_nope_heads():
    kind = ASEntmaxAttention(ModelConfig(attention="asentmax", pe="nape", width=8, heads=4))
    factor = kind.query_scale(torch.randn(2, 6, 8, generator=GEN))
    assert factor.shape == (2, 4, 6, 1)
    assert torch.equal(factor[:, :2], torch.ones_like(factor[:, :2]))  # ALiBi heads
    assert (factor[:, 2:] > 1).all()  # NoPE heads: 1 + softplus(.) * log(n)^gamma > 1


def test_path_directions_come_from_a_causal_short_convolution():
    config = ModelConfig(attention="path", pe="nope", width=8, heads=2)
    kind = PathAttention(config).double()
    with torch.no_grad():
        kind.w_conv.normal_(generator=GEN)
    x = torch.randn(1, 6, 8, generator=GEN, dtype=torch.float64)
    ctx = AttentionContext(causal=True, length=6)
    w, beta = kind.householder(x, ctx)
    torch.testing.assert_close(w.norm(dim=-1), torch.ones(1, 2, 6, dtype=torch.float64))
    assert ((beta > 0) & (beta < 2)).all()
    moved = x.clone()
    moved[0, 3] += 1.0
    w2, _ = kind.householder(moved, ctx)
    changed = (w2 - w).abs().amax(dim=(0, 1, 3)) > 1e-9  # which positions' w changed
    assert changed.tolist() == [False, False, False, True, True, True]  # t = 3, 4, 5 (width 3)


def _ref_gap(case, patch, monkeypatch):
    """Largest output difference between the fast path and the reference after ``patch``."""
    model = make_model(case)
    ids = random_ids(2, 6)
    patch(monkeypatch)
    fast, _ = outputs_and_grads(model.use_reference(False), ids)
    ref, _ = outputs_and_grads(model.use_reference(True), ids)
    return float((fast - ref).abs().max().detach())


WRONG = {
    "alibi slopes doubled": (
        {"pe": "alibi"},
        lambda mp: mp.setattr(ALiBi, "slopes", lambda self: 2 * naive.alibi_slopes(self.heads)),
    ),
    "nape with ALiBi heads last": (
        {"pe": "nape"},
        lambda mp: mp.setattr(
            NaPE, "slopes", lambda self: naive.alibi_slopes(self.heads, self.heads // 2).flip(0)
        ),
    ),
    "fox gate without its bias": (
        {"pe": "nope", "attention": "fox"},
        lambda mp: mp.setattr(
            ForgettingAttention,
            "log_forget",
            lambda self, x, ctx: F.logsigmoid(x @ self.gate.weight.T).transpose(1, 2),
        ),
    ),
    "path beta in (0, 1)": (
        {"pe": "nope", "attention": "path"},
        lambda mp: mp.setattr(
            PathAttention,
            "householder",
            lambda self, x, ctx, _orig=PathAttention.householder: (
                _orig(self, x, ctx)[0],
                sig(self.beta_proj(x)).transpose(1, 2),
            ),
        ),
    ),
    "path w without its short convolution": (
        {"pe": "nope", "attention": "path"},
        lambda mp: mp.setattr(
            PathAttention,
            "householder",
            lambda self, x, ctx, _orig=PathAttention.householder: (
                F.normalize(
                    F.silu(self.w_proj(x)).view(*x.shape[:2], self.heads, -1).transpose(1, 2),
                    dim=-1,
                ),
                _orig(self, x, ctx)[1],
            ),
        ),
    ),
}


def test_the_unpatched_fast_paths_agree_with_the_references():
    for case, _ in WRONG.values():
        assert _ref_gap(case, lambda mp: None, None) < 1e-9


@pytest.mark.parametrize("name", list(WRONG))
def test_a_wrong_parameterisation_in_a_fast_path_fails_against_its_reference(name, monkeypatch):
    case, patch = WRONG[name]
    assert _ref_gap(case, patch, monkeypatch) > 1e-6


def test_rope_is_the_papers_rotation_up_to_a_fixed_permutation_of_head_dimensions():
    Dh, T = 8, 6
    x = torch.randn(1, 1, T, Dh, generator=GEN, dtype=torch.float64)
    cos, sin = rope_tables(T, Dh, "cpu", torch.float64)
    stored = rope_apply(x, cos, sin)
    order = [d for i in range(Dh // 2) for d in (i, i + Dh // 2)]  # pair i = (i, i + Dh/2)
    torch.testing.assert_close(stored[..., order], naive.rope_rotate(x[..., order], 10000.0))
    # the paper's first pair turns by angle t (frequency 1), its last by t * base^(-(Dh-2)/Dh)
    t = 3
    angle = t * 10000.0 ** (-(Dh - 2) / Dh)
    a, b = x[0, 0, t, Dh // 2 - 1], x[0, 0, t, Dh - 1]
    torch.testing.assert_close(
        stored[0, 0, t, Dh // 2 - 1], a * math.cos(angle) - b * math.sin(angle)
    )
