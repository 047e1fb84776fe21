"""``compile_program``: Program -> CompiledTransformer, step by step.

1. check that the program can be compiled (each refusal names the variable and the fix);
2. fix the maximum length (the program's ``position_range``, the caller's ``max_length``, or
   :data:`DEFAULT_MAX_LENGTH` when something depends on the length; otherwise unbounded);
3. lay out the residual stream; 4. place the numerical steps and find the exact dtypes;
5. build embeddings, attention and MLP weights; 6. wrap them in the torch module.

>>> from rasplab.lang import var, input_var, v_relative, program
>>> def step(x):
...     if x["left"] == 1:
...         x["out"] = 1
>>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
...             step, "out", 2, max_layers=1)
>>> m = compile_program(p)
>>> m.layout.width, m.spec["mlp_widths"], m.max_length
(9, [6, 5, 4], None)
"""

from __future__ import annotations

import time

import numpy as np
import torch

from rasplab.bins import MAX_LENGTH
from rasplab.compiler.attention import MATCH, attention_weights, embeddings
from rasplab.compiler.layout import Layout
from rasplab.compiler.mlp import build_mlp
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.numeric import numeric_plan, read_boundaries
from rasplab.compiler.precision import UNIT_ROUNDOFF
from rasplab.errors import RasplabError
from rasplab.lang.program import Program

DEFAULT_MAX_LENGTH = 512
"""Maximum length used when the program has length-dependent parts and no position_range."""
UNBOUNDED_LENGTH = 1 << 24
"""Longest input of a length-independent model (float32 counts selected positions exactly)."""


def check_compilable(program: Program) -> None:
    """Refuse what the construction cannot represent, naming the variable and the fix."""
    specs = program.all_variables
    for name, h in program.heads.items():
        q, k, v = (program.variables.get(n) for n in (h.query, h.key, h.value))
        if q is None or k is None or v is None:
            raise RasplabError(
                f"head {name!r} reads a head output or an unknown variable; "
                "attention may only read ordinary variables"
            )
        if q.kind == "numerical" or k.kind != "categorical" or q.range != k.range:
            raise RasplabError(
                f"head {name!r}: query {h.query!r} must be categorical or set and key "
                f"{h.key!r} categorical, with equal ranges"
            )
        if v.kind == "set":
            raise RasplabError(
                f"head {name!r}: set variable {h.value!r} cannot be an attention value; "
                "use a categorical or numerical value"
            )
    for rule in program.rules:
        for name, value in rule.lhs:
            spec = specs[name]
            if spec.kind in ("numerical", "set") and spec.values is None:
                what = "bucket centres" if spec.kind == "numerical" else "allowed sets"
                raise RasplabError(
                    f"{spec.kind} variable {name!r} is read by rule [{rule}] but has no "
                    f"`values`; give it values=(...) ({what}) so the MLP can match it"
                )
            if spec.kind == "categorical" and not 0 <= value < spec.range:
                raise RasplabError(
                    f"rule [{rule}] matches {name} == {value}, outside its range {spec.range}"
                )
        spec = specs[rule.var]
        if spec.kind == "set" and any(not 0 <= m < spec.range for m in rule.new):
            raise RasplabError(f"rule [{rule}] writes a set outside the range of {rule.var!r}")
    for role, name in (
        ("output", program.output),
        ("halt", program.halt.var if program.halt else None),
    ):
        if name is not None and (
            name not in program.variables or program.variables[name].kind != "categorical"
        ):
            raise RasplabError(f"{role} variable {name!r} must be an ordinary categorical variable")


