"""The weights of a compiled model rearranged for a standard transformer (TransformerLens).

A compiled layer is one attention sub-layer and one MLP with three clipped-ReLU hidden layers
(``clamp(z, 0, 1)``) and a linear read-out. A TransformerLens block has one attention
sub-layer and an MLP with *one* ReLU hidden layer, and no sinks, relative masks or halting.
This module builds, from the compiled weights alone, three blocks that compute one compiled
layer exactly:

* block ``a``: the compiled attention; MLP computes ``h1 = clamp(W1 x + b1)`` and writes it
  into scratch dims ``S1`` of the residual stream;
* block ``b``: zero attention; MLP computes ``h2 = clamp(W2 h1 + b2)`` into scratch ``S2``
  and erases ``S1``;
* block ``c``: zero attention; MLP computes ``h3 = clamp(W3 h2 + b3)`` and adds ``W4 h3``
  to the variables, and erases ``S2``.

``clamp(z, 0, 1) = relu(z) - relu(z - 1)``: every clipped unit is two ReLU units. Erasing
a scratch value ``s`` in ``[0, 1]`` adds ``-relu(s) = -s``. So after block ``c`` the
residual equals the compiled model's after the layer, with the scratch dims back at zero,
and ``hook_resid_mid`` of block ``a`` is the state after attention.

The residual stream is ``[compiled layout (D) | bos | S1 | S2 | positions (P)]``. Token id
``input_range`` is a BOS token whose residual is ``e_bos`` and stays so: it stands in for
the compiled *sink* (each head's query gets the score ``sink[h]`` against BOS through the
``one`` dim, and BOS's value is zero), it attends to itself only, and it switches every MLP
unit off. Relative masks need the position: ``P`` one-hot position dims (only when some head
has a relative mask), and ``P`` more query/key coordinates per head carrying the mask's
``-2 * MATCH`` entries. The attention scale is folded into ``W_Q``: ``d_head`` is padded to
a perfect square ``s**2``, so multiplying by ``s`` and TransformerLens's division by
``sqrt(d_head) = s`` are exact. MLP widths are padded with zeros to the widest block. The
unembedding reads the output variable's one-hot dims, found by name in the layout.

:func:`hooked_weights` gives the tensors in TransformerLens's per-head notation (``W_Q``
``[H, D, d_head]``, ``W_in`` ``[D, d_mlp]``: the notation of the construction above);
:func:`native_tensors` lays them out as the ``nn.Linear`` / ``nn.Embedding`` parameters of
TransformerLens 4's native model (``TransformerBridge.boot_native``), keyed by their native
paths without the ``layers.N.`` prefix, biases zero.

>>> from rasplab.programs import get_program
>>> from rasplab.compiler import compile_program
>>> w = hooked_weights(compile_program(get_program("parity_sequential_relative").program()), 8)
>>> w.config["d_model"], w.config["d_head"], w.config["n_ctx"], sorted(w.blocks)
(45, 16, 9, ['a', 'b', 'c'])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from rasplab.compiler.model import CompiledTransformer
from rasplab.errors import RasplabError

DEFAULT_CONTEXT = 128
"""Positions of an export when the compiled model has no maximum length."""
BLOCKS_PER_LAYER = 3
"""TransformerLens blocks per compiled layer (attention + MLP stage 1, stage 2, stage 3)."""


@dataclass
class HookedWeights:
    """A config dict (TransformerLens config fields), the embedding and unembedding tensors,
    and the state dicts (TransformerLens names, without the ``blocks.N.`` prefix) of the
    three distinct blocks ``a``, ``b``, ``c`` that every compiled layer repeats."""

    config: dict
    embed: dict[str, torch.Tensor]
    blocks: dict[str, dict[str, torch.Tensor]]
    bos: int
    dims: dict[str, int]


def context_length(model: CompiledTransformer, n_ctx: int | None) -> int:
    """Sequence positions the export accepts (BOS not counted)."""
    limit = model.max_length
    if n_ctx is None:
        return limit if limit is not None else DEFAULT_CONTEXT
    if not isinstance(n_ctx, int) or n_ctx < 1:
        raise RasplabError(f"n_ctx must be a positive int, got {n_ctx!r}")
    if limit is not None and n_ctx > limit:
        raise RasplabError(
            f"n_ctx {n_ctx} exceeds the compiled model's maximum length {limit}; "
            f"recompile with max_length >= {n_ctx}"
        )
    return n_ctx


def _dense_mlp(model: CompiledTransformer, k: int) -> torch.Tensor:
    """The compiled MLP matrix ``k`` (1..4) as a dense ``[out, in]`` float64 tensor."""
    shape = tuple(model.spec["mlp_shapes"][k - 1])
    idx, vals = getattr(model, f"mlp{k}_indices"), getattr(model, f"mlp{k}_values")
    out = torch.zeros(shape, dtype=torch.float64)
    out.index_put_((idx[0], idx[1]), vals.to(torch.float64), accumulate=True)
    return out


def _square(n: int) -> int:
    """The smallest perfect square >= n."""
    root = math.isqrt(max(n, 1))
    return root * root if root * root >= n else (root + 1) ** 2


def _relative_mask(offsets: list[int], p: int, causal: bool, match: float) -> torch.Tensor:
    """``[P, P]``: 0 where key ``j`` may be read from query ``i``, ``-2 * match`` elsewhere."""
    rel = torch.arange(p)[None, :] - torch.arange(p)[:, None]
    allowed = torch.isin(rel, torch.tensor(offsets, dtype=torch.long))
    if causal:
        allowed &= rel <= 0
    return torch.where(allowed, 0.0, -2.0 * match).to(torch.float64)


# long: every matrix is laid out on one residual layout (bos, s1, s2, positions) computed
# at the top; the steps share a dozen offsets that a split would have to pass around
def hooked_weights(model: CompiledTransformer, n_ctx: int | None = None) -> HookedWeights:
    """TransformerLens-shaped weights for ``model`` (see the module docstring)."""
    spec, lay = model.spec, model.layout
    p = context_length(model, n_ctx)
    w = [_dense_mlp(model, k) for k in range(1, 5)]  # [E1, D], [E2, E1], [E3, E2], [D, E3]
    b = [getattr(model, f"mlp_b{k}").to(torch.float64) for k in range(1, 4)]
    e1, e2, e3 = (m.shape[0] for m in w[:3])
    offsets = spec["head_offsets"]
    relative = any(o is not None for o in offsets)
    d = lay.width
    bos, s1, s2, pos = d, d + 1, d + 1 + e1, d + 1 + e1 + e2
    d_model = pos + (p if relative else 0)
    n_heads = max(len(offsets), 1)
    dk, dv = model.W_Q.shape[2], model.W_V.shape[2]
    d_head = _square(max(dk + 2 + (p if relative else 0), dv))
    scale = math.isqrt(d_head)
    match = float(spec["constants"]["match"])
    sink_col, self_col, pos_col = dk, dk + 1, dk + 2

    wq = torch.zeros(n_heads, d_model, d_head, dtype=torch.float64)
    wk, wv = torch.zeros_like(wq), torch.zeros_like(wq)
    wo = torch.zeros(n_heads, d_head, d_model, dtype=torch.float64)
    for h, offs in enumerate(offsets):
        wq[h, :d, :dk] = model.W_Q[h].to(torch.float64)
        wk[h, :d, :dk] = model.W_K[h].to(torch.float64)
        wv[h, :d, :dv] = model.W_V[h].to(torch.float64)
        wo[h, :dv, :d] = model.W_O[h].to(torch.float64)
        wq[h, 0, sink_col] = float(model.sink[h])  # every real position has one = 1 ...
        wk[h, bos, sink_col] = 1.0  # ... and scores BOS (the sink) at sink[h]
        wq[h, bos, self_col] = match  # BOS reads only itself (value 0): it stays e_bos
        wk[h, bos, self_col] = 1.0
        if offs is not None:
            wq[h, pos : pos + p, pos_col : pos_col + p] = torch.eye(p, dtype=torch.float64)
            mask = _relative_mask(offs, p, spec["causal"], match)
            wk[h, pos : pos + p, pos_col : pos_col + p] = mask.T
    wq *= scale

    d_mlp = max(2 * e1, 2 * e2 + e1, 2 * e3 + e2)

    def mlp(rows: slice, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor, erase=None):
        """One block's MLP: clipped units ``clamp(weight @ x[rows] + bias)`` written through
        ``out`` ``[units, d_model]``, plus ``-relu(x[erase])`` units; all off at BOS."""
        n = weight.shape[0]
        w_in = torch.zeros(d_model, d_mlp, dtype=torch.float64)
        b_in = torch.zeros(d_mlp, dtype=torch.float64)
        w_out = torch.zeros(d_mlp, d_model, dtype=torch.float64)
        w_in[rows, :n] = weight.T
        w_in[rows, n : 2 * n] = weight.T
        b_in[:n], b_in[n : 2 * n] = bias, bias - 1.0
        w_out[:n], w_out[n : 2 * n] = out, -out
        if erase is not None:
            width = erase.stop - erase.start
            w_in[erase, 2 * n : 2 * n + width] = torch.eye(width, dtype=torch.float64)
            w_out[2 * n : 2 * n + width, erase] = -torch.eye(width, dtype=torch.float64)
        w_in[bos] = -(b_in.clamp(min=0.0) + 1.0)
        return {"mlp.W_in": w_in, "mlp.b_in": b_in, "mlp.W_out": w_out}

    def scratch(start: int, n: int) -> torch.Tensor:
        out = torch.zeros(n, d_model, dtype=torch.float64)
        out[torch.arange(n), start + torch.arange(n)] = 1.0
        return out

    w4_out = torch.zeros(e3, d_model, dtype=torch.float64)
    w4_out[:, :d] = w[3].T
    zero_attn = {k: torch.zeros_like(v) for k, v in (("attn.W_Q", wq), ("attn.W_O", wo))}
    zero_attn["attn.W_K"] = zero_attn["attn.W_V"] = zero_attn["attn.W_Q"]
    attn = {"attn.W_Q": wq, "attn.W_K": wk, "attn.W_V": wv, "attn.W_O": wo}
    blocks = {
        "a": {**attn, **mlp(slice(0, d), w[0], b[0], scratch(s1, e1))},
        "b": {**zero_attn, **mlp(slice(s1, s1 + e1), w[1], b[1], scratch(s2, e2), slice(s1, s2))},
        "c": {**zero_attn, **mlp(slice(s2, s2 + e2), w[2], b[2], w4_out, slice(s2, pos))},
    }

    vocab = spec["input_range"]
    w_e = torch.zeros(vocab + 1, d_model, dtype=torch.float64)
    w_e[:vocab, :d] = model.tok_emb.to(torch.float64)
    w_e[vocab, bos] = 1.0
    w_pos = torch.zeros(p + 1, d_model, dtype=torch.float64)  # TL position 0 is BOS
    if hasattr(model, "pos_emb"):
        rows = min(p, model.pos_emb.shape[0])
        w_pos[1 : rows + 1, :d] = model.pos_emb[:rows].to(torch.float64)
    if relative:
        w_pos[1 + torch.arange(p), pos + torch.arange(p)] = 1.0
    out_slot = lay.slot(spec["output"])
    w_u = torch.zeros(d_model, out_slot.width, dtype=torch.float64)
    w_u[out_slot.start + torch.arange(out_slot.width), torch.arange(out_slot.width)] = 1.0

    config = {
        "d_model": d_model,
        "d_head": d_head,
        "n_heads": n_heads,
        "d_mlp": d_mlp,
        "d_vocab": vocab + 1,
        "d_vocab_out": out_slot.width,
        "n_ctx": p + 1,
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": "causal" if spec["causal"] else "bidirectional",
        "positional_embedding_type": "standard",
        "default_prepend_bos": False,
        "original_architecture": "rasplab-compiled",
        "model_name": f"rasplab-{spec['name']}",
    }
    embed = {"embed.W_E": w_e, "pos_embed.W_pos": w_pos, "unembed.W_U": w_u}
    dims = {"layout": d, "bos": bos, "s1": s1, "s2": s2, "positions": pos}
    return HookedWeights(config, embed, blocks, vocab, dims)


def native_tensors(w: HookedWeights) -> tuple[dict[str, torch.Tensor], dict[str, dict]]:
    """``(embed, blocks)``: the weights of ``w`` as TransformerLens 4 native parameters.

    ``embed`` holds ``tok_embed.weight``, ``pos.weight`` and ``head.weight``; ``blocks[k]``
    (``k`` in ``a``, ``b``, ``c``) the block's ``attn.{q,k,v,o}`` and ``mlp.{fc_in,fc_out}``
    weights and biases (``nn.Linear`` layout ``[out, in]``), all float64.

    >>> from rasplab.programs import get_program
    >>> from rasplab.compiler import compile_program
    >>> w = hooked_weights(compile_program(get_program("majority").program()))
    >>> embed, blocks = native_tensors(w)
    >>> tuple(blocks["a"]["attn.q.weight"].shape) == (w.config["n_heads"] * w.config["d_head"],
    ...                                                w.config["d_model"])
    True
    """
    cfg = w.config
    d_model, width = cfg["d_model"], cfg["n_heads"] * cfg["d_head"]
    blocks = {}
    for key, block in w.blocks.items():
        out = {}
        for name in ("q", "k", "v"):
            per_head = block[f"attn.W_{name.upper()}"]  # [H, D, d_head]
            out[f"attn.{name}.weight"] = per_head.permute(0, 2, 1).reshape(width, d_model)
            out[f"attn.{name}.bias"] = torch.zeros(width, dtype=torch.float64)
        out["attn.o.weight"] = block["attn.W_O"].reshape(width, d_model).T  # [D, H * d_head]
        out["attn.o.bias"] = torch.zeros(d_model, dtype=torch.float64)
        out["mlp.fc_in.weight"] = block["mlp.W_in"].T
        out["mlp.fc_in.bias"] = block["mlp.b_in"]
        out["mlp.fc_out.weight"] = block["mlp.W_out"].T
        out["mlp.fc_out.bias"] = torch.zeros(d_model, dtype=torch.float64)
        blocks[key] = {name: t.contiguous() for name, t in out.items()}
    embed = {
        "tok_embed.weight": w.embed["embed.W_E"],
        "pos.weight": w.embed["pos_embed.W_pos"],
        "head.weight": w.embed["unembed.W_U"].T.contiguous(),
    }
    return embed, blocks
