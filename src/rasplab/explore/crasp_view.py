"""The explorer's data for a C-RASP program on one string: every operation's value per position,
from the interpreter and decoded from the compiled transformer, side by side.

The compiled model (:func:`rasplab.crasp_compiler.compile.compile_program`, built for the
string's length) runs the same ids; every operation is decoded from its final residual
(counts as ``ratio * (i + 1)``) and compared as ``rasplab crasp verify`` compares: within 1/4
of the interpreter's 0/1 or integer. The readout row (next token or set) has no compiled
counterpart and is shown for the interpreter only.

>>> from rasplab.crasp.load import load_crasp_program
>>> data = crasp_view(load_crasp_program("tomita1"), "1 1 0")
>>> data["summary"]["accept"], data["summary"]["all_agree"], data["symbols"][0]
(False, True, '<bos>')
"""

from __future__ import annotations

import torch

from rasplab.crasp.interpreter import encode, run
from rasplab.crasp.ir import CraspProgram
from rasplab.crasp_compiler.compile import compile_program

TOLERANCE = 0.25
"""A decoded value agrees when within this of the interpreter's (as ``crasp verify``)."""


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, tuple):
        return "{" + ",".join(map(str, value)) + "}"
    return str(value)


def _compiled(program: CraspProgram, text: str) -> dict[str, list[float]]:
    """Every operation's decoded value per position, from the compiled transformer."""
    _, ids, lengths = encode(program, [text])
    model = compile_program(program, max(int(lengths[0]) - 1, 1))
    with torch.no_grad():
        values = model.decode(model(torch.from_numpy(ids)))
    return {name: v[0].to(torch.float64).tolist() for name, v in values.items()}


def _compiled_cell(kind: str, value: float) -> str:
    """A decoded value as the page shows it: T/F by the nearer of 0 and 1, a count rounded."""
    if value != value:  # NaN
        return "nan"
    if kind == "count":
        return str(round(value))
    return "T" if value >= 0.5 else "F"


def crasp_view(program: CraspProgram, text: str) -> dict:
    """Page data: symbols, and per operation its definition, the interpreter's values and
    the compiled model's (with the positions where they differ)."""
    result = run(program, [text])
    trace = result.trace(0)
    compiled = _compiled(program, text)
    operations, all_agree = [], True
    for op in program.ops:
        want = trace.rows[op.name]
        got = compiled[op.name]
        differs = [
            p for p, (w, g) in enumerate(zip(want, got)) if not abs(float(w) - g) < TOLERANCE
        ]
        all_agree &= not differs
        operations.append(
            {
                "name": op.name,
                "definition": op.definition(),
                "output": op.name == program.output,
                "values": [_cell(v) for v in want],
                "compiled": [_compiled_cell(op.sort, g) for g in got],
                "differs": differs,
            }
        )
    if trace.outputs is not None:
        label = "next set" if program.readout.kind == "set" else "next token"
        operations.append(
            {
                "name": label,
                "definition": "readout",
                "output": False,
                "values": [_cell(v) for v in trace.outputs],
                "compiled": None,
                "differs": [],
            }
        )
    return {
        "kind": "crasp",
        "title": f"{program.name} (C-RASP): {text}",
        "symbols": [str(s) for s in trace.symbols],
        "operations": operations,
        "summary": {
            "operations": len(program.ops),
            "accept": bool(result.accept[0]),
            "all_agree": all_agree,
        },
    }
