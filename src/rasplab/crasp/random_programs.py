"""Random C-RASP programs for differential tests (interpreter vs reference, compiled vs
interpreted).

A random program draws ``size`` operations one at a time, each of a random kind whose
arguments are drawn among the operations already made (so the list is in topological order
by construction), over an alphabet of a few symbols. Every kind of Definition 8 occurs: initial,
constants, NOT/AND/OR, periodic predicates, count-vs-count and count-vs-constant comparisons,
counting with and without local relations, conditionals, addition, subtraction. The last
operation is a Boolean (the output). ``periodic=False`` / ``local=False`` restrict the class.

>>> rng = np.random.default_rng(0)
>>> p = random_program(rng, size=12)
>>> len(p.ops), p.ops[-1].sort
(12, 'bool')
>>> random_program(rng, periodic=False, local=False).crasp_class
'C-RASP[]'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rasplab.crasp.ir import COMPARISONS, CraspProgram, Op, Periodic, Relation
from rasplab.errors import RasplabError


def random_program(
    rng: np.random.Generator,
    size: int = 10,
    alphabet: Sequence[str] = ("a", "b", "c"),
    periodic: bool = True,
    local: bool = True,
    max_constant: int = 3,
) -> CraspProgram:
    """A random valid program of ``size`` operations (see the module docstring)."""
    if size < 2:
        raise RasplabError(f"a random program needs size >= 2, got {size}")
    symbols = tuple(alphabet)
    ops: list[Op] = [Op("q0", "initial", symbol=str(rng.choice(list(symbols))))]
    bools, counts = ["q0"], []
    for k in range(1, size):
        name = f"v{k}"
        last = k == size - 1
        kinds = ["initial", "bool_const", "not", "and", "or", "compare_const", "count"]
        kinds += ["count_rel"] * local + ["periodic"] * periodic
        if counts:
            kinds += ["compare", "cond", "add", "sub", "compare_const", "compare_const"]
        if not last:
            kinds += ["count", "count", "count_const"]
        else:
            kinds = [x for x in kinds if x in ("not", "and", "or", "compare", "compare_const")]
        kind = str(rng.choice(kinds))
        pick_b = lambda: bools[int(rng.integers(len(bools)))]  # noqa: E731
        pick_c = lambda: counts[int(rng.integers(len(counts)))]  # noqa: E731
        const = lambda: int(rng.integers(-max_constant, max_constant + 1))  # noqa: E731
        cmp = str(rng.choice(COMPARISONS))
        if kind == "compare_const" and not counts:
            kind = "count" if not last else "not"
        if kind == "initial":
            op = Op(name, kind, symbol=str(rng.choice(list(symbols))))
        elif kind == "bool_const":
            op = Op(name, kind, value=bool(rng.integers(2)))
        elif kind == "not":
            op = Op(name, kind, (pick_b(),))
        elif kind in ("and", "or"):
            op = Op(name, kind, tuple(pick_b() for _ in range(int(rng.integers(2, 4)))))
        elif kind == "periodic":
            m = int(rng.integers(1, 5))
            res = frozenset(int(r) for r in rng.choice(m, size=int(rng.integers(1, m + 1))))
            op = Op(name, kind, period=Periodic(m, res))
        elif kind == "compare":
            op = Op(name, kind, (pick_c(), pick_c()), comparison=cmp)
        elif kind == "compare_const":
            op = Op(name, kind, (pick_c(),), comparison=cmp, value=abs(const()))
        elif kind == "count":
            op = Op(name, kind, (pick_b(),))
        elif kind == "count_rel":
            offs = frozenset(int(d) for d in rng.choice(4, size=int(rng.integers(1, 3))))
            op = Op(name, "count", (pick_b(),), relation=Relation(offs))
        elif kind == "cond":
            op = Op(name, kind, (pick_b(), pick_c(), pick_c()))
        elif kind in ("add", "sub"):
            op = Op(name, kind, (pick_c(), pick_c()))
        else:  # count_const
            op = Op(name, kind, value=const())
        ops.append(op)
        (bools if op.sort == "bool" else counts).append(name)
    return CraspProgram("random", tuple(alphabet), tuple(ops))


def random_strings(
    rng: np.random.Generator, alphabet: Sequence[str], count: int, max_length: int
) -> list[tuple[str, ...]]:
    """``count`` random strings with lengths uniform in ``0..max_length``."""
    out = []
    for n in rng.integers(0, max_length + 1, size=count).tolist():
        out.append(tuple(alphabet[int(x)] for x in rng.integers(len(alphabet), size=n)))
    return out
