"""Checkpoints as safetensors (model, AdamW state, training state).

A checkpoint is one ``.safetensors`` file: tensors ``model/<name>`` and ``optim/<i>/<key>``,
and JSON metadata holding the optimizer's parameter groups and the trainer's state (step,
curves, last metrics), so that a resumed run continues exactly where it stopped. Nothing is
unpickled: a corrupt file is a :class:`~rasplab.errors.RasplabError`.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, safe_open, save_file

from rasplab.errors import RasplabError
from rasplab.files import atomic_write_bytes, atomic_write_text, publish, temp_file

FORMAT = "rasplab-checkpoint-1"

__all__ = [
    "FORMAT",
    "atomic_write_bytes",  # moved to rasplab.files; still importable from here
    "atomic_write_text",
    "load_checkpoint",
    "read_checkpoint",
    "save_checkpoint",
]


def _tensor_dict(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None) -> dict:
    """Flatten model and optimizer state into a name → contiguous tensor dict (copies)."""
    tensors = {
        f"model/{k}": v.detach().cpu().clone().contiguous() for k, v in model.state_dict().items()
    }
    if optimizer is not None:
        for idx, state in optimizer.state_dict()["state"].items():
            for key, value in state.items():
                value = value if torch.is_tensor(value) else torch.tensor(value)
                tensors[f"optim/{idx}/{key}"] = value.detach().cpu().clone().contiguous()
    return tensors


def save_checkpoint(path: Path, model, optimizer=None, state: dict | None = None) -> None:
    """Save model (+ optimizer, + JSON trainer state) to ``path`` atomically."""
    path = Path(path)
    metadata = {"format": FORMAT, "state": json.dumps(state or {})}
    if optimizer is not None:
        metadata["param_groups"] = json.dumps(optimizer.state_dict()["param_groups"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_file(path)
    try:
        save_file(_tensor_dict(model, optimizer), str(tmp), metadata=metadata)
        publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_checkpoint(path: Path) -> tuple[dict, dict]:
    """Read a checkpoint's tensors and metadata; a corrupt or foreign file is a RasplabError."""
    path = Path(path)
    hint = "delete it (or pass --fresh) to start the run over"
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as err:
        raise RasplabError(f"checkpoint {str(path)!r} is corrupt ({err}); {hint}") from err
    if metadata.get("format") != FORMAT:
        raise RasplabError(f"checkpoint {str(path)!r} is not a rasplab checkpoint; {hint}")
    try:
        meta = {k: json.loads(v) for k, v in metadata.items() if k != "format"}
    except json.JSONDecodeError as err:
        raise RasplabError(f"checkpoint {str(path)!r} has corrupt metadata; {hint}") from err
    return tensors, meta


def load_checkpoint(path: Path, model, optimizer=None) -> dict:
    """Restore ``model`` (and ``optimizer``) from ``path``; return the saved trainer state."""
    tensors, meta = read_checkpoint(path)
    weights = {k[len("model/") :]: v for k, v in tensors.items() if k.startswith("model/")}
    try:
        model.load_state_dict(weights, strict=True)
    except RuntimeError as err:
        first = str(err).splitlines()[0]
        raise RasplabError(
            f"checkpoint {str(path)!r} does not fit this model config ({first}); "
            "delete it (or pass --fresh) to start the run over"
        ) from err
    if optimizer is not None:
        if "param_groups" not in meta:
            raise RasplabError(f"checkpoint {str(path)!r} holds no optimizer state; cannot resume")
        state: dict[int, dict] = {}
        for name, value in tensors.items():
            if name.startswith("optim/"):
                _, idx, key = name.split("/", 2)
                state.setdefault(int(idx), {})[key] = value
        try:
            optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
        except (ValueError, KeyError) as err:
            raise RasplabError(
                f"checkpoint {str(path)!r}: optimizer state does not fit ({err})"
            ) from err
    state = meta.get("state", {})
    _check_state(state, path)
    return state


STATE_TYPES = {
    "step": (int,),
    "curves": (list,),
    "metrics": (dict, type(None)),
    "done": (bool,),
    "stopped_early": (bool,),
    "wall_time": (int, float),
}
"""The trainer-state fields a checkpoint must hold, and their JSON types."""


def _check_state(state: object, path: Path) -> None:
    """A hand-edited or foreign trainer state is one RasplabError naming the field."""
    hint = "delete it (or pass --fresh) to start the run over"
    if not isinstance(state, dict):
        raise RasplabError(f"checkpoint {str(path)!r}: its trainer state is not an object; {hint}")
    for key, types in STATE_TYPES.items():
        value = state.get(key)
        bad_bool = isinstance(value, bool) and bool not in types
        if key not in state or not isinstance(value, types) or bad_bool:
            raise RasplabError(
                f"checkpoint {str(path)!r}: trainer state field {key!r} is missing or has the "
                f"wrong type ({value!r:.40}); {hint}"
            )
    if state["step"] < 0 or (state["metrics"] is None and state["done"]):
        raise RasplabError(f"checkpoint {str(path)!r}: inconsistent trainer state; {hint}")
