"""Compiled models as TransformerLens 4 ``TransformerBridge`` s (the ``interp`` extra).

``to_transformer_lens(compiled, layers=K)`` unrolls the weight-shared compiled layer into
``K`` layers of three native TransformerLens blocks each (:mod:`rasplab.compiler.hooked_weights`
says how one compiled layer becomes three blocks): no layer norm, the attention scale
folded into the query weights, MLP widths padded with zeros, the unembedding built from the
output variable's dims. It is built the way TransformerLens's tracr demo builds one:
``TransformerBridge.boot_native`` and the weights by their native parameter paths
(:mod:`rasplab.lens_bridge`); the ``3K`` blocks share their parameter tensors.

Inputs are the program's token ids with a BOS token (id ``input_range``) in front:
:func:`hooked_tokens`. Compiled layer ``l`` (from 1) is blocks ``3(l-1)`` .. ``3l-1``; its
state after attention is ``blocks.{3(l-1)}.hook_resid_mid`` and after the MLP
``blocks.{3l-1}.hook_resid_post``, both decodable with the compiled layout
(:func:`hooked_states`). The logits' argmax at every position after BOS is the output; the
logits at BOS mean nothing.

Halting cannot live in a TransformerLens model: the export always runs ``K`` layers. A
halting program's halted state is a fixed point of its layer (the halt condition holds and
no rule changes the output afterwards), so the output equals the halted output once ``K``
reaches the halting layer; a program without halting runs exactly ``max_layers`` layers and
``K`` must equal that. :func:`layers_needed` runs the compiled model to find the halting
layer of given inputs.

>>> from rasplab.programs import get_program
>>> from rasplab.compiler import compile_program
>>> entry = get_program("parity_sequential_relative")
>>> compiled = compile_program(entry.program())
>>> ids = entry.encode("1 1 0 1")
>>> tl = to_transformer_lens(compiled, layers=layers_needed(compiled, [ids]))
>>> tl(hooked_tokens(compiled, ids)).argmax(-1)[0, 1:].tolist()
[0, 1, 0, 0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from rasplab.compiler.hooked_weights import BLOCKS_PER_LAYER, hooked_weights, native_tensors
from rasplab.compiler.layout import decode_columns
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.run import run_compiled
from rasplab.errors import RasplabError
from rasplab.lens_bridge import boot_bridge, load_bridge, save_bridge


def layers_needed(model: CompiledTransformer, batch: Sequence[Sequence[int]]) -> int:
    """Layers the compiled model runs on these inputs (the largest halting layer)."""
    return max(run_compiled(model, batch).layers, default=1)


def check_layers(model: CompiledTransformer, layers: int) -> None:
    """Refuse a layer count the export cannot honour (see the module docstring)."""
    if not isinstance(layers, int) or layers < 1:
        raise RasplabError(f"layers must be a positive int, got {layers!r}")
    need = model.spec["max_layers"]
    if model.spec["halt"] is None and layers != need:
        raise RasplabError(
            f"program {model.spec['name']!r} has no halting condition and runs exactly "
            f"{need} layers; export it with layers={need}, not {layers}"
        )


def to_transformer_lens(
    model: CompiledTransformer,
    layers: int,
    n_ctx: int | None = None,
    dtype: torch.dtype | None = None,
):
    """A ``TransformerBridge`` computing ``layers`` layers of ``model`` (module docstring);
    ``n_ctx`` positions after BOS (default: the compiled maximum length, else 128)."""
    check_layers(model, layers)
    dtype = model.default_dtype() if dtype is None else dtype
    model.check_dtype(dtype)
    w = hooked_weights(model, n_ctx)
    embed, blocks = native_tensors(w)
    tensors = dict(embed)
    for block in range(BLOCKS_PER_LAYER * layers):
        for name, value in blocks["abc"[block % BLOCKS_PER_LAYER]].items():
            tensors[f"layers.{block}.{name}"] = value  # the same tensor object: shared
    return boot_bridge(_config(w.config, layers), tensors, dtype)


def _config(config: dict, layers: int) -> dict:
    """``TransformerBridgeConfig`` fields of an export with ``layers`` compiled layers."""
    return {
        **config,
        "n_layers": BLOCKS_PER_LAYER * layers,
        "tokenizer_prepends_bos": False,
        "init_weights": False,
    }


def hooked_tokens(model: CompiledTransformer, ids: Sequence[int]) -> torch.Tensor:
    """``[1, T+1]`` token ids for the export: BOS (id ``input_range``) then ``ids``."""
    vocab = model.spec["input_range"]
    for pos, tok in enumerate(ids):
        if not 0 <= int(tok) < vocab:
            raise RasplabError(f"token id {tok} at position {pos} is outside [0, {vocab})")
    return torch.tensor([[vocab, *map(int, ids)]], dtype=torch.long)


def hooked_states(model: CompiledTransformer, cache, layers: int) -> list[dict[str, dict]]:
    """Per compiled layer, the decoded variables ``{"after_attention", "after_mlp"}`` (each
    ``{variable: values per position}``, BOS dropped) read from a ``run_with_cache`` cache."""
    d = model.layout.width
    states = []
    for layer in range(layers):
        mid = cache[f"blocks.{BLOCKS_PER_LAYER * layer}.hook_resid_mid"][0, 1:, :d]
        post = cache[f"blocks.{BLOCKS_PER_LAYER * layer + 2}.hook_resid_post"][0, 1:, :d]
        states.append(
            {
                "after_attention": decode_columns(model.layout, mid),
                "after_mlp": decode_columns(model.layout, post),
            }
        )
    return states


def save_hooked(bridge, directory: str | Path) -> Path:
    """Write the export made by :func:`to_transformer_lens` as ``config.json`` and
    ``model.safetensors`` (:func:`rasplab.lens_bridge.save_bridge`; nothing partial)."""
    return save_bridge(bridge, directory)


def load_hooked(directory: str | Path):
    """The ``TransformerBridge`` saved by :func:`save_hooked` (no unpickling)."""
    return load_bridge(directory)
