"""The explorer's data for a C-RASP program on one string: every operation's value per position.

>>> from rasplab.crasp.load import load_crasp_program
>>> data = crasp_view(load_crasp_program("tomita1"), "1 1 0")
>>> data["summary"]["accept"], data["symbols"][0]
(False, '<bos>')
"""

from __future__ import annotations

from rasplab.crasp.interpreter import run
from rasplab.crasp.ir import CraspProgram


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, tuple):
        return "{" + ",".join(map(str, value)) + "}"
    return str(value)


def crasp_view(program: CraspProgram, text: str) -> dict:
    """Page data: symbols, and per operation its definition and values per position."""
    result = run(program, [text])
    trace = result.trace(0)
    operations = [
        {
            "name": op.name,
            "definition": op.definition(),
            "output": op.name == program.output,
            "values": [_cell(v) for v in trace.rows[op.name]],
        }
        for op in program.ops
    ]
    if trace.outputs is not None:
        label = "next set" if program.readout.kind == "set" else "next token"
        operations.append(
            {
                "name": label,
                "definition": "readout",
                "output": False,
                "values": [_cell(v) for v in trace.outputs],
            }
        )
    return {
        "kind": "crasp",
        "title": f"{program.name} (C-RASP): {text}",
        "symbols": [str(s) for s in trace.symbols],
        "operations": operations,
        "summary": {"operations": len(program.ops), "accept": bool(result.accept[0])},
    }
