"""nnsight on a trained Transformer: read activations by the hook-point names, intervene.

Each read is checked against a second computation (TransformerLens's native model on the
converted weights, or the blocks run by hand for a variant TransformerLens lacks); the
intervention (zeroing one head's output through ``attn.hook_z``) against the same model with
that head's columns of the output projection zeroed. Skipped without the ``interp`` extra.
"""

from __future__ import annotations

import copy

import pytest
import torch

from rasplab.models import ModelConfig, build_model
from rasplab.models.hook_points import record_patterns

nnsight = pytest.importorskip("nnsight", reason="needs the interp extra (nnsight)")


def _model(**overrides):
    cfg = ModelConfig(**{"width": 16, "heads": 2, "layers": 2, **overrides})
    model = build_model(cfg, vocab_size=7, num_outputs=5, max_positions=24, seed=8)
    gen = torch.Generator().manual_seed(9)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.eval()


IDS = torch.randint(0, 7, (2, 10), generator=torch.Generator().manual_seed(4))


def test_read_the_residual_stream_and_pattern_against_transformer_lens():
    pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")
    from rasplab.models.lens import to_transformer_lens

    model = record_patterns(_model(pe="rope"))  # nnsight wraps modules: ask for the pattern
    wrapped = nnsight.NNsight(model)
    with wrapped.trace(IDS):
        resid = wrapped.blocks[0].hook_resid_post.output.save()
        pattern = wrapped.blocks[1].attn.hook_pattern.output.save()
    _, cache = to_transformer_lens(model).run_with_cache(IDS)
    assert torch.allclose(resid, cache["blocks.0.hook_resid_post"], atol=1e-5)
    assert torch.allclose(pattern, cache["blocks.1.attn.hook_pattern"], atol=1e-5)


def test_read_a_variant_transformer_lens_lacks_against_the_blocks_by_hand():
    from rasplab.models.masking import AttentionContext

    model = _model(attention="stick_breaking", pe="alibi")
    wrapped = nnsight.NNsight(model)
    with wrapped.trace(IDS):
        resid = wrapped.blocks[0].hook_resid_post.output.save()
    with torch.no_grad():
        x = model.embed(IDS)
        ctx = AttentionContext(causal=True, length=IDS.shape[1], pe=model.pe)
        want = model.blocks[0](x, ctx)
    assert torch.allclose(resid, want, atol=1e-6)


def test_zeroing_a_head_matches_zeroing_its_output_columns():
    model = _model(pe="ape")
    wrapped = nnsight.NNsight(model)
    with wrapped.trace(IDS):
        z = wrapped.blocks[1].attn.hook_z.output  # [B, T, H, Dh]
        z[:, :, 0] = 0.0
        logits = wrapped.output.save()
    ablated = copy.deepcopy(model)
    with torch.no_grad():
        ablated.blocks[1].attn.out.weight[:, :8] = 0.0  # head 0 is input columns 0..Dh-1
        want = ablated(IDS)
        plain = model(IDS)
    assert torch.allclose(logits, want, atol=1e-6)
    assert not torch.allclose(logits, plain, atol=1e-3)
