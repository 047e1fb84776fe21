"""A trained Transformer as a TransformerLens 4 ``TransformerBridge`` (the ``interp`` extra).

rasplab's model is a GPT-2-like pre-LN transformer, which is what TransformerLens 4's native
model is (``TransformerBridge.boot_native``: LayerNorm, split ``q``/``k``/``v``/``o``,
two-layer MLP, final LayerNorm, linear head). :func:`to_transformer_lens` builds one from a
model's weights by their native paths (:func:`rasplab.lens_bridge.boot_bridge`):

* ``embed`` -> ``tok_embed``; the fused ``attn.qkv`` split into ``q``, ``k``, ``v`` (rows
  ``[0, D)``, ``[D, 2D)``, ``[2D, 3D)``, heads in the same order); ``attn.out`` -> ``o``;
  ``mlp.up``/``mlp.down`` -> ``fc_in``/``fc_out`` with ``act_fn="gelu"`` (exact GELU, as
  here); ``ln1``, ``ln2``, ``ln_f`` -> ``ln1``, ``ln2``, ``ln_out``; ``head`` -> ``head``;
* positions: APE's table, the sinusoidal table (scaled as here) or zeros (NoPE) as the
  ``standard`` position embedding of ``n_ctx`` rows (default: the model's
  ``max_positions``); RoPE as ``rotary``: rasplab rotates the pairs ``(d, d + Dh/2)``,
  TransformerLens adjacent pairs ``(2d, 2d + 1)`` with the same frequencies, so each head's
  query and key rows are interleaved to match (scores are unchanged by permuting both);
* μP's ``1/Dh`` logit scale as ``attn_scale = Dh``; a universal model's one block repeated
  for every layer (one tensor per weight); encoders as ``attention_dir="bidirectional"``.

What TransformerLens has no counterpart for is refused with one line naming it: attention
kinds other than softmax (FoX, stick-breaking, entmax, ASEntmax, PaTH), ALiBi/NaPE and
random-position encodings, Canon layers, SWAN and the SwiGLU MLP. The bridge's logits equal
the model's (``tests/models/test_lens.py``), and its ``run_with_cache`` names the residual
stream, attention pattern and MLP activations as TransformerLens does.

Usage (a finished run's folder)::

    model = Transformer.from_pretrained("runs/demo/<run>")
    bridge = to_transformer_lens(model)
    logits, cache = bridge.run_with_cache(input_ids)  # cache["blocks.0.hook_resid_post"]
"""

from __future__ import annotations

import torch

from rasplab.errors import RasplabError
from rasplab.lens_bridge import boot_bridge
from rasplab.models.positional import INIT_STD, ROPE_BASE, sinusoidal_table

SUPPORTED_PE = ("ape", "nope", "sinusoidal", "rope")


def check_bridgeable(model) -> None:
    """Refuse, in one line, a model with a part TransformerLens's native model lacks."""
    cfg = model.config
    if cfg.attention != "softmax":
        raise RasplabError(
            f"attention kind {cfg.attention!r} has no TransformerLens counterpart "
            "(its native model has softmax attention only); inspect this model through its "
            "hook points instead (rasplab.models.hook_points.hooked_root)"
        )
    if cfg.pe not in SUPPORTED_PE:
        raise RasplabError(
            f"positional encoding {cfg.pe!r} has no TransformerLens counterpart (it has "
            f"{', '.join(SUPPORTED_PE)}); inspect this model through its hook points instead"
        )
    for flag, what in (("canon", "Canon layers"), ("swan", "SWAN's layer pattern")):
        if getattr(cfg, flag):
            raise RasplabError(f"{what} ({flag}=true) have no TransformerLens counterpart")
    if cfg.mlp != "gelu":
        raise RasplabError(
            f"MLP {cfg.mlp!r} has no TransformerLens counterpart (its gated MLP has no biases)"
        )


