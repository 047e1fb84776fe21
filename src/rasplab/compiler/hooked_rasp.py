"""Compiled RASP programs as TransformerLens 4 ``TransformerBridge`` s (the ``interp`` extra).

A compiled RASP model (:mod:`rasplab.rasp_compiler.compile`, Tracr's shape) is already a standard
transformer: per layer one multi-head attention and one ReLU MLP, each added to the residual
stream, no layer norm, no biases. :func:`rasp_to_transformer_lens` maps it one layer to one
TransformerLens native layer (``TransformerBridge.boot_native`` and the weights by their
native paths, as TransformerLens's tracr demo does), so compiled layer ``l``'s state after
attention is ``blocks.{l}.hook_resid_mid`` and after its MLP ``blocks.{l}.hook_resid_post``
(decode either with :meth:`~rasplab.rasp_compiler.compile.CompiledRasp.decode`). Three details:

* RASP scores are plain ``q . k``; TransformerLens divides by ``sqrt(d_head)``. ``d_head``
  is padded to ``s**2`` with ``s`` a power of two and the query weights multiplied by ``s``,
  which is exact in binary floating point;
* heads and MLP widths differ between layers: every layer is padded with zero heads and
  zero units to the widest;
* the unembedding reads the output SOp's dims: for a categorical output the logits'
  argmax at a position is the index of its value (where it has one: an all-zero slot
  decodes to None, as ``decode`` says), for a numerical output the one logit is the value.

Inputs are the compiled model's ids, BOS first: ``compiled.encode(["BOS", ...])``.

>>> from rasplab.rasp import lib, rasp
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> compiled = compile_rasp_to_model(lib.make_sort_unique(rasp.tokens, rasp.tokens), {1, 2, 3}, 3)
>>> bridge = rasp_to_transformer_lens(compiled)
>>> ids = torch.tensor([compiled.encode(["BOS", 3, 1, 2])])
>>> [compiled.value(compiled.program, int(i)) for i in bridge(ids).argmax(-1)[0, 1:]]
[1, 2, 3]
"""

from __future__ import annotations

import torch

from rasplab.lens_bridge import boot_bridge


def _power_of_two_root(width: int) -> int:
    """The smallest power of two ``s`` with ``s * s >= width``."""
    s = 1
    while s * s < width:
        s *= 2
    return s


def rasp_to_transformer_lens(compiled, dtype: torch.dtype | None = None):
    """A ``TransformerBridge`` computing the compiled RASP model (module docstring)."""
    module = compiled.module
    dtype = module.token_embed.dtype if dtype is None else dtype
    d = module.token_embed.shape[1]
    layers = list(module.layers)
    heads = max([layer.W_Q.shape[0] for layer in layers] + [1])
    scale = _power_of_two_root(max([layer.W_Q.shape[2] for layer in layers] + [1]))
    d_head = scale * scale
    d_mlp = max([layer.W_in.shape[1] for layer in layers] + [1])
    out = compiled.slot(compiled.program)
    head = torch.zeros(out.width, d, dtype=torch.float64)
    head[torch.arange(out.width), out.start + torch.arange(out.width)] = 1.0
    tensors = {
        "tok_embed.weight": module.token_embed.detach(),
        "pos.weight": module.pos_embed.detach(),
        "head.weight": head,
    }
    for n, layer in enumerate(layers):
        tensors.update(
            {f"layers.{n}.{k}": v for k, v in _layer(layer, heads, d_head, d_mlp, scale, d).items()}
        )
    config = {
        "n_layers": len(layers),
        "d_model": d,
        "d_head": d_head,
        "n_heads": heads,
        "d_mlp": d_mlp,
        "d_vocab": module.token_embed.shape[0],
        "d_vocab_out": out.width,
        "n_ctx": module.pos_embed.shape[0],
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": "causal" if module.causal else "bidirectional",
        "positional_embedding_type": "standard",
        "tokenizer_prepends_bos": False,
        "original_architecture": "rasplab-rasp",
        "model_name": f"rasplab-rasp-{compiled.program.label}",
    }
    return boot_bridge(config, tensors, dtype)


def _layer(layer, heads: int, d_head: int, d_mlp: int, scale: int, d: int) -> dict:
    """One RASP layer's weights as native parameters (zero-padded heads, units, biases)."""
    f64 = torch.float64
    width = heads * d_head
    q, k, v = (torch.zeros(width, d, dtype=f64) for _ in range(3))
    o = torch.zeros(d, width, dtype=f64)
    for h in range(layer.W_Q.shape[0]):
        rows = slice(h * d_head, h * d_head + layer.W_Q.shape[2])
        q[rows] = layer.W_Q[h].detach().to(f64).T * scale  # TransformerLens divides by scale
        k[rows] = layer.W_K[h].detach().to(f64).T
        v[rows] = layer.W_V[h].detach().to(f64).T
        o[:, rows] = layer.W_O[h].detach().to(f64).T
    fc_in = torch.zeros(d_mlp, d, dtype=f64)
    fc_out = torch.zeros(d, d_mlp, dtype=f64)
    units = layer.W_in.shape[1]
    fc_in[:units] = layer.W_in.detach().to(f64).T
    fc_out[:, :units] = layer.W_out.detach().to(f64).T
    zeros = {name: torch.zeros(n, dtype=f64) for name, n in (("qkv", width), ("d", d))}
    return {
        "attn.q.weight": q,
        "attn.k.weight": k,
        "attn.v.weight": v,
        "attn.o.weight": o,
        "attn.q.bias": zeros["qkv"],
        "attn.k.bias": zeros["qkv"],
        "attn.v.bias": zeros["qkv"],
        "attn.o.bias": zeros["d"],
        "mlp.fc_in.weight": fc_in,
        "mlp.fc_in.bias": torch.zeros(d_mlp, dtype=f64),
        "mlp.fc_out.weight": fc_out,
        "mlp.fc_out.bias": zeros["d"],
    }
