"""TransformerLens-style hook points on the trainable transformer, for every variant.

The hook points must see the tensors the model computes (checked against a second
computation: the blocks run by hand), change nothing when unused, and the attention weights
formed for ``hook_pattern`` must reproduce the layer's output (pattern @ v vs the kind's
fast path) for every attention kind and positional encoding.
"""

from __future__ import annotations

import pytest
import torch

from rasplab.models import ATTENTION_KINDS, ModelConfig, build_model
from rasplab.models.hook_points import hook_point_names, hooked_root, record_patterns
from rasplab.models.registry import POSITIONAL_ENCODINGS

NAMES = ("hook_resid_pre", "hook_resid_mid", "hook_resid_post", "attn.hook_pattern",
         "attn.hook_z", "mlp.hook_post")  # fmt: skip


def _model(**overrides):
    cfg = ModelConfig(**{"width": 16, "heads": 2, "layers": 2, **overrides})
    return build_model(cfg, vocab_size=7, num_outputs=5, max_positions=32, seed=3).eval()


def _ids(t: int = 9) -> torch.Tensor:
    return torch.randint(0, 7, (2, t), generator=torch.Generator().manual_seed(1))


def _capture(model, ids):
    """Every hook point's tensor, caught with plain torch forward hooks."""
    seen, handles = {}, []
    for name, module in model.named_modules():
        if name in hook_point_names(model):
            handles.append(
                module.register_forward_hook(lambda m, a, out, n=name: seen.__setitem__(n, out))
            )
    try:
        with torch.no_grad():
            logits = model(ids)
    finally:
        for h in handles:
            h.remove()
    return logits, seen


def test_every_block_has_the_transformer_lens_names():
    model = _model(layers=3)
    want = {f"blocks.{layer}.{n}" for layer in range(3) for n in NAMES}
    assert set(hook_point_names(model)) == want


@pytest.mark.parametrize("attention", sorted(ATTENTION_KINDS))
@pytest.mark.parametrize("pe", ["ape", "rope", "alibi", "nope"])
def test_hooked_pattern_reproduces_the_layer_for_every_kind(attention, pe):
    model = _model(attention=attention, pe=pe)
    ids = _ids()
    with torch.no_grad():
        plain = model(ids)
    logits, seen = _capture(model, ids)  # hooks on every point: patterns are formed
    assert torch.allclose(logits, plain, atol=1e-5), (attention, pe)
    pattern = seen["blocks.0.attn.hook_pattern"]
    assert pattern.shape == (2, 2, 9, 9)
    assert torch.all(pattern.triu(1).abs() < 1e-6)  # causal: no weight on later keys
    if attention not in ("stick_breaking",):  # stick-breaking weights sum to at most 1
        assert torch.allclose(pattern.sum(-1), torch.ones(2, 2, 9), atol=1e-5)


@pytest.mark.parametrize("pe", sorted(POSITIONAL_ENCODINGS))
def test_residual_hooks_match_the_blocks_run_by_hand(pe):
    model = _model(pe=pe)
    ids = _ids()
    logits, seen = _capture(model, ids)
    pre0 = seen["blocks.0.hook_resid_pre"]
    assert torch.equal(seen["blocks.1.hook_resid_pre"], seen["blocks.0.hook_resid_post"])
    block = model.blocks[0]
    mid = pre0 + block.attn.out(seen["blocks.0.attn.hook_z"].reshape(2, 9, 16))
    assert torch.allclose(mid, seen["blocks.0.hook_resid_mid"], atol=1e-6)
    post = mid + block.mlp.down(seen["blocks.0.mlp.hook_post"])
    assert torch.allclose(post, seen["blocks.0.hook_resid_post"], atol=1e-6)
    out = model.head(model.ln_f(seen["blocks.1.hook_resid_post"]))
    assert torch.allclose(out, logits, atol=1e-6)


def test_editing_the_pattern_changes_the_output():
    model = _model()
    ids = _ids()
    with torch.no_grad():
        plain = model(ids)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(8.0)  # GPT-2 init is near-uniform attention: make the edit visible
        plain = model(ids)
    uniform = torch.tril(torch.ones(9, 9)) / torch.arange(1, 10)[:, None]
    handle = model.blocks[1].attn.hook_pattern.register_forward_hook(
        lambda m, a, out: uniform.expand_as(out)
    )
    try:
        with torch.no_grad():
            edited = model(ids)
    finally:
        handle.remove()
    assert (edited - plain).abs().max() > 1e-2
    # the same model run by hand with uniform attention in block 1
    _, seen = _capture(model, ids)
    v = model.blocks[1].attn.qkv(model.blocks[1].ln1(seen["blocks.1.hook_resid_pre"]))
    v = v.view(2, 9, 3, 2, 8)[:, :, 2].transpose(1, 2)  # [B, H, T, Dh]
    z = (uniform @ v).transpose(1, 2).reshape(2, 9, 16)
    mid = seen["blocks.1.hook_resid_pre"] + model.blocks[1].attn.out(z)
    post = mid + model.blocks[1].mlp(model.blocks[1].ln2(mid))
    with torch.no_grad():
        assert torch.allclose(model.head(model.ln_f(post)), edited, atol=1e-5)


def test_record_patterns_forms_them_without_hooks():
    model = record_patterns(_model())
    assert all(b.attn.record_pattern for b in model.blocks)
    assert not any(b.attn.record_pattern for b in record_patterns(model, False).blocks)


def test_universal_models_call_block_zero_once_per_layer():
    model = _model(universal=True, layers=3)
    calls = []
    model.blocks[0].hook_resid_post.register_forward_hook(lambda m, a, out: calls.append(1))
    with torch.no_grad():
        model(_ids())
    assert len(calls) == 3 and {n.split(".")[1] for n in hook_point_names(model)} == {"0"}


def test_hooked_root_run_with_cache_by_name():
    pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")
    model = _model(attention="stick_breaking", pe="rope")
    ids = _ids()
    with torch.no_grad():
        plain = model(ids)
    _, seen = _capture(model, ids)
    root = hooked_root(model)
    assert type(root).__mro__[1].__name__ == "HookedRootModule"
    logits, cache = root.run_with_cache(ids)
    assert torch.allclose(logits, plain, atol=1e-6)
    for layer in range(2):
        for n in NAMES:
            name = f"blocks.{layer}.{n}"
            assert torch.allclose(cache[name], seen[name], atol=1e-6), name
    with torch.no_grad():
        assert torch.allclose(model(ids), plain, atol=1e-6)  # the model itself still works
