"""The reference interpreter: one sequence, plain Python, written for obviousness not speed.

It is the executable statement of the semantics in :mod:`rasplab.lang.program`; the fast
batched interpreter and the compiled model are tested against it.

>>> from rasplab.lang import var, input_var, v_relative, program
>>> def mlp(x):
...     if x["left"] == 1:
...         x["out"] = 1
>>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
...             mlp, output="out", input_range=2, max_layers=1, undefined="no_match")
>>> run_reference(p, [1, 0, 1, 1]).output
[0, 1, 0, 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rasplab.errors import RasplabError
from rasplab.lang import numbers
from rasplab.lang.program import Program, undefined_read

State = list[dict[str, Any]]  # one dict per position: variable -> value (None = undefined)


@dataclass
class ReferenceRun:
    """Result of one reference run: output values, layers run, and per-layer snapshots."""

    output: list[int]
    layers: int
    after_attention: list[State] = field(default_factory=list)
    after_mlp: list[State] = field(default_factory=list)
    fired: list[list[list[int]]] = field(default_factory=list)  # layer -> position -> rule indices


def initial_state(program: Program, tokens: list[int]) -> State:
    """Every variable's initial value at every position; head outputs start undefined."""
    state: State = []
    for pos, tok in enumerate(tokens):
        if not 0 <= tok < program.input_range:
            raise RasplabError(
                f"token id {tok} at position {pos} is outside the input range [0, {program.input_range})"
            )
        if program.position_range is not None and pos >= program.position_range:
            raise RasplabError(
                f"input of length {len(tokens)} exceeds the program's position_range {program.position_range}"
            )
        row = {n: v.initial(tok, pos) for n, v in program.variables.items()}
        row.update({h: None for h in program.head_outputs})
        state.append(row)
    return state


def attend(program: Program, state: State) -> State:
    """Run every head on ``state`` (all heads read the same pre-attention state)."""
    n = len(state)
    out = [dict(row) for row in state]
    for name, head in program.heads.items():
        numerical = program.head_outputs[name].kind == "numerical"
        for i in range(n):
            q = state[i][head.query]
            query = q if isinstance(q, frozenset) else {q}
            selected = [
                j
                for j in range(n)
                if state[j][head.key] in query
                and (head.relative is None or (j - i) in head.relative)
                and not (program.causal and j > i)
            ]
            if numerical:
                vals = [state[j][head.value] for j in selected]
                centres = program.head_outputs[name].values
                out[i][name] = numbers.mean(vals, centres) if vals else None
            else:
                out[i][name] = state[selected[0]][head.value] if len(selected) == 1 else None
    return out


def _matches(program: Program, row: dict[str, Any], var: str, want: Any) -> bool:
    have = row[var]
    if have is None:
        return False
    spec = program.all_variables[var]
    if spec.kind == "numerical":
        return spec.possible_values()[spec.bucket(have)] == want
    return have == want


def apply_mlp(program: Program, state: State, layer: int) -> tuple[State, list[list[int]]]:
    """Fire every matching rule at every position; two writes to one variable is an error, and
    so (``program.undefined == "raise"``, checked first) is a rule that would fire but for an
    atom on an undefined value.

    ``layer`` is the layer's number as traces show it (the first layer is 1)."""
    if program.undefined == "raise":
        for pos, row in enumerate(state):
            for rule in program.rules:
                missing = [v for v, _ in rule.lhs if row[v] is None]
                defined = [(v, val) for v, val in rule.lhs if row[v] is not None]
                if missing and all(_matches(program, row, v, val) for v, val in defined):
                    raise RasplabError(undefined_read(rule, missing[0], layer, pos))
    out, fired = [], []
    for pos, row in enumerate(state):
        new = dict(row)
        hits: list[int] = []
        writer: dict[str, int] = {}
        for idx, rule in enumerate(program.rules):
            if all(_matches(program, row, v, val) for v, val in rule.lhs):
                if rule.var in writer:
                    other = program.rules[writer[rule.var]]
                    raise RasplabError(
                        f"rules conflict on {rule.var!r} at layer {layer}, position {pos}: "
                        f"[{other}] and [{rule}]"
                    )
                writer[rule.var] = idx
                hits.append(idx)
                new[rule.var] = rule.new
        for h in program.head_outputs:
            new[h] = None
        out.append(new)
        fired.append(hits)
    return out, fired


def run_reference(
    program: Program, tokens: list[int], max_layers: int | None = None
) -> ReferenceRun:
    """Run ``program`` on one token-id sequence until it halts or runs ``max_layers`` layers."""
    limit = program.max_layers if max_layers is None else max_layers
    state = initial_state(program, list(tokens))
    run = ReferenceRun(output=[], layers=0)
    halted = False
    while run.layers < limit and not halted:
        attended = attend(program, state)
        state, fired = apply_mlp(program, attended, run.layers + 1)
        run.after_attention.append(attended)
        run.after_mlp.append(state)
        run.fired.append(fired)
        run.layers += 1
        h = program.halt
        halted = h is not None and all(row[h.var] == h.value for row in state)
    if program.halt is not None and not halted:
        raise RasplabError(f"program {program.name!r} did not halt within {limit} layers")
    run.output = [row[program.output] for row in state]
    return run
