"""Compiled models as TransformerLens ``HookedTransformer`` s (the ``interp`` extra).

``to_hooked_transformer(compiled, layers=K)`` unrolls the weight-shared compiled layer into
``K`` layers of three TransformerLens blocks each (:mod:`rasplab.compiler.hooked_weights`
says how one compiled layer becomes three blocks): no layer norm, the attention scale
folded into ``W_Q``, MLP widths padded with zeros, the unembedding built from the output
variable's dims. The ``3K`` blocks share their parameter tensors (one copy in memory).

Inputs are the program's token ids with a BOS token (id ``input_range``) in front:
:func:`hooked_tokens`. Compiled layer ``l`` (from 1) is blocks ``3(l-1)`` .. ``3l-1``; its
state after attention is ``blocks.{3(l-1)}.hook_resid_mid`` and after the MLP
``blocks.{3l-1}.hook_resid_post``, both decodable with the compiled layout
(:func:`hooked_states`). The logits' argmax at every position after BOS is the output.

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
>>> tl = to_hooked_transformer(compiled, layers=layers_needed(compiled, [ids]))
>>> tl(hooked_tokens(compiled, ids)).argmax(-1)[0, 1:].tolist()
[0, 1, 0, 0, 1]
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import torch

from rasplab.compiler.hooked_weights import BLOCKS_PER_LAYER, hooked_weights
from rasplab.compiler.layout import decode_columns
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.run import run_compiled
from rasplab.errors import RasplabError
from rasplab.files import current_umask, replace_dir, temp_dir

CONFIG, WEIGHTS = "config.json", "model.safetensors"


def _transformer_lens():
    """The TransformerLens module, or one clear error naming the extra to install."""
    try:
        import transformer_lens
    except ImportError as err:
        raise RasplabError(
            "TransformerLens is not installed; install the interp extra: "
            "pip install 'rasplab[interp]'"
        ) from err
    return transformer_lens


@contextmanager
def _quiet():
    """Silence TransformerLens 3.x's notice that HookedTransformer leaves in 4.0 (the
    ``interp`` extra pins ``<4``)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="HookedTransformer is deprecated")
        yield


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


def to_hooked_transformer(
    model: CompiledTransformer,
    layers: int,
    n_ctx: int | None = None,
    dtype: torch.dtype | None = None,
):
    """A ``HookedTransformer`` computing ``layers`` layers of ``model`` (module docstring);
    ``n_ctx`` positions after BOS (default: the compiled maximum length, else 128)."""
    tl = _transformer_lens()
    check_layers(model, layers)
    dtype = model.default_dtype() if dtype is None else dtype
    model.check_dtype(dtype)
    w = hooked_weights(model, n_ctx)
    cfg = tl.HookedTransformerConfig(
        n_layers=BLOCKS_PER_LAYER * layers, dtype=dtype, device="cpu", **w.config
    )
    with torch.device("meta"), _quiet():  # no memory for weights that are replaced below
        hooked = tl.HookedTransformer(cfg, move_to_device=False)
    return _load(hooked, w.embed, w.blocks, dtype)


def _load(hooked, embed: dict, blocks: dict, dtype: torch.dtype):
    """Give the meta-device ``hooked`` real tensors: the weights, zero biases, TransformerLens's
    buffers; unrolled blocks share one tensor per weight."""

    def param(t: torch.Tensor) -> torch.nn.Parameter:
        return torch.nn.Parameter(t.to(dtype), requires_grad=False)

    shared = {key: {n: param(t) for n, t in block.items()} for key, block in blocks.items()}
    for prefix, module in hooked.named_modules():
        for name, value in list(module.named_parameters(recurse=False)):
            full = f"{prefix}.{name}" if prefix else name
            parts = full.split(".")
            if full in embed:
                new = param(embed[full])
            elif parts[0] == "blocks" and ".".join(parts[2:]) in blocks["a"]:
                new = shared["abc"[int(parts[1]) % BLOCKS_PER_LAYER]][".".join(parts[2:])]
            else:
                new = param(torch.zeros(value.shape))
            setattr(module, name, new)
        for name, value in list(module.named_buffers(recurse=False)):
            fill = -torch.inf if name == "IGNORE" else 0
            module.register_buffer(name, torch.full(value.shape, fill, dtype=value.dtype))
    return hooked.eval()


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


def save_hooked(hooked, directory: str | Path) -> Path:
    """Write ``config.json`` (the ``HookedTransformerConfig`` fields) and
    ``model.safetensors`` (the full state dict) into ``directory``; nothing partial on failure.

    Reload with plain TransformerLens: ``HookedTransformer(HookedTransformerConfig(**cfg))``
    then ``load_state_dict(safetensors.torch.load_file(...), strict=False)``, or
    :func:`load_hooked`."""
    from safetensors.torch import save_file

    out = Path(directory)
    cfg = hooked.cfg
    config = {
        "n_layers": cfg.n_layers,
        "d_model": cfg.d_model,
        "d_head": cfg.d_head,
        "n_heads": cfg.n_heads,
        "d_mlp": cfg.d_mlp,
        "d_vocab": cfg.d_vocab,
        "d_vocab_out": cfg.d_vocab_out,
        "n_ctx": cfg.n_ctx,
        "act_fn": cfg.act_fn,
        "normalization_type": cfg.normalization_type,
        "attention_dir": cfg.attention_dir,
        "positional_embedding_type": cfg.positional_embedding_type,
        "default_prepend_bos": cfg.default_prepend_bos,
        "original_architecture": cfg.original_architecture,
        "model_name": cfg.model_name,
        "dtype": str(cfg.dtype).replace("torch.", ""),
    }
    tensors = {
        k: v.detach().clone().contiguous()
        for k, v in hooked.state_dict().items()
        if k.split(".")[-1] not in ("mask", "IGNORE")
    }
    if out.exists() and not out.is_dir():
        raise RasplabError(f"cannot write the export to {str(out)!r}: it is a file")
    if out.is_dir() and any(p.name not in (WEIGHTS, CONFIG) for p in out.iterdir()):
        raise RasplabError(
            f"cannot write the export to {str(out)!r}: it holds other files that replacing "
            "the folder would delete; give a new or empty folder"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RasplabError(f"cannot write the export to {str(out)!r}: {err.strerror}") from err
    tmp = temp_dir(out)  # both files complete before the folder is swapped in (one step)
    try:
        save_file(tensors, str(tmp / WEIGHTS))
        (tmp / CONFIG).write_text(json.dumps(config, indent=1), encoding="utf-8")
        for name in (WEIGHTS, CONFIG):
            os.chmod(tmp / name, 0o666 & ~current_umask())
        replace_dir(tmp, out)
    except OSError as err:
        raise RasplabError(f"cannot write the export to {str(out)!r}: {err.strerror}") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def load_hooked(directory: str | Path):
    """The ``HookedTransformer`` saved by :func:`save_hooked` (no unpickling)."""
    from safetensors.torch import load_file

    tl = _transformer_lens()
    path = Path(directory)
    try:
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
        state = load_file(str(path / WEIGHTS))
    except (OSError, json.JSONDecodeError) as err:
        raise RasplabError(f"{str(path)!r} holds no TransformerLens export: {err}") from err
    config["dtype"] = getattr(torch, config["dtype"])
    with _quiet():
        hooked = tl.HookedTransformer(tl.HookedTransformerConfig(device="cpu", **config))
    hooked.load_state_dict(state, strict=False)
    return hooked.eval()
