"""Saving and loading compiled models: ``model.safetensors`` (weights) + ``model.json`` (spec).

The JSON holds everything needed to run without the program's source: the residual layout,
the heads' relative offsets, causal mode, halting, output variable, vocabulary size, limits
(maximum length and layers, exact dtypes) and ``entry``, the library program whose
``encode``/``decode`` turn natural inputs into token ids and outputs into answers. Weights
are stored in float64 (the dtype they were built in). Saving replaces an earlier model in
``DIR`` in one step (a hidden folder swapped in), so a killed save leaves the old pair or the
new one. Loading never unpickles anything; the spec's field types and its digest over spec
and weights are checked (:mod:`rasplab.compiler.modelspec`), and every inconsistency is
reported as one :class:`~rasplab.errors.RasplabError` line.

>>> import tempfile
>>> from rasplab.programs import get_program
>>> from rasplab.compiler import compile_program, run_compiled
>>> entry = get_program("parity_sequential_relative")
>>> with tempfile.TemporaryDirectory() as d:
...     _ = save_compiled(compile_program(entry.program()), d, entry="parity_sequential_relative")
...     m = load_compiled(d)
>>> run_compiled(m, [entry.encode("1 1 0 1")]).outputs
[[0, 1, 0, 0, 1]]
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import save_file

from rasplab.compiler.layout import Layout
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.modelspec import check_digest, check_spec_types, spec_digest
from rasplab.compiler.structure import check_structure
from rasplab.errors import RasplabError
from rasplab.files import (
    check_model_folder,
    current_umask,
    read_model_dir,
    replace_dir,
    temp_dir,
)

FORMAT = "rasplab-compiled/1"
WEIGHTS, SPEC = "model.safetensors", "model.json"
REQUIRED = (
    "tok_emb",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "sink",
    "rule_units",
    "rule_writes",
    "mlp_b1",
    "mlp_b2",
    "mlp_b3",
    *(f"mlp{k}_{part}" for k in range(1, 5) for part in ("indices", "values")),
)
SPEC_KEYS = (
    "name",
    "layout",
    "variables",
    "heads",
    "head_offsets",
    "head_groups",
    "causal",
    "halt",
    "output",
    "input_range",
    "max_layers",
    "max_length",
    "exact_dtypes",
    "notes",
    "rules",
    "mlp_shapes",
    "mlp_widths",
    "constants",
)


def save_compiled(
    model: CompiledTransformer, directory: str | Path, entry: str | None = None
) -> Path:
    """Write the model to ``directory``, replacing an earlier model there in one step: both
    files are written into a hidden folder beside it, which is then swapped in."""
    out = Path(directory)
    check_model_folder(out, (WEIGHTS, SPEC))
    created = [p for p in out.parents if not p.exists()]  # removed again on failure
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        _remove_empty(created)
        raise RasplabError(
            f"cannot create model directory {str(out)!r}: {err.strerror or err}"
        ) from err
    spec = {
        "format": FORMAT,
        **{k: v for k, v in model.spec.items() if k != "compile_seconds"},
        "entry": entry,
    }
    tensors = {name: t.detach().contiguous() for name, t in model.named_buffers()}
    tmp = temp_dir(out)
    try:
        save_file(tensors, str(tmp / WEIGHTS))
        spec["digest"] = spec_digest(spec, tmp / WEIGHTS)
        (tmp / SPEC).write_text(json.dumps(spec, indent=1), encoding="utf-8")
        for name in (WEIGHTS, SPEC):
            os.chmod(tmp / name, 0o666 & ~current_umask())
        replace_dir(tmp, out)
    except (OSError, SafetensorError) as err:  # safetensors reports I/O errors as its own
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(created)
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RasplabError(f"cannot write the model to {str(out)!r}: {reason}") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _remove_empty(directories: list[Path]) -> None:
    """Remove directories this save created (innermost first), leaving no partial output."""
    for path in directories:
        try:
            path.rmdir()
        except OSError:
            return


def _check(spec: dict, tensors: dict[str, torch.Tensor], where: str, weights: Path) -> None:
    """Spec field types, the digest binding spec and weights (required), then
    shapes and indices consistent with the spec; else a RasplabError."""
    missing = [k for k in SPEC_KEYS if k not in spec]
    if spec.get("format") != FORMAT or missing:
        raise RasplabError(
            f"{where} is not a rasplab compiled model "
            f"({'missing ' + ', '.join(missing) if missing else 'unknown format'})"
        )
    check_spec_types(spec, where)
    check_digest(spec, weights, where)
    absent = [k for k in REQUIRED if k not in tensors]
    if absent:
        raise RasplabError(f"{where}: weights file lacks {', '.join(absent)}")
    layout = Layout.from_json(spec["layout"])
    d, heads = layout.width, len(spec["head_offsets"])
    expect = {"tok_emb": (spec["input_range"], d), "sink": (heads,)}
    for name, shape in expect.items():
        if tuple(tensors[name].shape) != shape:
            raise RasplabError(
                f"{where}: {name} has shape {list(tensors[name].shape)}, expected {list(shape)}"
            )
    for name in ("W_Q", "W_K", "W_V"):
        if tensors[name].shape[:2] != (heads, d):
            raise RasplabError(
                f"{where}: {name} has shape {list(tensors[name].shape)}, expected [{heads}, {d}, *]"
            )
    if "pos_emb" in tensors and tuple(tensors["pos_emb"].shape[1:]) != (d,):
        raise RasplabError(f"{where}: pos_emb width does not match the layout")
    for k, shape in enumerate(spec["mlp_shapes"], start=1):
        idx, vals = tensors[f"mlp{k}_indices"], tensors[f"mlp{k}_values"]
        if (
            idx.dtype != torch.int64
            or idx.ndim != 2
            or idx.shape[0] != 2
            or vals.shape != (idx.shape[1],)
        ):
            raise RasplabError(f"{where}: malformed sparse matrix mlp{k}")
        if idx.numel() and (
            (idx.min() < 0) or (idx[0].max() >= shape[0]) or (idx[1].max() >= shape[1])
        ):
            raise RasplabError(f"{where}: mlp{k} indices fall outside its shape {shape}")
    check_structure(spec, tensors, where)
    for name, t in tensors.items():
        if t.is_floating_point() and not torch.isfinite(t).all():
            raise RasplabError(f"{where}: {name} holds non-finite values")


def load_compiled(directory: str | Path) -> CompiledTransformer:
    """Load a model saved by :func:`save_compiled` (safetensors + JSON only)."""
    where = str(directory)
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise RasplabError(
            f"{where!r} is a file; a compiled model is a directory (`rasplab compile NAME --out DIR`)"
        )
    spec, tensors = read_model_dir(path, SPEC, WEIGHTS)
    if not isinstance(spec, dict):
        raise RasplabError(f"{where}/{SPEC} is not a JSON object")
    try:
        _check(spec, tensors, where, path / WEIGHTS)
        return CompiledTransformer(spec, tensors)
    except RasplabError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise RasplabError(
            f"model in {where!r} is inconsistent: {type(err).__name__}: {err}"
        ) from err