def resolve_max_length(program: Program, max_length: int | None) -> int | None:
    """The longest input the compiled model will accept (None = unbounded)."""
    if max_length is not None:
        if not isinstance(max_length, int) or max_length < 1:
            raise RasplabError(f"max_length must be a positive int, got {max_length!r}")
        if max_length > MAX_LENGTH:  # the tables grow with it: minutes, then memory
            raise RasplabError(
                f"max_length {max_length} is beyond the longest length rasplab handles "
                f"({MAX_LENGTH:,}); give at most {MAX_LENGTH}"
            )
        if program.position_range is not None and max_length > program.position_range:
            raise RasplabError(
                f"max_length {max_length} exceeds the program's position_range "
                f"{program.position_range}"
            )
    positional = [n for n, v in program.variables.items() if v.init == "position"]
    bucketed_heads = [n for n in read_boundaries(program) if n in program.heads]
    limit = max_length or program.position_range
    if limit is None and (positional or bucketed_heads):
        limit = DEFAULT_MAX_LENGTH
    for name in positional:  # stop before the first position whose initialisation fails
        spec = program.variables[name]
        for p in range(limit):
            try:
                spec.initial(0, p)
            except Exception as err:
                if p == 0:
                    raise RasplabError(
                        f"position-initialised variable {name!r} fails at position 0: {err}"
                    ) from err
                limit = p
                break
    return limit


def compile_program(program: Program, max_length: int | None = None) -> CompiledTransformer:
    """Compile ``program`` into an exact :class:`CompiledTransformer` (see the module docstring)."""
    start = time.perf_counter()
    check_compilable(program)
    limit = resolve_max_length(program, max_length)
    layout = Layout.build(program.variables, program.head_outputs)
    plan = numeric_plan(program, limit)
    tok, pos = embeddings(program, layout, limit)
    att = attention_weights(program, layout)
    mlp = build_mlp(program, layout, plan)
    tensors = {
        "tok_emb": tok,
        "W_Q": att["W_Q"],
        "W_K": att["W_K"],
        "W_V": att["W_V"],
        "W_O": att["W_O"],
        "sink": att["sink"],
        "rule_units": mlp.rule_units,
        "rule_writes": rule_writes(program, layout),
    }
    if pos is not None:
        tensors["pos_emb"] = pos
    for k, (idx, vals, _) in enumerate(mlp.weights, start=1):
        tensors[f"mlp{k}_indices"] = idx
        tensors[f"mlp{k}_values"] = vals
    for k, b in enumerate(mlp.biases, start=1):
        tensors[f"mlp_b{k}"] = b
    scales = list(plan.scale.values()) or [1.0]
    spec = {
        "name": program.name,
        "layout": layout.to_json(),
        "variables": {n: v.kind for n, v in program.all_variables.items()},
        "heads": {
            n: {"query": h.query, "key": h.key, "value": h.value} for n, h in program.heads.items()
        },
        "head_offsets": att["offsets"],
        "head_groups": att["groups"],
        "causal": bool(program.causal),
        "halt": None if program.halt is None else [program.halt.var, int(program.halt.value)],
        "output": program.output,
        "input_range": program.input_range,
        "max_layers": program.max_layers,
        "max_length": limit,
        "exact_dtypes": list(plan.exact_dtypes),
        "notes": plan.notes,
        "rules": len(program.rules),
        "mlp_shapes": [list(shape) for _, _, shape in mlp.weights],
        "mlp_widths": mlp.widths,
        "constants": {
            "match": MATCH,
            "numeric_scale": max(scales),
            "unit_roundoff": {d: u for d, u in UNIT_ROUNDOFF.items()},
        },
    }
    model = CompiledTransformer(
        spec, {k: torch.as_tensor(np.asarray(v)) for k, v in tensors.items()}
    )
    spec["compile_seconds"] = time.perf_counter() - start
    return model


def rule_writes(program: Program, layout: Layout) -> np.ndarray:
    """``[R]`` int64: per rule, the index in ``layout.slots`` of the variable it writes (a run
    reads rule conflicts off the rule units with it)."""
    index = {s.name: i for i, s in enumerate(layout.slots)}
    return np.array([index[r.var] for r in program.rules], dtype=np.int64)


def numeric_tolerance(model: CompiledTransformer, dtype: torch.dtype, length: int) -> float:
    """Absolute tolerance for comparing decoded numerical values with the interpreter's."""
    u = model.spec["constants"]["unit_roundoff"][str(dtype).replace("torch.", "")]
    return 16 * u * model.spec["constants"]["numeric_scale"] * (length + 64)
