"""Save a compiled RASP model: ``model.safetensors`` (every weight by its module path) and
``model.json`` (program name, vocabulary, max_seq_len, sizes, residual labels, and where each
SOp lives in the residual stream). Written to a temporary folder and renamed into place, so
a failure leaves nothing behind.

>>> import json, tempfile, os
>>> from rasplab.rasp import lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> folder = os.path.join(tempfile.mkdtemp(), "hist")
>>> save_model(compile_rasp_to_model(lib.make_hist(), {1, 2}, 4), folder)
>>> sorted(os.listdir(folder)), json.load(open(os.path.join(folder, "model.json")))["sizes"]["layers"]
(['model.json', 'model.safetensors'], 1)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from safetensors.torch import save_file

from rasplab.rasp import rasp
from rasplab.rasp.rasp import RaspError
from rasplab.rasp_compiler.compile import CompiledRasp


def save_model(model: CompiledRasp, out: str | Path) -> None:
    """Write ``model`` to the folder ``out`` (refused if it exists and is not empty)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RaspError(f"{str(out)!r} exists and is not an empty folder; choose a new --out")
    spec = {
        "program": model.program.name,
        "vocab": [repr(v) for v in model.vocab],
        "max_seq_len": model.plan.max_seq_len,
        "bos": model.bos,
        "causal": model.plan.causal,
        "sizes": model.sizes(),
        "residual_labels": model.residual_labels,
        "sops": {
            s.label: {
                "start": model.slot(s).start,
                "values": [repr(v) for v in model.slot(s).values],
                "numerical": rasp.is_numerical(s),
            }
            for s in model.plan.order
        },
    }
    tensors = {k: v.detach().contiguous() for k, v in model.module.state_dict().items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".rasp-", dir=out.parent))
    try:
        save_file(tensors, str(tmp / "model.safetensors"))
        (tmp / "model.json").write_text(json.dumps(spec, indent=1) + "\n")
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
