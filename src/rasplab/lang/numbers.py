"""Exact numbers for numerical variables: one bucket semantics for interpreter and compiler.

A numerical value written in a program (``0.1``, ``-0.6``) stands for the simple fraction it
was typed as (1/10, -3/5), a numerical head's output is the exact mean of such fractions, and
bucket boundaries are the exact midpoints of neighbouring bucket centres; a value equal to a
boundary belongs to the lower bucket. The compiled model is built on these exact values
(:mod:`rasplab.compiler.precision`), so the interpreters use them too: they compute in float
and recompute exactly wherever a float lands within :data:`NEAR` of a boundary, where float
rounding could pick the other bucket.

>>> exact(0.1), exact(-2.75)
(Fraction(1, 10), Fraction(-11, 4))
>>> (-0.6 + 1.1) / 2 > 0.25          # float rounding puts this mean above the boundary ...
True
>>> exact_mean([-0.6, 1.1]) == Fraction(1, 4)   # ... the exact mean is on it
True
>>> bucket((0.0, 0.5), 0.25), bucket((0.0, 0.5), 0.2500001)
(0, 1)
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from fractions import Fraction

import numpy as np

NEAR = 1e-6
"""Relative distance to a boundary within which buckets are decided in exact arithmetic."""


def format_number(x: float) -> str:
    """How rules, traces and messages print a number, one format everywhere: Python's own
    short form when it has at most 8 characters, else the simple fraction the float is (the
    mean of typed values: ``1/3``), else the full ``repr`` (never rounded, so two different
    values never print the same).

    >>> [format_number(v) for v in (1.0, 0.125, -0.6, 1 / 3, 2 / 3, 0.123456789)]
    ['1.0', '0.125', '-0.6', '1/3', '2/3', '0.123456789']
    """
    text = repr(float(x))
    if len(text) <= 8 or not math.isfinite(x):
        return text
    frac = Fraction(x).limit_denominator(10_000)
    if float(frac) == x:
        return f"{frac.numerator}/{frac.denominator}"
    return text


def exact(x: float) -> Fraction:
    """The simple fraction a float stands for (``0.1`` -> 1/10), else its exact binary value."""
    if not math.isfinite(x):
        raise ValueError(f"non-finite value {x}")
    simple = Fraction(x).limit_denominator(1 << 20)
    return simple if float(simple) == x else Fraction(x)


def exact_mean(values: Iterable[float]) -> Fraction:
    """The exact mean of the fractions ``values`` stand for (at least one value)."""
    vals = [exact(float(v)) for v in values]
    return sum(vals, Fraction(0)) / len(vals)


def mean(values: Sequence[float], centres: Sequence[float] | None) -> float:
    """A numerical head's output: the float mean of ``values``, or the float of the exact mean
    where the float lies near a boundary of the buckets ``centres`` (None: no buckets)."""
    m = sum(values) / len(values)
    if centres is not None and near(np.array([m]), float_boundaries(centres)).any():
        return float(exact_mean(values))
    return m


def boundaries(centres: Sequence[float]) -> list[Fraction]:
    """Exact midpoints between neighbouring bucket centres."""
    return [(exact(a) + exact(b)) / 2 for a, b in zip(centres[:-1], centres[1:])]


def bucket(centres: Sequence[float], x: float) -> int:
    """Bucket index of ``x`` among ``centres``: bucket i is (boundary i-1, boundary i]."""
    return bisect_left(boundaries(centres), exact(x))


def float_boundaries(centres: Sequence[float]) -> np.ndarray:
    """The boundaries as floats (for the fast path; exact ties are settled by :func:`near`)."""
    c = np.asarray(centres, dtype=np.float64)
    return (c[:-1] + c[1:]) / 2


def near(values: np.ndarray, mids: np.ndarray) -> np.ndarray:
    """Bool mask, same shape as ``values``: within :data:`NEAR` (relative) of some boundary."""
    if not len(mids) or not values.size:
        return np.zeros(values.shape, dtype=bool)
    idx = np.searchsorted(mids, values)
    last = len(mids) - 1
    below, above = mids[np.clip(idx - 1, 0, last)], mids[np.clip(idx, 0, last)]
    closest = np.minimum(np.abs(values - below), np.abs(values - above))
    with np.errstate(invalid="ignore"):
        return closest <= NEAR * np.maximum(1.0, np.abs(values))


def bucket_codes(centres: Sequence[float], values: np.ndarray) -> np.ndarray:
    """Bucket index of every float in ``values`` (NaN gets ``len(centres)``), exact at ties."""
    mids = float_boundaries(centres)
    codes = np.searchsorted(mids, values, side="left")
    close = near(values, mids)
    if close.any():
        exact_mids = boundaries(centres)
        codes[close] = [bisect_left(exact_mids, exact(x)) for x in values[close].tolist()]
    return np.where(np.isnan(values), len(centres), codes)
