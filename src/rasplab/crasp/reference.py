"""A naive C-RASP interpreter written directly from Definition 8: the differential-test oracle.

One string at a time, one position at a time, plain Python integers and booleans; a counting
operation at position i literally counts the positions ``j = 1..i`` of the string where
``R(i, j)`` and ``P(j)`` hold (quadratic in the length); position 0 is the start position, the
value of every operation on the empty prefix, and is never counted. It shares nothing with the batched interpreter but the
program format.

>>> from rasplab.crasp.build import Q, count, offset, crasp_program
>>> p = crasp_program("t", count(Q("a"), offset(1)) >= 1, alphabet="ab")
>>> reference_run(p, ["a", "b", "a"])[p.output]
[False, False, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence

from rasplab.crasp.ir import CraspProgram
from rasplab.tasks.base import BOS


def reference_run(program: CraspProgram, symbols: Sequence[str]) -> dict[str, list]:
    """Every operation's value at positions ``0..n`` of ``<bos> symbols``."""
    word = [BOS, *symbols]
    val: dict[str, list] = {op.name: [] for op in program.ops}
    for i in range(len(word)):
        for op in program.ops:
            val[op.name].append(_value(op, val, word, i))
    return val


def _value(op, val: dict[str, list], word: list[str], i: int):
    """The value of ``op`` at position ``i`` (arguments already known at positions <= i)."""
    x = [val[a][i] for a in op.args]
    k = op.kind
    if k == "initial":
        return word[i] == op.symbol
    if k in ("bool_const", "count_const"):
        return op.value
    if k == "not":
        return not x[0]
    if k == "and":
        return all(x)
    if k == "or":
        return any(x)
    if k == "periodic":
        return op.period.holds(i)
    if k in ("compare", "compare_const"):
        left, right = x[0], (x[1] if k == "compare" else op.value)
        return {
            "<": left < right,
            "<=": left <= right,
            "==": left == right,
            "!=": left != right,
            ">": left > right,
            ">=": left >= right,
        }[op.comparison]
    if k == "count":
        p = val[op.args[0]]
        rel = op.relation
        return sum(1 for j in range(1, i + 1) if (rel is None or rel.holds(i, j)) and p[j])
    if k == "cond":
        return x[1] if x[0] else x[2]
    if k == "add":
        return x[0] + x[1]
    return x[0] - x[1]


def reference_accepts(program: CraspProgram, symbols: Sequence[str]) -> bool:
    """Acceptance: the last Boolean operation at the last position."""
    return bool(reference_run(program, symbols)[program.output][-1])
