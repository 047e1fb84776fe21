"""Value sets: every value each SOp can hold, inferred from the vocabulary as Tracr does.

``tokens`` holds the vocabulary, ``indices`` ``0..max_seq_len-1``, ``SelectorWidth``
``0..max_seq_len``; a Map or SequenceMap holds ``f`` of every (pair of) input value(s) (an
``ArithmeticError`` drops that value, as in Tracr); a categorical Aggregate holds its input's
values. A numerical Aggregate holds every mean of 1 to ``max_seq_len`` input values (and its
empty-selection default): where Tracr assumes 0/1 inputs and lists only ``v / n``, this lists
``k / n`` too, which is what ``make_frac_prevs`` produces. Each set also says whether the SOp
can be None (a categorical Aggregate over an empty selection, or anything computed from one).

>>> from rasplab.rasp import rasp, lib
>>> prog = lib.make_frac_prevs(rasp.tokens == "x")
>>> infer_values(prog, {"x", "y"}, 3)[id(prog)].values
(0.0, 0.3333333333333333, 0.5, 0.6666666666666666, 1.0)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rasplab.rasp import rasp
from rasplab.rasp.graph import nodes
from rasplab.rasp.rasp import RaspError, RASPExpr

MAX_VALUES = 20_000
"""The most values one SOp may hold (a bigger set is refused, naming the SOp)."""


@dataclass(frozen=True)
class ValueSet:
    """The non-None values an SOp can hold, sorted, and whether it can also be None."""

    values: tuple
    may_none: bool = False


def value_order(v: Any) -> tuple:
    """A sort key putting numbers (and bools) first, then strings, then the rest by repr.

    >>> sorted([3, "a", True, (1, 2), 0.5], key=value_order)
    [0.5, True, 3, 'a', (1, 2)]
    """
    if isinstance(v, (bool, int, float)):
        return (0, float(v), "")
    if isinstance(v, str):
        return (1, 0.0, v)
    return (2, 0.0, repr(v))


def _sorted(expr: RASPExpr, values: Iterable[Any]) -> tuple:
    out: list = []
    seen: set = set()
    for v in values:
        try:
            new = v not in seen
        except TypeError:
            raise RaspError(
                f"{expr.name!r} produces the unhashable value {v!r}; RASP values must be "
                "hashable (use a tuple, not a list)"
            ) from None
        if new:
            seen.add(v)
            out.append(v)
    if len(out) > MAX_VALUES:
        raise RaspError(
            f"{expr.name!r} can hold {len(out)} values (more than {MAX_VALUES}); "
            "shrink the vocabulary or max_seq_len"
        )
    return tuple(sorted(out, key=value_order))


def merge_close(values: tuple) -> tuple:
    """Numbers that differ only by float rounding (relative 1e-9) kept once, the first.

    >>> merge_close((0.3, 0.30000000000000004, 0.5, "a"))
    (0.3, 0.5, 'a')
    """
    out: list = []
    for v in values:
        if out and _close(out[-1], v):
            continue
        out.append(v)
    return tuple(out)


def _close(a: Any, b: Any) -> bool:
    numbers = (bool, int, float)
    if not (isinstance(a, numbers) and isinstance(b, numbers)) or a == b:
        return False
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)), abs(float(b)))


def _apply(f: Callable, args: tuple) -> tuple[bool, Any]:
    """``(True, f(*args))``, or ``(False, None)`` where f raises an ArithmeticError."""
    try:
        return True, f(*args)
    except ArithmeticError:
        return False, None


def _mapped(expr: RASPExpr, f: Callable, inputs: list[ValueSet]) -> ValueSet:
    results = []
    none = any(s.may_none for s in inputs)
    for args in itertools.product(*(s.values for s in inputs)):
        ok, y = _apply(f, args)
        if ok and y is None:
            none = True
        elif ok:
            results.append(y)
    out = _sorted(expr, results)
    return ValueSet(merge_close(out) if rasp.is_numerical(expr) else out, none)


def _means(expr: RASPExpr, values: tuple, max_seq_len: int) -> list:
    """Every mean of 1..max_seq_len values drawn (with repeats) from ``values``."""
    for v in values:
        if not isinstance(v, (bool, int, float)):
            raise RaspError(f"numerical Aggregate {expr.name!r} averages the non-number {v!r}")
    exact = [Fraction(v) for v in values]
    sums = {Fraction(0)}
    means: set = set()
    for n in range(1, max_seq_len + 1):
        sums = {s + v for s in sums for v in exact}
        if len(sums) > MAX_VALUES:
            raise RaspError(
                f"numerical Aggregate {expr.name!r} can take more than {MAX_VALUES} means; "
                "shrink max_seq_len or its input's value set"
            )
        means.update(float(s / n) for s in sums)
    return list(means)


def infer_values(program: RASPExpr, vocab: Iterable[Any], max_seq_len: int) -> dict[int, ValueSet]:
    """Every SOp's :class:`ValueSet` keyed by ``id(sop)``."""
    if max_seq_len < 1:
        raise RaspError(f"max_seq_len must be at least 1, got {max_seq_len}")
    out: dict[int, ValueSet] = {}
    for expr in nodes(program):
        if isinstance(expr, rasp.SOp):
            out[id(expr)] = _infer_one(expr, out, vocab, max_seq_len)
    return out


def _infer_one(expr: rasp.SOp, sets: dict, vocab: Iterable[Any], n: int) -> ValueSet:
    if isinstance(expr, rasp.TokensType):
        return ValueSet(_sorted(expr, vocab))
    if isinstance(expr, rasp.IndicesType):
        return ValueSet(tuple(range(n)))
    if isinstance(expr, rasp.LengthType):
        return ValueSet(tuple(range(1, n + 1)))
    if isinstance(expr, rasp.SelectorWidth):
        return ValueSet(tuple(range(n + 1)))
    if isinstance(expr, rasp.Full):
        return ValueSet(() if expr.fill is None else (expr.fill,), expr.fill is None)
    if isinstance(expr, rasp.ConstantSOp):
        vals = [v for v in expr.value if v is not None]
        return ValueSet(_sorted(expr, vals), len(vals) < len(expr.value))
    if isinstance(expr, rasp.Map):
        return _mapped(expr, expr.f, [sets[id(expr.inner)]])
    if isinstance(expr, rasp.SequenceMap):
        return _mapped(expr, expr.f, [sets[id(expr.fst)], sets[id(expr.snd)]])
    if isinstance(expr, rasp.Aggregate):
        inner = sets[id(expr.sop)]
        if rasp.is_numerical(expr):
            empty = 0 if expr.default is None else expr.default
            return ValueSet(merge_close(_sorted(expr, [*_means(expr, inner.values, n), empty])))
        if expr.default is None:
            return ValueSet(inner.values, True)
        return ValueSet(_sorted(expr, [*inner.values, expr.default]), inner.may_none)
    raise RaspError(f"cannot infer the values of {expr!r}")
