"""Trained Transformers as TransformerLens 4 TransformerBridges: same logits, same activations.

The bridge is a second computation of the model (TransformerLens's own native transformer on
the converted weights); its logits and its ``run_with_cache`` activations must equal the
model's own, read through the model's hook points. Skipped without the ``interp`` extra.
"""

from __future__ import annotations

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.models import ModelConfig, Transformer, build_model
from rasplab.models.lens import to_transformer_lens

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")


def _model(**overrides):
    cfg = ModelConfig(**{"width": 16, "heads": 2, "layers": 2, **overrides})
    model = build_model(cfg, vocab_size=7, num_outputs=5, max_positions=24, seed=5)
    gen = torch.Generator().manual_seed(6)
    with torch.no_grad():  # jitter every weight: nothing degenerate (uniform attention, unit LN)
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.eval()


def _ids(t: int = 11) -> torch.Tensor:
    return torch.randint(0, 7, (3, t), generator=torch.Generator().manual_seed(2))


def _resid_post(model, ids) -> list[torch.Tensor]:
    seen = []
    handles = [
        b.hook_resid_post.register_forward_hook(lambda m, a, out: seen.append(out))
        for b in model.blocks
    ]
    try:
        with torch.no_grad():
            model(ids)
    finally:
        for h in handles:
            h.remove()
    return seen


CASES = [
    {"pe": "ape"},
    {"pe": "nope"},
    {"pe": "sinusoidal"},
    {"pe": "rope"},
    {"pe": "rope", "causal": False},
    {"pe": "ape", "attn_scale": "mup"},
    {"pe": "rope", "universal": True, "layers": 3},
]


@pytest.mark.parametrize("variant", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_the_bridge_computes_the_model(variant):
    model = _model(**variant)
    ids = _ids()
    with torch.no_grad():
        want = model(ids)
    bridge = to_transformer_lens(model)
    assert type(bridge).__name__ == "TransformerBridge"
    logits, cache = bridge.run_with_cache(ids)
    assert torch.allclose(logits, want, atol=1e-5), (logits - want).abs().max()
    for layer, resid in enumerate(_resid_post(model, ids)):
        got = cache[f"blocks.{layer}.hook_resid_post"]
        assert torch.allclose(got, resid, atol=1e-5), layer
    assert cache["blocks.0.attn.hook_pattern"].shape == (3, 2, 11, 11)


def test_a_saved_run_folder_opens_as_a_bridge(tmp_path):
    model = _model(pe="ape")
    model.save_pretrained(tmp_path / "m")
    again = Transformer.from_pretrained(tmp_path / "m")
    ids = _ids()
    with torch.no_grad():
        assert torch.allclose(to_transformer_lens(again)(ids), model(ids), atol=1e-5)


@pytest.mark.parametrize(
    "variant, named",
    [
        ({"attention": "stick_breaking"}, "'stick_breaking'"),
        ({"attention": "path"}, "'path'"),
        ({"attention": "fox"}, "'fox'"),
        ({"attention": "entmax"}, "'entmax'"),
        ({"pe": "alibi"}, "'alibi'"),
        ({"pe": "random_ape"}, "'random_ape'"),
        ({"canon": True}, "Canon"),
        ({"mlp": "swiglu"}, "'swiglu'"),
    ],
)
def test_variants_without_a_counterpart_are_refused_by_name(variant, named):
    with pytest.raises(RasplabError, match="no TransformerLens counterpart") as err:
        to_transformer_lens(_model(**variant))
    assert named in str(err.value) and "\n" not in str(err.value)


def test_too_many_positions_for_the_learned_table():
    with pytest.raises(RasplabError, match="exceeds the model's 24 learned positions"):
        to_transformer_lens(_model(pe="ape"), n_ctx=30)
