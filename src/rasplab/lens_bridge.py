"""TransformerLens 4 ``TransformerBridge`` s built from given weights; saved and loaded.

TransformerLens 4 opens a model that is not on the Hugging Face hub the way its own tracr
demo does: ``TransformerBridge.boot_native(config)`` builds its native pre-LN transformer
(``tok_embed``, ``pos``, ``layers.N.{ln1, attn.{q,k,v,o}, ln2, mlp.{fc_in,fc_out}}``,
``ln_out``, ``head``: ``nn.Linear`` / ``nn.Embedding`` / ``nn.LayerNorm`` modules), and
``load_state_dict`` takes the weights by those native parameter paths. Both of rasplab's
exports (compiled programs, :mod:`rasplab.compiler.hooked`; trained runs,
:mod:`rasplab.models.lens`) go through :func:`boot_bridge`, which builds the model on the
``meta`` device (no memory, no random initialisation) and then gives every parameter its
real tensor; one tensor given for several layers stays one tensor (a compiled loop unrolled
``K`` times costs one copy).

On disk (:func:`save_bridge`) an export is ``config.json`` (``TransformerBridgeConfig``
fields, ``dtype`` as a string) and ``model.safetensors`` (the bridge's ``state_dict``, under
TransformerLens's own names, every layer's copy), loaded back in plain TransformerLens by::

    cfg = json.load(open("DIR/config.json"))
    cfg["dtype"] = getattr(torch, cfg["dtype"])
    bridge = TransformerBridge.boot_native(TransformerBridgeConfig(**cfg))
    bridge.load_state_dict(safetensors.torch.load_file("DIR/model.safetensors"))

or :func:`load_bridge`. TransformerLens 3.x (``HookedTransformer``) is not supported: rasplab
0.1.0 was the last release that exported to it.
"""

from __future__ import annotations

import json
import os
import shutil
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from rasplab.errors import RasplabError
from rasplab.files import current_umask, replace_dir, temp_dir

CONFIG, WEIGHTS = "config.json", "model.safetensors"
_ORIGINAL = "._original_component"


def transformer_lens():
    """The TransformerLens 4 module, or one clear error naming the extra to install."""
    try:
        import transformer_lens as tl  # optional extra: rasplab[interp]
    except ImportError as err:
        raise RasplabError(
            "TransformerLens is not installed; install the interp extra: "
            "pip install 'rasplab[interp]'"
        ) from err
    try:
        major = int(version("transformer-lens").split(".")[0])
    except (PackageNotFoundError, ValueError):
        major = 4 if "TransformerBridge" in getattr(tl, "__all__", ()) else 0
    if major < 4:
        raise RasplabError(
            "TransformerLens 4.x is needed (TransformerBridge); this environment has an "
            "older release (rasplab 0.1.0 was the last to export to 3.x): "
            "pip install 'rasplab[interp]'"
        )
    return tl


def clean_name(name: str) -> str:
    """A native parameter path without the bridge's ``_original_component`` segments."""
    return name.replace(_ORIGINAL, "")


def boot_bridge(config: dict, tensors: dict[str, torch.Tensor], dtype: torch.dtype):
    """A ``TransformerBridge`` of the native model ``config`` with the weights ``tensors``.

    ``config`` holds ``TransformerBridgeConfig`` fields (``dtype`` excluded); ``tensors``
    maps every native parameter path (``layers.0.attn.q.weight``, ...) to its value. A
    parameter missing from ``tensors``, or one of the wrong shape, is an error; tensors
    that are the same object become one shared parameter.
    """
    tl = transformer_lens()
    cfg = tl.TransformerBridgeConfig(**{**config, "dtype": dtype, "init_weights": False})
    with torch.device("meta"):  # no memory and no initialisation for replaced weights
        bridge = tl.TransformerBridge.boot_native(cfg, dtype=dtype)
    shared: dict[int, torch.nn.Parameter] = {}
    for module, full, name, value in _parameters(bridge):
        if full not in tensors:
            raise RasplabError(f"no tensor given for the native parameter {full!r}")
        given = tensors[full]
        if tuple(given.shape) != tuple(value.shape):
            raise RasplabError(
                f"native parameter {full!r} has shape {tuple(value.shape)}, "
                f"the tensor given {tuple(given.shape)}"
            )
        if id(given) not in shared:
            shared[id(given)] = torch.nn.Parameter(given.to(dtype), requires_grad=False)
        setattr(module, name, shared[id(given)])
    for module in bridge.original_model.modules():
        fresh = type(module)(cfg) if type(module).__name__ == "NativeRotary" else None
        for name, value in list(module.named_buffers(recurse=False)):
            keep = name not in module._non_persistent_buffers_set
            real = getattr(fresh, name) if fresh is not None else _buffer(name, value, cfg.n_ctx)
            module.register_buffer(name, real, persistent=keep)
    bridge.export_config = dict(config)  # what save_bridge writes
    return bridge.eval()


