"""Residual-stream traces: every variable at every position after every sub-layer.

A :class:`Trace` describes one sequence's run, in plain Python values, so that any executor
can produce one and any two can be compared:

* ``tokens``: the token ids (one per position);
* ``kinds``: variable name -> ``"categorical" | "numerical" | "set"``, in row order
  (ordinary variables, then head outputs);
* ``initial``: variable name -> list of values per position before layer 1 (the embedding);
* ``layers``: one :class:`LayerTrace` per layer run, each with ``after_attention`` and
  ``after_mlp`` (variable name -> list of values per position) and ``fired`` (per position,
  the sorted indices into ``program.rules`` of the rules that fired; ``None`` if unknown);
* ``output``: the name of the output variable;
* ``rules``: the program's rules (the interpreters fill it in), so that the table can print
  the text of every rule that fired; not part of the JSON form or of comparisons.

Values are Python ``int`` (categorical), ``float`` (numerical), ``frozenset`` of ints (set),
or ``None`` (undefined: head outputs after an MLP, or a head that read nothing). Layers are
numbered from 1; layer 0 is the initial state. The interpreter builds traces with
:class:`TraceRecorder`; a compiled model can build the same object from decoded residuals and
compare with :meth:`Trace.first_difference`. ``Trace.table()`` prints the readable form (rows
= variables, columns = positions, one block per sub-layer; ``-`` = undefined, ``>`` marks the
output variable) and ``to_json``/``from_json`` convert to plain JSON data.

>>> from rasplab.lang import var, input_var, v_relative, program
>>> def mlp(x):
...     if x["left"] == 1:
...         x["out"] = 1
>>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
...             mlp, output="out", input_range=2, max_layers=1, undefined="no_match")
>>> t = reference_trace(p, [1, 0, 1])
>>> t.layers[0].after_attention["left"], t.layers[0].after_mlp["out"]
([None, 1, 0], [0, 1, 0])
>>> print(t.table())
position       0  1  2
token          1  0  1
layer 0: initial
  tok          1  0  1
> out          0  0  0
  relative_qk  0  0  0
  left         -  -  -
layer 1: after attention
  tok          1  0  1
> out          0  0  0
  relative_qk  0  0  0
  left         -  1  0
layer 1: after MLP
  tok          1  0  1
> out          0  1  0
  relative_qk  0  0  0
  left         -  -  -
  rules fired  -  0  -
    rule 0 at 1: if left == 1 and out == 0: out 0 -> 1
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasplab.lang.arrays import SetTable, to_python
from rasplab.lang.numbers import format_number
from rasplab.lang.program import Program
from rasplab.lang.reference import initial_state, run_reference
from rasplab.lang.rules import Rule

Values = dict[str, list]  # variable name -> value per position


@dataclass
class LayerTrace:
    """One layer: the state after attention, after the MLP, and the rules fired per position."""

    after_attention: Values
    after_mlp: Values
    fired: list[list[int]] | None = None


@dataclass
class Trace:
    """One sequence's residual stream at every sub-layer (see the module docstring)."""

    tokens: list[int]
    kinds: dict[str, str]
    initial: Values
    layers: list[LayerTrace] = field(default_factory=list)
    output: str | None = None
    rules: tuple[Rule, ...] | None = field(default=None, repr=False, compare=False)

    def stages(self):
        """Yield ``(layer, stage, values)`` in execution order (stage: initial/attention/mlp)."""
        yield 0, "initial", self.initial
        for k, lt in enumerate(self.layers, start=1):
            yield k, "attention", lt.after_attention
            yield k, "mlp", lt.after_mlp

    def table(self, mark_changes: bool = False, rules: tuple[Rule, ...] | None = None) -> str:
        """The readable table; ``mark_changes`` suffixes ``*`` to values changed by the sub-layer.
        Under each layer's ``rules fired`` row, one line per rule that fired gives its index,
        the positions where it fired and its text (from ``rules``, default ``self.rules``)."""
        rules = self.rules if rules is None else rules
        n = len(self.tokens)
        blocks: list[tuple[str, list[tuple[str, list[str]]], list[str]]] = []
        prev: Values | None = None
        for layer, stage, values in self.stages():
            title = {"initial": "initial", "attention": "after attention", "mlp": "after MLP"}[
                stage
            ]
            rows = []
            for name in self.kinds:
                cells = [_fmt(v) for v in values[name]]
                if mark_changes and prev is not None:
                    cells = [
                        c + ("*" if not _same(v, w, 0.0) else "")
                        for c, v, w in zip(cells, values[name], prev[name])
                    ]
                rows.append((("> " if name == self.output else "  ") + name, cells))
            if stage == "mlp" and self.layers[layer - 1].fired is not None:
                fired = self.layers[layer - 1].fired
                rows.append(("  rules fired", [",".join(map(str, f)) or "-" for f in fired]))
            notes = []
            if stage == "mlp" and rules is not None and self.layers[layer - 1].fired:
                notes = _rule_lines(self.layers[layer - 1].fired, rules)
            blocks.append((f"layer {layer}: {title}", rows, notes))
            prev = values
        head = [("position", [str(i) for i in range(n)]), ("token", [str(t) for t in self.tokens])]
        all_rows = head + [r for _, rows, _ in blocks for r in rows]
        label = max(len(r[0]) for r in all_rows) + 2
        widths = [max(len(r[1][i]) for r in all_rows) for i in range(n)]

        def line(name: str, cells: list[str]) -> str:
            return (
                name.ljust(label) + "  ".join(c.rjust(w) for c, w in zip(cells, widths))
            ).rstrip()

        out = [line(*r) for r in head]
        for title, rows, notes in blocks:
            out.append(title)
            out += [line(*r) for r in rows] + notes
        return "\n".join(out)

    def to_json(self) -> dict:
        """Plain JSON data (sets as sorted lists, undefined as null)."""

        def enc(values: Values) -> dict:
            return {
                k: [sorted(v) if isinstance(v, frozenset) else v for v in vs]
                for k, vs in values.items()
            }

        return {
            "tokens": list(self.tokens),
            "kinds": dict(self.kinds),
            "output": self.output,
            "initial": enc(self.initial),
            "layers": [
                {
                    "after_attention": enc(lt.after_attention),
                    "after_mlp": enc(lt.after_mlp),
                    "fired": None if lt.fired is None else [list(f) for f in lt.fired],
                }
                for lt in self.layers
            ],
        }

    @classmethod
    def from_json(cls, data: dict) -> Trace:
        """Inverse of :meth:`to_json`."""
        kinds = data["kinds"]

        def dec(values: dict) -> Values:
            return {
                k: [frozenset(v) if kinds[k] == "set" and v is not None else v for v in vs]
                for k, vs in values.items()
            }

        layers = [
            LayerTrace(
                dec(lt["after_attention"]),
                dec(lt["after_mlp"]),
                None if lt.get("fired") is None else [list(f) for f in lt["fired"]],
            )
            for lt in data["layers"]
        ]
        return cls(
            list(data["tokens"]), dict(kinds), dec(data["initial"]), layers, data.get("output")
        )

    def first_difference(self, other: Trace, tol: float = 1e-6) -> dict | None:
        """The first place ``other`` disagrees with this trace (the expected one), or None.

        Compares tokens, then every variable at every position stage by stage (numerical values
        within ``tol``; ``None`` only equals ``None``), then the rules fired where both traces
        know them, then the number of layers. Returns ``{layer, stage, variable, position,
        expected, got}``.
        """
        if list(self.tokens) != list(other.tokens):
            return _diff(0, "tokens", None, None, list(self.tokens), list(other.tokens))
        theirs = list(other.stages())
        for idx, (layer, stage, values) in enumerate(self.stages()):
            if idx >= len(theirs):
                break
            got = theirs[idx][2]
            for name, vs in values.items():
                if name not in got:
                    return _diff(layer, stage, name, None, "present", "missing")
                for pos, (a, b) in enumerate(zip(vs, got[name])):
                    if not _same(a, b, tol):
                        return _diff(layer, stage, name, pos, a, b)
            if stage == "mlp":
                mine, their = self.layers[layer - 1].fired, other.layers[layer - 1].fired
                if mine is not None and their is not None:
                    for pos, (a, b) in enumerate(zip(mine, their)):
                        if list(a) != list(b):
                            return _diff(layer, "rules", None, pos, list(a), list(b))
        if len(self.layers) != len(other.layers):
            first = min(len(self.layers), len(other.layers)) + 1
            return _diff(first, "layers", None, None, len(self.layers), len(other.layers))
        return None


