"""The explorer's data for one program on one input: interpreter and compiled weights side by side.

Two independent computations are lined up step by step (step 0 = the embedding, then per
layer "after attention" and "after MLP"):

1. the batched interpreter's residual-stream trace (:func:`rasplab.lang.interpreter.interpret`),
   its rules fired, and per head the positions its selection picks (read off the state the
   head saw: ``key[j] in query[i]``, the relative mask, the causal mask);
2. the compiled transformer run layer by layer on real weights: the residual decoded with the
   layout after every sub-layer, each compiled head's softmax weights (computed from
   ``W_Q``, ``W_K``, the mask bias and the sink, exactly as the model does), and the rules
   read off the MLP's rule units.

Every cell, every rule fired and every head's selected positions is marked agree/disagree
(``summary["all_agree"]`` says whether all of them agree). The page data is compact: rows of cells are strings
(values separated by spaces) interned in one table, attention rows are sparse
``"j:weight"`` lists interned in another, so a weight-shared loop costs little per layer.

>>> from rasplab.programs import get_program
>>> data = program_view(get_program("parity_sequential_relative"), "1 0 1")
>>> data["summary"]["all_agree"], data["summary"]["layers"], len(data["steps"])
(True, 3, 7)
>>> [data["rows"][i] for i in data["steps"][-1]["interp"][data["output_index"]:][:1]]
['0 1 1 0']
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from rasplab.compiler.layout import INVALID, decode_columns
from rasplab.compiler.model import CompiledTransformer, valid_mask
from rasplab.compiler.verify import compile_for
from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram

ATTENTION_FLOOR = 1e-3
"""Attention weights below this are left out of the page (the compiled softmax is hard: its
unselected weights are exactly 0)."""


def cell(value) -> str:
    """One value as the page shows it: ``-`` undefined, ``!`` not a valid encoding."""
    if value is None:
        return "-"
    if value is INVALID:
        return "!"
    if isinstance(value, frozenset):
        return "{" + ",".join(str(v) for v in sorted(value)) + "}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _same(a, b, tol: float = 1e-6) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if a is INVALID or b is INVALID:
        return False
    return a == b


class _Interner:
    """Strings -> small ids, so repeated rows are stored once."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._ids: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        idx = self._ids.get(text)
        if idx is None:
            idx = self._ids[text] = len(self.items)
            self.items.append(text)
        return idx


def compiled_steps(model: CompiledTransformer, ids: Sequence[int], max_layers: int | None = None):
    """Run the compiled model on one sequence, keeping per layer the raw residual after
    attention and after the MLP, each head's attention weights ``[H, T, T+1]`` (last column:
    the sink) and the rules fired per position. Stops after the halting layer."""
    dtype = model.default_dtype()
    t = len(ids)
    tokens = torch.tensor([list(ids)], dtype=torch.long)
    lengths = torch.tensor([t])
    x = model.embed(tokens, lengths).to(dtype)
    limit = model.spec["max_layers"] if max_layers is None else max_layers
    offsets = model.spec["head_offsets"]
    bias = model.mask_bias(offsets, t, dtype) if offsets else None
    out = {"initial": x[0].clone(), "layers": []}
    with torch.no_grad():
        for _ in range(limit):
            weights = None
            if offsets:
                q = torch.einsum("td,hdk->htk", x[0], model.W_Q.to(dtype))
                k = torch.einsum("td,hdk->htk", x[0], model.W_K.to(dtype))
                scores = torch.cat(
                    [q @ k.transpose(1, 2), model.sink.to(dtype)[:, None, None].expand(-1, t, 1)],
                    dim=2,
                )
                weights = torch.softmax(scores + bias, dim=-1)
            xa = model.attend_(x.clone())
            xm = xa.clone()
            h3 = model.mlp_(xm)
            xm.mul_(valid_mask(lengths, t))
            fired = (h3[model.rule_units].T > 0.5).tolist()
            out["layers"].append(
                {
                    "attention": xa[0].clone(),
                    "mlp": xm[0].clone(),
                    "weights": weights,
                    "fired": [[r for r, f in enumerate(row) if f] for row in fired],
                }
            )
            x = xm
            if model.spec["halt"] is not None and bool(model.halted(x, lengths)[0]):
                break
    return out


def _selected(program: Program, group: list[str], state: dict, t: int) -> list[list[int]]:
    """Positions the interpreter's head (first of the compiled group) selects, per query:
    ``key[j] in query[i]``, ``j - i`` in the relative mask, ``j <= i`` when causal."""
    head = program.heads[group[0]]
    keys, queries = state[head.key], state[head.query]
    rel = np.arange(t)[None, :] - np.arange(t)[:, None]  # [T, T]: j - i
    allowed = np.ones((t, t), dtype=bool)
    if head.relative is not None:
        allowed &= np.isin(rel, sorted(head.relative))
    if program.causal:
        allowed &= rel <= 0
    matches: dict = {}  # query value -> which keys it matches
    rows = []
    for i, q in enumerate(queries):
        if q not in matches:
            query = q if isinstance(q, frozenset) else {q}
            matches[q] = np.array([k in query for k in keys], dtype=bool)
        rows.append(np.flatnonzero(matches[q] & allowed[i]).tolist())
    return rows