def _interleave(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """Rows ``[H * Dh, ...]`` of one head-major projection reordered from the half-split
    RoPE pairing (``d``, ``d + Dh/2``) to adjacent pairs (``2d``, ``2d + 1``)."""
    rows = weight.reshape(heads, 2, -1, *weight.shape[1:])  # [H, 2, Dh/2, ...]
    return rows.transpose(1, 2).reshape(weight.shape)  # [H, Dh/2, 2, ...] flattened


def _positions(model, n_ctx: int) -> torch.Tensor:
    """The ``standard`` position table ``[n_ctx, D]`` (absent for RoPE)."""
    cfg = model.config
    if cfg.pe == "ape":
        table = model.pe.table.weight.detach()
        if n_ctx > table.shape[0]:
            raise RasplabError(
                f"n_ctx {n_ctx} exceeds the model's {table.shape[0]} learned positions"
            )
        return table[:n_ctx]
    if cfg.pe == "sinusoidal":
        return (sinusoidal_table(n_ctx, cfg.width)[0] * (INIT_STD * 2.0**0.5)).float()
    return torch.zeros(n_ctx, cfg.width)


def _block_tensors(block, heads: int, rope: bool) -> dict[str, torch.Tensor]:
    """One block's weights by their native paths (without the ``layers.N.`` prefix)."""
    qkv_w, qkv_b = block.attn.qkv.weight.detach(), block.attn.qkv.bias.detach()
    width = qkv_w.shape[1]
    out = {}
    for i, name in enumerate("qkv"):
        w, b = qkv_w[i * width : (i + 1) * width], qkv_b[i * width : (i + 1) * width]
        if rope and name in "qk":
            w, b = _interleave(w, heads), _interleave(b, heads)
        out[f"attn.{name}.weight"], out[f"attn.{name}.bias"] = w, b
    for native, ours in (
        ("attn.o", block.attn.out),
        ("mlp.fc_in", block.mlp.up),
        ("mlp.fc_out", block.mlp.down),
        ("ln1", block.ln1),
        ("ln2", block.ln2),
    ):
        out[f"{native}.weight"], out[f"{native}.bias"] = ours.weight.detach(), ours.bias.detach()
    return out


def to_transformer_lens(model, n_ctx: int | None = None, dtype: torch.dtype | None = None):
    """A ``TransformerBridge`` computing ``model`` (module docstring) on up to ``n_ctx``
    positions (default: the model's ``max_positions``)."""
    check_bridgeable(model)
    cfg = model.config
    n_ctx = model.max_positions if n_ctx is None else n_ctx
    if not isinstance(n_ctx, int) or isinstance(n_ctx, bool) or n_ctx < 1:
        raise RasplabError(f"n_ctx must be a positive int, got {n_ctx!r}")
    dtype = model.head.weight.dtype if dtype is None else dtype
    rope = cfg.pe == "rope"
    tensors = {
        "tok_embed.weight": model.embed.weight.detach(),
        "ln_out.weight": model.ln_f.weight.detach(),
        "ln_out.bias": model.ln_f.bias.detach(),
        "head.weight": model.head.weight.detach(),
    }
    if not rope:
        tensors["pos.weight"] = _positions(model, n_ctx)
    blocks = [_block_tensors(b, cfg.heads, rope) for b in model.blocks]
    for layer in range(cfg.layers):
        block = blocks[0 if cfg.universal else layer]
        tensors.update({f"layers.{layer}.{name}": t for name, t in block.items()})
    config = {
        "n_layers": cfg.layers,
        "d_model": cfg.width,
        "d_head": cfg.head_dim,
        "n_heads": cfg.heads,
        "d_mlp": model.blocks[0].mlp.up.weight.shape[0],
        "d_vocab": model.vocab_size,
        "d_vocab_out": model.num_outputs,
        "n_ctx": n_ctx,
        "act_fn": "gelu",
        "normalization_type": "LN",
        "eps": model.ln_f.eps,
        "attention_dir": "causal" if cfg.causal else "bidirectional",
        "positional_embedding_type": "rotary" if rope else "standard",
        "tokenizer_prepends_bos": False,
        "original_architecture": "rasplab-transformer",
        "model_name": f"rasplab-{cfg.pe}-{cfg.attention}",
    }
    if rope:
        config.update({"rotary_dim": cfg.head_dim, "rotary_base": ROPE_BASE})
    if cfg.attn_scale == "mup":
        config["attn_scale"] = float(cfg.head_dim)
    return boot_bridge(config, tensors, dtype)