def _rule_lines(fired: list[list[int]], rules: tuple[Rule, ...]) -> list[str]:
    """``    rule I at P,Q: TEXT`` for every rule that fired in one layer, by index."""
    where: dict[int, list[int]] = {}
    for position, indices in enumerate(fired):
        for i in indices:
            where.setdefault(i, []).append(position)
    return [
        f"    rule {i} at {','.join(map(str, where[i]))}: {rules[i] if i < len(rules) else '?'}"
        for i in sorted(where)
    ]


def _diff(layer, stage, variable, position, expected, got) -> dict:
    return {
        "layer": layer,
        "stage": stage,
        "variable": variable,
        "position": position,
        "expected": expected,
        "got": got,
    }


def _same(a: Any, b: Any, tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and math.isclose(a, b, rel_tol=0.0, abs_tol=tol)
        )
    return a == b


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, frozenset):
        return "{" + ",".join(str(m) for m in sorted(v)) + "}"
    if isinstance(v, float):
        return format_number(v)  # the rules' format (rasplab.lang.numbers)
    return str(v)


class TraceRecorder:
    """Collects the batched interpreter's ``[B, T]`` states and turns them into Traces."""

    def __init__(
        self,
        program: Program,
        tokens: np.ndarray,
        lengths: np.ndarray,
        tables: dict[str, SetTable],
        initial: dict[str, np.ndarray],
    ):
        self.program, self.tokens, self.lengths, self.tables = program, tokens, lengths, tables
        self.initial = initial
        self.records: list[tuple[np.ndarray, dict, dict, np.ndarray, np.ndarray, int]] = []

    def record(
        self, ids: np.ndarray, attended: dict, after: dict, pos: np.ndarray, rules: np.ndarray
    ) -> None:
        """Keep one layer's states for the active rows ``ids`` (arrays are not modified later)."""
        width = next(iter(after.values())).shape[1] if after else 0
        self.records.append((ids.copy(), attended, after, pos, rules, width))

    def _values(self, state: dict, row: int, n: int) -> Values:
        specs = self.program.all_variables
        return {k: to_python(v, state[k][row, :n], self.tables.get(k)) for k, v in specs.items()}

    def traces(self) -> list[Trace]:
        """One :class:`Trace` per sequence of the batch."""
        kinds = {k: v.kind for k, v in self.program.all_variables.items()}
        out = []
        for b, n in enumerate(self.lengths.tolist()):
            out.append(
                Trace(
                    self.tokens[b, :n].tolist(),
                    kinds,
                    self._values(self.initial, b, n),
                    output=self.program.output,
                    rules=self.program.rules,
                )
            )
        for ids, attended, after, pos, rules, width in self.records:
            row_of = {b: r for r, b in enumerate(ids.tolist())}
            fired: dict[int, list[list[int]]] = {
                b: [[] for _ in range(self.lengths[b])] for b in row_of
            }
            order = np.lexsort((rules, pos))
            for p, r in zip(pos[order].tolist(), rules[order].tolist()):
                row, t = divmod(p, width)
                fired[int(ids[row])][t].append(r)
            for b, row in row_of.items():
                n = int(self.lengths[b])
                out[b].layers.append(
                    LayerTrace(
                        self._values(attended, row, n), self._values(after, row, n), fired[b]
                    )
                )
        return out


def reference_trace(program: Program, tokens: list[int], max_layers: int | None = None) -> Trace:
    """The :class:`Trace` of :func:`rasplab.lang.reference.run_reference` on one sequence."""
    run = run_reference(program, tokens, max_layers=max_layers)
    names = list(program.all_variables)

    def cols(state: list[dict]) -> Values:
        return {k: [row[k] for row in state] for k in names}

    layers = [
        LayerTrace(cols(a), cols(m), [sorted(f) for f in fired])
        for a, m, fired in zip(run.after_attention, run.after_mlp, run.fired)
    ]
    kinds = {k: v.kind for k, v in program.all_variables.items()}
    initial = cols(initial_state(program, list(tokens)))
    return Trace(list(tokens), kinds, initial, layers, program.output, program.rules)
