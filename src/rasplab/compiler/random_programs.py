"""Random programs for differential tests: compiled model == interpreter on random inputs.

A random program has a few categorical, numerical (bucket centres and values on a grid of
quarters, negative ones included, or for some programs of tenths, which binary floats
cannot hold exactly) and set variables initialised from the token, the
position or a constant; heads of random shape (categorical or set queries, relative masks,
``v_relative``, categorical or numerical values, numerical heads with their own buckets, mostly placed so that the exact mean of two values
the head can read lies exactly on a bucket boundary, where float rounding would pick either
side);
optionally causal attention and halting. Rules come from one random decision tree per
written variable (its leaves exclude each other, so rules never conflict). Halting programs
get a ``clock`` that counts layers and a ``done`` flag that random conditions may raise
early; at the last clock value every position is done, so every sequence halts.

>>> rng = np.random.default_rng(0)
>>> p, batch = random_case(rng)
>>> p.name, len(batch) > 0
('random', True)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import Rule, numeric_var, program, qkv, set_var, v_relative, var
from rasplab.lang.numbers import boundaries, exact, exact_mean
from rasplab.lang.program import Program
from rasplab.lang.variables import Var

GRID = tuple(k / 4 for k in range(-24, 25))
"""Numerical values and bucket centres are drawn from multiples of 1/4 in [-6, 6] ..."""
TENTHS = tuple(k / 10 for k in range(-30, 31))
"""... or, for some programs, from multiples of 1/10 in [-3, 3] (inexact in binary)."""


@dataclass(frozen=True)
class RandomProgramConfig:
    """Size limits of random programs and their inputs."""

    max_length: int = 8
    max_range: int = 3
    max_heads: int = 3
    max_reads: int = 2
    inputs: int = 5

    def __post_init__(self) -> None:
        for name in ("max_length", "max_range", "max_heads", "inputs"):
            if getattr(self, name) < 1:
                raise RasplabError(
                    f"RandomProgramConfig.{name} must be >= 1, got {getattr(self, name)}"
                )


def _table(rng: np.random.Generator, options: list, size: int) -> tuple:
    return tuple(options[int(i)] for i in rng.integers(0, len(options), size))


def _init(rng, kind_init: str, table: tuple):
    if kind_init == "token":
        return {"input_init_fn": table.__getitem__}
    if kind_init == "position":
        return {"position_init_fn": lambda p, t=table: t[p % len(t)]}
    return {}


def _subsets(r: int) -> list[frozenset]:
    return [frozenset(c) for n in range(r + 1) for c in itertools.combinations(range(r), n)]


def _variables(
    rng: np.random.Generator, cfg: RandomProgramConfig, vocab: int, grid: tuple
) -> dict[str, Var]:
    """Random categorical, numerical and set variables."""
    out: dict[str, Var] = {}
    for i in range(int(rng.integers(2, 5))):
        r = int(rng.integers(1, cfg.max_range + 1))
        how = str(rng.choice(["token", "position", "default"]))
        table = _table(rng, list(range(r)), 5)
        if how == "token":
            out[f"c{i}"] = Var("categorical", range=r, init="token", init_fn=table.__getitem__)
        elif how == "position":
            out[f"c{i}"] = Var(
                "categorical", range=r, init="position", init_fn=lambda p, tb=table: tb[p % len(tb)]
            )
        else:
            out[f"c{i}"] = var(r, default=table[0])
    for i in range(int(rng.integers(0, 3))):
        centres = tuple(sorted(rng.choice(grid, int(rng.integers(1, 5)), replace=False).tolist()))
        how = str(rng.choice(["token", "position", "default"]))
        table = _table(rng, list(grid[::2]) + list(centres) + list(_midpoints(centres)), 5)
        out[f"n{i}"] = numeric_var(
            values=centres,
            default=table[0],
            **_init(rng, how, tuple(table[t % 5] for t in range(max(vocab, 5)))),
        )
    if rng.random() < 0.6:
        r = int(rng.integers(1, cfg.max_range + 1))
        subsets = _subsets(r)
        allowed = tuple(
            subsets[int(i)] for i in rng.choice(len(subsets), min(3, len(subsets)), replace=False)
        )
        how = str(rng.choice(["token", "position", "default"]))
        table = _table(rng, subsets, 5)
        out["s0"] = set_var(
            r,
            values=allowed,
            default=allowed[0],
            **_init(rng, how, tuple(table[t % 5] for t in range(max(vocab, 5)))),
        )
    return out


def _midpoints(centres) -> list[float]:
    """The bucket boundaries of ``centres`` as values (a variable holding one sits on it)."""
    return [float(m) for m in boundaries(centres)]


def _occurring(spec: Var, vocab: int, cfg: RandomProgramConfig) -> list[float]:
    """The initial values a numerical variable can hold in inputs of up to max_length tokens."""
    if spec.init == "token":
        return [spec.initial(t, 0) for t in range(vocab)]
    if spec.init == "position":
        return [spec.initial(0, q) for q in range(cfg.max_length)]
    return [spec.default]


def _head_buckets(rng, grid: tuple, values: list[float]) -> tuple[float, ...]:
    """Bucket centres for a numerical head; half the time two of them straddle the exact mean
    of two values the head reads, so that mean lies exactly on their boundary."""
    if rng.random() < 0.3:
        return tuple(sorted(rng.choice(grid, int(rng.integers(1, 5)), replace=False).tolist()))
    a, b = (values[int(i)] for i in rng.integers(0, len(values), 2))
    m = exact_mean([a, b])
    d = exact(float(rng.choice(grid[len(grid) // 2 + 1 :])))  # a positive grid value
    return (float(m - d), float(m + d))


def _heads(
    rng: np.random.Generator,
    cfg: RandomProgramConfig,
    variables: dict[str, Var],
    vocab: int,
    grid: tuple,
) -> dict:
    """Random heads over the ordinary variables."""
    cats = [n for n, v in variables.items() if v.kind == "categorical"]
    values = [n for n, v in variables.items() if v.kind != "set"]
    heads = {}
    for i in range(int(rng.integers(0, cfg.max_heads + 1))):
        value = str(rng.choice(values))
        output = None
        if variables[value].kind == "numerical":
            seen = _occurring(variables[value], vocab, cfg)
            output = numeric_var(values=_head_buckets(rng, grid, seen))
        if rng.random() < 0.3:
            heads[f"h{i}"] = v_relative(value, int(rng.integers(-2, 3)), output=output)
            continue
        key = str(rng.choice(cats))
        r = variables[key].range
        queries = [
            n for n, v in variables.items() if v.kind in ("categorical", "set") and v.range == r
        ]
        sets = [n for n in queries if variables[n].kind == "set"]
        query = str(rng.choice(sets if sets and rng.random() < 0.6 else queries))
        rel = None
        if rng.random() < 0.4:
            rel = rng.choice(np.arange(-2, 3), int(rng.integers(1, 3)), replace=False).tolist()
        heads[f"h{i}"] = qkv(query, key, value, relative=rel, output=output)
    return heads


def _tree_rules(
    rng: np.random.Generator,
    cfg: RandomProgramConfig,
    name: str,
    spec: Var,
    readable: dict[str, Var],
    grid: tuple,
) -> list[Rule]:
    """One random decision tree writing ``name``: disjoint leaves, so no two rules conflict."""
    names = list(readable)
    weight = np.array([3.0 if n.startswith("h") else 1.0 for n in names])  # favour head outputs
    count = int(rng.integers(0, cfg.max_reads + 1))
    reads = [
        names[int(i)]
        for i in rng.choice(
            len(names), min(count, len(names)), replace=False, p=weight / weight.sum()
        )
    ]
    spaces = [readable[n].possible_values() for n in reads]
    rules = []
    for combo in itertools.product(*spaces):
        if rng.random() < 0.4:
            continue
        options = spec.possible_values()
        new = options[int(rng.integers(0, len(options)))]
        if spec.kind == "numerical" and rng.random() < 0.5:
            new = float(rng.choice(grid))  # a value off the bucket centres
        context = tuple(zip(reads, combo))
        olds = [dict(context)[name]] if name in reads else list(options)
        rules += [Rule(context, name, old, new) for old in olds if old != new]
    return rules


def random_program(
    rng: np.random.Generator, cfg: RandomProgramConfig = RandomProgramConfig()
) -> Program:
    """One random, valid, compilable program (see the module docstring)."""
    vocab = int(rng.integers(2, 5))
    grid = GRID if rng.random() < 0.4 else TENTHS
    variables = _variables(rng, cfg, vocab, grid)
    heads = _heads(rng, cfg, variables, vocab, grid)
    probe = program(variables, heads, [], output="c0", input_range=vocab)
    readable = probe.all_variables
    rules: list[Rule] = []
    writable = [n for n in variables if n != "relative_qk"]
    for name in rng.permutation(writable).tolist()[: int(rng.integers(1, len(writable) + 1))]:
        rules += _tree_rules(rng, cfg, name, variables[name], readable, grid)
    halt = None
    layers = int(rng.integers(1, 5))
    if rng.random() < 0.4:
        k = int(rng.integers(2, 6))
        variables = {**variables, "clock": var(k), "done": var(2)}
        cond = [n for n, v in readable.items() if v.kind == "categorical"]
        atom_var = str(rng.choice(cond))
        atom_val = int(rng.integers(0, readable[atom_var].range))
        for c in range(k - 1):
            rules.append(Rule((("clock", c),), "clock", c, c + 1))
            rules.append(Rule((("clock", c), (atom_var, atom_val)), "done", 0, 1))
        rules.append(Rule((("clock", k - 1),), "done", 0, 1))
        halt, layers = ("done", 1), k + int(rng.integers(0, 2))
    causal = bool(rng.random() < 0.3)
    position_range = cfg.max_length if rng.random() < 0.5 else None
    return program(
        variables,
        heads,
        rules,
        output="c0",
        input_range=vocab,
        position_range=position_range,
        halt=halt,
        max_layers=layers,
        causal=causal,
        name="random",
        undefined="no_match",  # the compiled model's semantics: an undefined value matches nothing
    )


def random_inputs(
    rng: np.random.Generator, p: Program, cfg: RandomProgramConfig
) -> list[list[int]]:
    """``cfg.inputs`` random token sequences of lengths 1..max_length (sometimes 0)."""
    lengths = rng.integers(0 if rng.random() < 0.1 else 1, cfg.max_length + 1, cfg.inputs)
    return [rng.integers(0, p.input_range, int(n)).tolist() for n in lengths]


def random_case(rng: np.random.Generator, cfg: RandomProgramConfig = RandomProgramConfig()):
    """``(program, batch)``: a random program and random inputs for it."""
    p = random_program(rng, cfg)
    return p, random_inputs(rng, p, cfg)