def _parameters(bridge):
    """``(module, path, name, parameter)`` for every native parameter, each module once
    under its native path (the bridge reaches some under a second alias, e.g. ``mlp.in``)."""
    found = []
    for prefix, module in bridge.original_model.named_modules():
        path = clean_name(prefix)
        for name, value in module.named_parameters(recurse=False):
            found.append((module, f"{path}.{name}" if path else name, name, value))
    return found


def _buffer(name: str, meta: torch.Tensor, n_ctx: int) -> torch.Tensor:
    """A real tensor for a native buffer left on the meta device: the causal mask (True
    above the diagonal) or the head's absent bias (zeros); the rotary tables are rebuilt
    by their own module (above). Any other buffer is an error, not a silent zero."""
    if name == "causal_mask":
        return torch.triu(torch.ones(n_ctx, n_ctx, dtype=torch.bool), diagonal=1)
    if name == "bias":
        return torch.zeros(meta.shape, dtype=meta.dtype)
    raise RasplabError(
        f"this TransformerLens release has a native buffer {name!r} rasplab "
        "does not know how to fill"
    )


def save_bridge(bridge, directory: str | Path) -> Path:
    """Write ``config.json`` (the config it was built from, plus the dtype) and ``model.safetensors`` (the
    bridge's ``state_dict``, every layer's copy) into ``directory``, replacing it in one
    step; nothing partial."""
    out = Path(directory)
    config = getattr(bridge, "export_config", None)
    if config is None:
        raise RasplabError("save_bridge saves a bridge made by boot_bridge or load_bridge")
    tensors = {k: v.detach().clone().contiguous() for k, v in bridge.state_dict().items()}
    dtype = next(iter(tensors.values())).dtype
    config = {**config, "dtype": str(dtype).replace("torch.", "")}
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


def load_bridge(directory: str | Path):
    """The ``TransformerBridge`` saved by :func:`save_bridge` (no unpickling)."""
    path = Path(directory)
    try:
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
        tensors = load_file(str(path / WEIGHTS))
    except (OSError, json.JSONDecodeError) as err:
        raise RasplabError(f"{str(path)!r} holds no TransformerLens export: {err}") from err
    if not isinstance(config, dict) or "n_layers" not in config:
        raise RasplabError(f"{str(path / CONFIG)!r} is not a TransformerLens config")
    if "embed.W_E" in tensors:
        raise RasplabError(
            f"{str(path)!r} is a TransformerLens 3 export (rasplab 0.1.0); export it again"
        )
    dtype = getattr(torch, str(config.get("dtype", "float32")), None)
    if not isinstance(dtype, torch.dtype):
        raise RasplabError(f"{str(path / CONFIG)!r} names no torch dtype")
    tl = transformer_lens()
    bridge = tl.TransformerBridge.boot_native(
        tl.TransformerBridgeConfig(**{**config, "dtype": dtype, "init_weights": False})
    )
    try:
        bridge.load_state_dict(tensors)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[-1].strip()[:300]
        raise RasplabError(f"{str(path)!r} does not match its config: {first}") from err
    bridge.export_config = {k: v for k, v in config.items() if k != "dtype"}
    return bridge.eval()
