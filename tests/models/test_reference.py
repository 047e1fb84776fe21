"""Every fast path equals its naive reference: outputs and gradients, float64, small shapes."""

from __future__ import annotations

import math

import pytest
import torch

from rasplab.models import ModelConfig
from rasplab.models import reference as naive
from rasplab.models.blocks import CanonConv
from rasplab.models.entmax import entmax, entmax15
from rasplab.models.linear import Linear, onednn_available
from rasplab.models.masking import AttentionContext
from rasplab.models.positional import ALiBi, NaPE, rope_apply, rope_tables, sinusoidal_table

from .conftest import GEN, make_model, outputs_and_grads

PADS = {
    "none": None,
    "right": torch.tensor([[True] * 6, [True] * 4 + [False] * 2]),
    "gaps": torch.tensor([[False, True, True, False, True, True], [True] * 5 + [False]]),
}


@pytest.mark.parametrize("pad", list(PADS), ids=list(PADS))
def test_model_fast_path_equals_reference(case, pad, ids):
    model = make_model(case)
    pad_mask = PADS[pad]
    offset = torch.tensor([0, 3])
    fast_out, fast_grads = outputs_and_grads(model.use_reference(False), ids, pad_mask, offset)
    ref_out, ref_grads = outputs_and_grads(model.use_reference(True), ids, pad_mask, offset)
    real = torch.ones_like(ids, dtype=torch.bool) if pad_mask is None else pad_mask
    torch.testing.assert_close(fast_out[real], ref_out[real], rtol=1e-9, atol=1e-10)
    assert fast_grads.keys() == ref_grads.keys()
    for name in fast_grads:
        torch.testing.assert_close(fast_grads[name], ref_grads[name], rtol=1e-8, atol=1e-10)
    assert torch.isfinite(fast_out).all()


def test_sinusoidal_table_matches_formula():
    torch.testing.assert_close(sinusoidal_table(7, 6), naive.sinusoidal_table(7, 6))
    assert sinusoidal_table(5, 4)[0, 3, 0] == pytest.approx(math.sin(3.0))


def test_rope_matches_rotation_matrices():
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64, generator=GEN)
    cos, sin = rope_tables(5, 8, "cpu", torch.float64)
    torch.testing.assert_close(rope_apply(x, cos, sin), naive.rope_rotate_half_split(x, 10000.0))


def test_rope_logits_depend_only_on_relative_position():
    q, k = torch.randn(2, 1, 1, 8, dtype=torch.float64, generator=GEN)
    cos, sin = rope_tables(12, 8, "cpu", torch.float64)
    qs, ks = (
        rope_apply(q.expand(1, 1, 12, 8), cos, sin),
        rope_apply(k.expand(1, 1, 12, 8), cos, sin),
    )
    logits = qs[0, 0] @ ks[0, 0].T  # [T, T]
    torch.testing.assert_close(logits[5, 2], logits[9, 6])
    torch.testing.assert_close(logits[3, 3], logits[10, 10])


def test_alibi_and_nape_slopes_and_bias():
    config = ModelConfig(pe="alibi", heads=4, width=16)
    alibi, nape = ALiBi(config, 8), NaPE(config, 8)
    torch.testing.assert_close(alibi.slopes(), torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]))
    torch.testing.assert_close(nape.slopes(), torch.tensor([2.0**-2, 2.0**-4, 0.0, 0.0]))
    for pe in (alibi, nape):
        fast = pe.logit_bias(5, "cpu", torch.float64)
        torch.testing.assert_close(fast, naive.alibi_bias(pe.slopes().double(), 5))
    assert NaPE(ModelConfig(pe="nape", heads=1, width=4), 8).slopes().tolist() == [2.0**-8]


def test_canon_conv_matches_loop():
    conv = CanonConv(3).double()
    torch.nn.init.normal_(conv.weight, generator=GEN)
    x = torch.randn(2, 7, 3, dtype=torch.float64, generator=GEN)
    ctx = AttentionContext(causal=True, length=7)
    torch.testing.assert_close(conv(x, ctx), x + naive.canon_conv(x, conv.weight))


@pytest.mark.parametrize("alpha", [1.5, 1.25, 2.0])
def test_entmax_matches_bisection(alpha):
    gen = torch.Generator().manual_seed(0)
    z = torch.randn(4, 9, generator=gen, dtype=torch.float64) * 3
    z[0, 4:] = float("-inf")  # masked keys
    z[1] = 0.7  # ties
    z.requires_grad_()
    fast = entmax(z, alpha)
    ref = naive.entmax_bisect(z, alpha)
    torch.testing.assert_close(fast, ref, rtol=1e-9, atol=1e-12)
    assert (fast == 0).any() and torch.allclose(fast.sum(-1), torch.ones(4, dtype=torch.float64))
    g = torch.randn(4, 9, generator=gen, dtype=torch.float64)
    (grad_fast,) = torch.autograd.grad(fast, z, g)
    (grad_ref,) = torch.autograd.grad(ref, z, g)
    torch.testing.assert_close(grad_fast, grad_ref, rtol=1e-8, atol=1e-10)


def test_entmax15_gradcheck():
    z = torch.randn(3, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    assert torch.autograd.gradcheck(entmax15, (z.requires_grad_(),))


def test_entmax15_known_values():
    # z/2 = (1, 0.5, -1.5): support {0, 1}, tau = 0.75 - sqrt(7)/4, p_i = (z_i/2 - tau)^2
    tau = 0.75 - math.sqrt(7) / 4
    expected = torch.tensor([[(1 - tau) ** 2, (0.5 - tau) ** 2, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(
        entmax15(torch.tensor([[2.0, 1.0, -3.0]], dtype=torch.float64)), expected
    )


def test_onednn_linear_matches_f_linear():
    if not onednn_available():
        pytest.skip("this PyTorch has no usable oneDNN linear op (F.linear is used)")
    layer = Linear(24, 40)
    torch.nn.init.normal_(layer.weight, generator=GEN)
    torch.nn.init.normal_(layer.bias, generator=GEN)
    x = torch.randn(3, 7, 24, requires_grad=True, generator=GEN)
    grad = torch.randn(3, 7, 40, generator=GEN)
    out = layer(x)
    grads = torch.autograd.grad(out, (x, layer.weight, layer.bias), grad)
    ref = torch.nn.functional.linear(x, layer.weight, layer.bias)
    ref_grads = torch.autograd.grad(ref, (x, layer.weight, layer.bias), grad)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-4)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)
    x_t = torch.randn(7, 3, 24, generator=GEN).transpose(0, 1)  # a non-contiguous input
    torch.testing.assert_close(
        layer(x_t), torch.nn.functional.linear(x_t, layer.weight, layer.bias), rtol=1e-5, atol=1e-4
    )
