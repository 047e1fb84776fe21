"""C-RASP traces: every operation's value at every position of one string, as a table.

Same look as the ALTA residual-stream traces (:mod:`rasplab.lang.trace`): operations as rows
(in program order), positions as columns, a ``position`` and a ``symbol`` header row, ``>``
marking the output operation (acceptance = its value at the last position). Booleans print as
``T``/``F``, counts as integers; a readout adds a last row.

>>> from rasplab.crasp.build import Q, count, crasp_program
>>> from rasplab.crasp.interpreter import run
>>> p = crasp_program("majority", (count(Q("b"), name="C_b") <= count(Q("a"), name="C_a")).named("M"),
...             alphabet="ab")
>>> print(run(p, ["a b b"]).trace(0).table())
position      0  1  2  3
symbol    <bos>  a  b  b
  Q_b         F  F  T  T
  C_b         0  0  1  2
  Q_a         F  T  F  F
  C_a         0  1  1  1
> M           T  T  T  F
"""

from __future__ import annotations

from dataclasses import dataclass

from rasplab.crasp.ir import CraspProgram


@dataclass
class CraspTrace:
    """One string's run: ``rows[name]`` is the operation's value per position."""

    program: CraspProgram
    symbols: list[str]
    rows: dict[str, list]
    outputs: list | None = None

    def table(self, definitions: bool = False) -> str:
        """The readable table; ``definitions`` appends each operation's right-hand side."""
        out_name = self.program.output
        lines: list[tuple[str, list[str], str]] = [
            ("position", [str(i) for i in range(len(self.symbols))], ""),
            ("symbol", list(self.symbols), ""),
        ]
        for op in self.program.ops:
            cells = [_fmt(v) for v in self.rows[op.name]]
            mark = "> " if op.name == out_name else "  "
            lines.append((mark + op.name, cells, op.definition() if definitions else ""))
        if self.outputs is not None and self.program.readout is not None:
            label = "next set" if self.program.readout.kind == "set" else "next token"
            lines.append(("  " + label, [_fmt(v) for v in self.outputs], ""))
        label = max(len(name) for name, _, _ in lines) + 2
        widths = [max(len(cells[i]) for _, cells, _ in lines) for i in range(len(self.symbols))]
        text = []
        for name, cells, note in lines:
            row = name.ljust(label) + "  ".join(c.rjust(w) for c, w in zip(cells, widths))
            text.append((row + (f"   := {note}" if note else "")).rstrip())
        return "\n".join(text)

    def to_json(self) -> dict:
        """Plain JSON data: symbols, output name, per-operation rows, readout per position."""
        return {
            "symbols": list(self.symbols),
            "output": self.program.output,
            "rows": {k: list(v) for k, v in self.rows.items()},
            "readout": None if self.outputs is None else [_json(v) for v in self.outputs],
        }


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "T" if v else "F"
    if isinstance(v, tuple):
        return "{" + ",".join(map(str, v)) + "}"
    return str(v)


def _json(v: object) -> object:
    return list(v) if isinstance(v, tuple) else v