# long: one pass over the interpreter's and the compiled model's states fills the steps,
# the interned rows and the all_agree flag together; the page dict is built from all three
def program_view(
    entry: LibraryProgram | None,
    text: str,
    program: Program | None = None,
    max_layers: int | None = None,
    ids: list[int] | None = None,
) -> dict:
    """Page data for ``entry``'s program (or ``program``, inputs as token ids) on ``text``,
    or on the token ids ``ids`` (``text`` then only names them in the title)."""
    program = entry.program() if program is None else program
    if ids is None:
        ids = list(entry.encode(text)) if entry is not None else _token_ids(program, text)
    if not ids:
        raise RasplabError("the input is empty; give at least one token")
    model = compile_for(program, [len(ids)])
    run = interpret(program, [ids], trace=True, max_layers=max_layers, errors="mark")
    if run.errors and run.errors[0]:
        raise RasplabError(f"the interpreter cannot run this input: {run.errors[0]}")
    trace = run.traces[0]
    comp = compiled_steps(model, ids, max_layers)
    layout = model.layout
    names = list(trace.kinds)
    t = len(ids)
    rows, att_rows = _Interner(), _Interner()

    def decoded(x: torch.Tensor) -> dict:
        return decode_columns(layout, x, names)

    interp_states = [("initial", 0, trace.initial)]
    comp_states = [decoded(comp["initial"])]
    for k, lt in enumerate(trace.layers, start=1):
        interp_states += [("attention", k, lt.after_attention), ("mlp", k, lt.after_mlp)]
    for lc in comp["layers"]:
        comp_states += [decoded(lc["attention"]), decoded(lc["mlp"])]
    groups = model.spec["head_groups"]
    steps, all_agree = [], len(interp_states) == len(comp_states)
    empty = {n: [None] * t for n in names}
    for s in range(max(len(interp_states), len(comp_states))):
        stage, layer, ivals = (
            interp_states[s]
            if s < len(interp_states)
            else (("attention", "mlp")[(s - 1) % 2], (s + 1) // 2, empty)
        )
        cvals = comp_states[s] if s < len(comp_states) else empty
        step = {"stage": stage, "layer": layer, "interp": [], "diff": {}}
        for vi, name in enumerate(names):
            step["interp"].append(rows(" ".join(cell(v) for v in ivals[name])))
            bad = {
                str(p): cell(c)
                for p, (a, c) in enumerate(zip(ivals[name], cvals[name]))
                if not _same(a, c)
            }
            if bad:
                step["diff"][str(vi)] = bad
                all_agree = False
        if stage == "mlp":
            ifired = trace.layers[layer - 1].fired if layer <= len(trace.layers) else None
            cl = comp["layers"][layer - 1] if layer <= len(comp["layers"]) else None
            step["fired"] = [",".join(map(str, f)) for f in ifired] if ifired else None
            step["fired_compiled"] = [",".join(map(str, f)) for f in cl["fired"]] if cl else None
            if step["fired"] != step["fired_compiled"]:
                all_agree = False
        if stage == "attention":
            before = interp_states[s - 1][2] if s - 1 < len(interp_states) else empty
            cl = comp["layers"][layer - 1] if layer <= len(comp["layers"]) else None
            heads = []
            for h, group in enumerate(groups):
                selected = _selected(program, group, before, t)
                weights = None
                if cl is not None and cl["weights"] is not None:
                    w = cl["weights"][h].numpy()
                    rows_i, cols_j = np.nonzero(w[:, :t] >= ATTENTION_FLOOR)
                    picked = [[] for _ in range(t)]
                    for i, j in zip(rows_i.tolist(), cols_j.tolist()):
                        picked[i].append(j)
                    if picked != selected:
                        all_agree = False
                    weights = [
                        att_rows(" ".join(f"{j}:{float(w[i, j]):.3g}" for j in picked[i]))
                        for i in range(t)
                    ]
                heads.append(
                    {
                        "selected": [att_rows(" ".join(map(str, r))) for r in selected],
                        "weights": weights,
                    }
                )
            step["heads"] = heads
        steps.append(step)
    halt = model.spec["halt"]
    variables = [
        {
            "name": n,
            "kind": trace.kinds[n],
            "head": n in program.head_outputs,
            "output": n == program.output,
        }
        for n in names
    ]
    return {
        "kind": "program",
        "title": f"{program.name}: {text}",
        "program": program.name,
        "input": text,
        "tokens": [str(i) for i in ids],
        "variables": variables,
        "output_index": names.index(program.output),
        "rules": {str(r): str(program.rules[r]) for r in sorted(_fired_rules(steps))},
        "heads": [
            {
                "name": "+".join(g),
                "query": program.heads[g[0]].query,
                "key": program.heads[g[0]].key,
                "values": [program.heads[n].value for n in g],
                "relative": None
                if program.heads[g[0]].relative is None
                else sorted(program.heads[g[0]].relative),
            }
            for g in groups
        ],
        "steps": steps,
        "rows": rows.items,
        "attention_rows": att_rows.items,
        "summary": {
            "layers": len(trace.layers),
            "compiled_layers": len(comp["layers"]),
            "halted_at": len(trace.layers) if halt is not None else None,
            "halting": halt is not None,
            "all_agree": all_agree,
            "output": " ".join(cell(v) for v in interp_states[-1][2][program.output]),
        },
    }


def _fired_rules(steps: list[dict]) -> set[int]:
    """Indices of the rules that fired anywhere (only their text goes into the page)."""
    out: set[int] = set()
    for step in steps:
        for key in ("fired", "fired_compiled"):
            for cell_text in step.get(key) or []:
                out.update(int(r) for r in cell_text.split(",") if r)
    return out


def _token_ids(program: Program, text: str) -> list[int]:
    """Token ids from ``"0 1 1"`` (for programs without a library entry)."""
    try:
        ids = [int(tok) for tok in text.split()]
    except ValueError as err:
        raise RasplabError(
            f"input {text!r}: a program without a library entry takes token ids, e.g. '0 1 1'"
        ) from err
    for pos, tok in enumerate(ids):
        if not 0 <= tok < program.input_range:
            raise RasplabError(
                f"token id {tok} at position {pos} is outside the input range "
                f"[0, {program.input_range})"
            )
    return ids
