"""C-RASP programs compiled to exact causal softmax transformers (the C-RASP compiler stage).

The language (:mod:`rasplab.crasp`) knows no weights; this stage turns a validated
:class:`~rasplab.crasp.ir.CraspProgram` into a :class:`~rasplab.crasp_compiler.model.CraspTransformer`
(:func:`compile_program`: plan, precision budget, weights), saves and loads it
(:mod:`rasplab.crasp_compiler.export`) and checks it against the interpreter
(:mod:`rasplab.crasp_compiler.verify`).

The names below are loaded on first use, so that importing a torch-free part of this stage
(:mod:`~rasplab.crasp_compiler.precision`, e.g. for ``DEFAULT_MAX_LENGTH``) does not import torch.

>>> from rasplab.crasp.library import program
>>> from rasplab.crasp_compiler import compile_program, model_stats
>>> model_stats(compile_program(program("tomita1"), max_length=16))["dtype"]
'float32'
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "DEFAULT_MAX_LENGTH": "rasplab.crasp_compiler.precision",
    "CraspTransformer": "rasplab.crasp_compiler.model",
    "compile_program": "rasplab.crasp_compiler.compile",
    "model_stats": "rasplab.crasp_compiler.compile",
}

__all__ = ["DEFAULT_MAX_LENGTH", "CraspTransformer", "compile_program", "model_stats"]


def __getattr__(name: str):
    """The public names, imported from their modules on first use (start-up time: torch)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazily loaded ones included."""
    return sorted(set(globals()) | set(__all__))
