"""Saving and loading compiled C-RASP models: ``model.safetensors`` + ``model.json``.

The weights go to safetensors (a sparse matrix as ``NAME.indices``/``NAME.values`` with its
shape in the JSON); the JSON holds the spec (program, alphabet, maximum length, dtype, width,
head offsets, coordinate names, which decoded operations are counts) and a SHA-256 digest
over the spec and the weights, so that an edited field (``max_length``, ``dtype``,
``symbols``) or weights paired with another model's JSON is refused, not run. Both files are
written into a hidden folder beside the target, which is swapped in whole when complete, so
an error leaves nothing behind and an earlier model there is replaced in one step; a folder
holding other files is refused (replacing it would delete them). Loading never unpickles
anything; the spec is checked against itself and the weights
(:mod:`rasplab.crasp_compiler.structure`), and an inconsistent folder is one
:class:`~rasplab.errors.RasplabError` line.

>>> import tempfile, torch
>>> from rasplab.crasp.library import program
>>> from rasplab.crasp_compiler.compile import compile_program
>>> with tempfile.TemporaryDirectory() as d:
...     _ = save_compiled(compile_program(program("tomita1"), 32), d + "/m")
...     m = load_compiled(d + "/m")
>>> m.decode(m(torch.tensor([[0, 2, 1]])))["live"].tolist()
[[1.0, 1.0, 0.0]]
"""

from __future__ import annotations

from pathlib import Path

import torch

from rasplab.compiler.modelspec import check_digest, spec_digest
from rasplab.crasp.ir import CraspProgram
from rasplab.crasp_compiler.model import CraspTransformer
from rasplab.crasp_compiler.structure import check_saved
from rasplab.errors import RasplabError
from rasplab.files import check_model_folder, read_model_dir, write_model_dir

FORMAT = "rasplab-crasp-compiled/1"
WEIGHTS, SPEC = "model.safetensors", "model.json"


def save_compiled(model: CraspTransformer, directory: str | Path) -> Path:
    """Write ``model`` to ``directory`` (created if needed); nothing appears unless complete."""
    out = Path(directory)
    check_model_folder(out, (WEIGHTS, SPEC))
    flat, shapes = {}, {}
    for name, t in model.named_buffers():
        if t.is_sparse:
            flat[name + ".indices"] = t.indices().contiguous()
            flat[name + ".values"] = t.values().contiguous()
            shapes[name] = list(t.shape)
        else:
            flat[name] = t.contiguous()
    spec = {"format": FORMAT, **model.spec, "sparse_shapes": shapes}
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RasplabError(f"cannot write to {str(out)!r}: {err.strerror or err}") from err
    write_model_dir(out, spec, flat, (WEIGHTS, SPEC), spec_digest)
    return out


def load_compiled(directory: str | Path, program: CraspProgram | None = None) -> CraspTransformer:
    """Load a model saved by :func:`save_compiled` (compiled from ``program``, if given)."""
    where = str(directory)
    spec, flat = read_model_dir(directory, SPEC, WEIGHTS)
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise RasplabError(f"{where!r} is not a rasplab compiled C-RASP model")
    check_digest(spec, Path(directory) / WEIGHTS, repr(where))
    spec.pop("digest")
    try:
        tensors = {}
        for name, shape in spec.pop("sparse_shapes").items():
            idx, vals = flat.pop(name + ".indices"), flat.pop(name + ".values")
            tensors[name] = torch.sparse_coo_tensor(
                idx, vals, tuple(shape), check_invariants=True
            ).coalesce()
        tensors.update(flat)
        spec.pop("format")
        check_saved(spec, tensors, repr(where))
        model = CraspTransformer(spec, tensors)
    except RasplabError:  # already one line naming the field
        raise
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise RasplabError(
            f"model in {where!r} is inconsistent: {type(err).__name__}: {err}"
        ) from err
    if program is not None and model.decode_names != [op.name for op in program.ops]:
        raise RasplabError(
            f"model in {where!r} was compiled from {spec.get('program')!r}, whose operations "
            f"differ from those of {program.name!r}"
        )
    return model
