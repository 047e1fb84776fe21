"""Save a compiled RASP model: ``model.safetensors`` (every weight by its module path) and
``model.json``: the ``format`` name, program name, tokens in token-id order, BOS and PAD,
max_seq_len, causal, dtype, sizes, residual labels, every SOp's slot (label, start, values,
numerical) with the output SOp's index, and a SHA-256 ``digest`` over spec and weights, so a
hand-edited field or another model's weights is refused on load
(:mod:`rasplab.rasp_compiler.load`). Token and SOp values are stored as their Python
``repr``, and only values that read back equal (numbers, strings, bools, None, tuples of
them) can be saved. Both files are written into a hidden folder beside the target and swapped
in whole (:mod:`rasplab.files`), so a failure leaves nothing behind and an earlier model there
is replaced in one step; a folder holding other files is refused.

>>> import json, tempfile, os
>>> from rasplab.rasp import lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> folder = os.path.join(tempfile.mkdtemp(), "hist")
>>> save_model(compile_rasp_to_model(lib.make_hist(), {1, 2}, 4), folder)
>>> spec = json.load(open(os.path.join(folder, "model.json")))
>>> sorted(os.listdir(folder)), spec["format"], spec["sizes"]["layers"], spec["vocab"]
(['model.json', 'model.safetensors'], 'rasplab-rasp-compiled/1', 1, ['1', '2'])
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from rasplab.compiler.modelspec import spec_digest
from rasplab.errors import RasplabError
from rasplab.files import check_model_folder, write_model_dir
from rasplab.rasp import rasp
from rasplab.rasp.rasp import RaspError
from rasplab.rasp_compiler.compile import CompiledRasp

FORMAT = "rasplab-rasp-compiled/1"
WEIGHTS, SPEC = "model.safetensors", "model.json"


def saved_value(value: Any, what: str) -> str:
    """``repr(value)``, refused unless it reads back (``ast.literal_eval``) as an equal value
    of the same type.

    >>> saved_value((1, "a"), "token")
    "(1, 'a')"
    >>> saved_value(object, "token")
    Traceback (most recent call last):
    rasplab.rasp.rasp.RaspError: cannot save the model: token <class 'object'> does not read back from its repr (only numbers, strings, bools, None and tuples of them do)
    """
    text = repr(value)
    try:
        back = ast.literal_eval(text)
        same = back == value and type(back) is type(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        same = False
    if not same:
        raise RaspError(
            f"cannot save the model: {what} {text[:60]} does not read back from its repr "
            "(only numbers, strings, bools, None and tuples of them do)"
        )
    return text


def model_spec(model: CompiledRasp) -> dict[str, Any]:
    """The ``model.json`` fields of ``model`` (all but the digest)."""
    order = list(model.plan.order)
    sops = [
        {
            "label": s.label,
            "start": model.slot(s).start,
            "values": [saved_value(v, f"a value of {s.label}") for v in model.slot(s).values],
            "numerical": rasp.is_numerical(s),
        }
        for s in order
    ]
    special = {}
    for key, value in (("bos", model.bos), ("pad", model.pad)):
        special[key] = None if value is None else saved_value(value, f"the {key.upper()} token")
    return {
        "format": FORMAT,
        "program": model.program.name,
        "vocab": [saved_value(v, "token") for v in model.tokens],
        **special,
        "max_seq_len": model.max_seq_len,
        "causal": model.plan.causal,
        "sizes": model.sizes(),
        "residual_labels": model.residual_labels,
        "sops": sops,
        "output": next(i for i, s in enumerate(order) if s is model.program),
    }


def save_model(model: CompiledRasp, out: str | Path) -> None:
    """Write ``model`` to the folder ``out`` (created if needed, an earlier model there
    replaced; a file, or a folder holding other files, is refused)."""
    out = Path(out)
    check_model_folder(out, (WEIGHTS, SPEC))
    spec = model_spec(model)
    tensors = {k: v.detach().contiguous() for k, v in model.module.state_dict().items()}
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RasplabError(f"cannot write to {str(out)!r}: {err.strerror or err}") from err
    write_model_dir(out, spec, tensors, (WEIGHTS, SPEC), spec_digest, indent=1)
