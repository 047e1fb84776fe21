"""Compiling a C-RASP program to a softmax transformer: plan, precision, weights.

:func:`compile_program` is the orchestrator: :func:`~rasplab.crasp_compiler.plan.build_plan` lays out
the residual, heads and MLP units (the construction of Yang & Chiang 2024 / Huang et al.
Appendix B.6, with error bounds per coordinate); :class:`~rasplab.crasp_compiler.precision.Budget`
picks the dtype those bounds certify for inputs of up to ``max_length`` symbols (float32, else
float64, else one error line); :class:`~rasplab.crasp_compiler.model.CraspTransformer` holds the
weights. :func:`model_stats` reports layers, heads, width and parameters.

>>> from rasplab.crasp.library import program
>>> m = compile_program(program("binary_majority"), max_length=512)
>>> s = model_stats(m)
>>> s["layers"], s["heads"], s["dtype"], s["max_length"]
(2, 1, 'float32', 512)
"""

from __future__ import annotations

import time

from rasplab.crasp.ir import CraspProgram
from rasplab.crasp_compiler.model import CraspTransformer
from rasplab.crasp_compiler.plan import build_plan
from rasplab.crasp_compiler.precision import DEFAULT_MAX_LENGTH
from rasplab.errors import RasplabError

DTYPES = ("float32", "float64")


def compile_program(
    program: CraspProgram, max_length: int = DEFAULT_MAX_LENGTH, dtype: str | None = None
) -> CraspTransformer:
    """The transformer computing every operation of ``program`` exactly on every input of at
    most ``max_length`` symbols; ``dtype`` overrides the derived one (an override the bounds do
    not certify is an error)."""
    check_max_length(max_length)
    if dtype is not None and dtype not in DTYPES:
        raise RasplabError(f"dtype {dtype!r} unknown; choose one of: {', '.join(DTYPES)}")
    t0 = time.perf_counter()
    plan = build_plan(program, max_length)
    derived = plan.budget.dtype()
    if dtype == "float32" and derived == "float64":
        raise RasplabError(
            f"float32 cannot certify {program.name} up to length {max_length} "
            f"({plan.budget.tightest}); it needs float64"
        )
    model = CraspTransformer.from_plan(plan, dtype or derived)
    model.spec["eps_max"] = plan.budget.eps_max
    model.spec["tightest"] = plan.budget.tightest
    model.spec["compile_seconds"] = time.perf_counter() - t0
    return model


def check_max_length(max_length: object) -> None:
    """A positive integer, or one error line."""
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
        raise RasplabError(f"--max-length must be a positive integer, got {max_length!r}")


def model_stats(model: CraspTransformer) -> dict:
    """``layers``, ``heads``, ``width``, ``parameters`` (the weights of the equivalent dense
    transformer: embedding, W_Q, W_K, W_V, W_O, W_1, b_1, W_2), ``nonzero_parameters`` (those
    the sparse model stores), ``max_length``, ``compile_seconds``, ``dtype``."""
    dense = nonzero = 0
    for name, t in model.named_buffers():
        if name in ("pos_coords", "decode_matrix"):
            continue
        if name.endswith("W_O"):  # a selection: one 1 per value dimension
            dense += t.numel() * model.width
            nonzero += t.numel()
        elif t.is_sparse:
            dense += t.shape[0] * t.shape[1]
            nonzero += int((t.values() != 0).sum())
        else:
            dense += t.numel()
            nonzero += int((t != 0).sum())
    spec = model.spec
    return {
        "layers": spec["layers"],
        "heads": spec["heads"],
        "width": spec["width"],
        "parameters": int(dense),
        "nonzero_parameters": int(nonzero),
        "max_length": spec["max_length"],
        "compile_seconds": round(float(spec.get("compile_seconds", 0.0)), 3),
        "dtype": spec["dtype"],
    }
