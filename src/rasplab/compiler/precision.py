"""Derived constants: which numerical values can occur, where the MLP's steps go, how steep.

A rule atom on a numerical variable matches a *bucket* (``Var.bucket``: bucket i is
``(mid(v[i-1], v[i]), mid(v[i], v[i+1])]``). The compiled MLP tests ``x > mid`` with a
clipped-ReLU step, so it needs a gap around every boundary that no occurring value enters.
This module computes, exactly (rational arithmetic), the values that can occur:

* an ordinary numerical variable holds its initial values (default, per token, per position
  below the maximum length) or a value some rule writes: a finite set;
* a numerical head holds the mean of k >= 1 such values, k <= the maximum length: a subset of
  the lattice ``{n / (D k)}`` (D the common denominator), searched per k for the nearest
  points below and above each boundary.

A value equal to a boundary belongs to the lower bucket, as in the interpreter. Given the
nearest occurring values ``lo <= mid < hi`` and an error bound ``e`` on the compiled value
(float rounding, see :func:`error_bound`), the step is ``clip(A (x - (lo+hi)/2))`` with
``A = 2 / ((hi-lo)/2 - e)``: exactly 0 for ``x <= lo + e`` and exactly 1 for ``x >= hi - e``.
It is feasible in a dtype when ``(hi - lo)/2 >= 2e``.

>>> from fractions import Fraction as F
>>> mean_gap([F(0), F(1)], F(1, 2), 4)  # means k/n of 0/1 values around 1/2
(Fraction(1, 2), Fraction(2, 3))
>>> rational(0.1), rational(-2.75)
(Fraction(1, 10), Fraction(-11, 4))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from rasplab.lang.numbers import exact

UNIT_ROUNDOFF = {"float32": 2.0**-24, "float64": 2.0**-53}
DTYPES = ("float32", "float64")


def rational(x: float) -> Fraction:
    """The exact value a float stands for: :func:`rasplab.lang.numbers.exact` (the
    interpreters bucket with the same values)."""
    return exact(x)


def power_of_two_above(m: float) -> float:
    """The smallest power of two >= max(m, 1) (scaling by it is exact in floating point)."""
    return 2.0 ** max(0, math.ceil(math.log2(max(m, 1.0) * (1 + 1e-9))))


def finite_gap(values: list[Fraction], t: Fraction) -> tuple[Fraction | None, Fraction | None]:
    """Nearest values ``lo <= t < hi`` in a finite set (None when that side is empty)."""
    lo = max((v for v in values if v <= t), default=None)
    hi = min((v for v in values if v > t), default=None)
    return lo, hi


def mean_gap(
    values: list[Fraction], t: Fraction, max_k: int
) -> tuple[Fraction | None, Fraction | None]:
    """Nearest possible means ``lo <= t < hi`` of 1..max_k values drawn from ``values``.

    Uses the lattice superset: with D the common denominator and N = D * values, a sum of k
    values is ``k*min(N) + g*j`` (g = gcd of the differences), 0 <= j <= k*(max-min)/g.
    """
    vals = sorted(set(values))
    if len(vals) == 1:
        return finite_gap(vals, t)
    den = math.lcm(*(v.denominator for v in vals))
    nums = [int(v * den) for v in vals]
    nmin, nmax = nums[0], nums[-1]
    g = math.gcd(*(n - nmin for n in nums[1:]))
    p, q = t.numerator, t.denominator
    lo: Fraction | None = None
    hi: Fraction | None = None
    for k in range(1, max_k + 1):
        jmax = k * (nmax - nmin) // g
        j_lo = (p * den * k - k * nmin * q) // (q * g)  # largest j with mean <= t
        if j_lo >= 0:
            cand = Fraction(k * nmin + g * min(j_lo, jmax), den * k)
            lo = cand if lo is None or cand > lo else lo
        j_hi = max(j_lo + 1, 0)
        if j_hi <= jmax:
            cand = Fraction(k * nmin + g * j_hi, den * k)
            hi = cand if hi is None or cand < hi else hi
    return lo, hi


@dataclass(frozen=True)
class Step:
    """``clip(weight * x + bias)``: 1 iff x is above boundary ``index`` of a numerical slot."""

    weight: float
    bias: float
    lo: float | None
    hi: float | None
    margin: dict  # dtype -> (hi-lo)/2 - 2e (>= 0 where exact)


def error_bound(dtype: str, magnitude: float, terms: int) -> float:
    """Rounding bound for a value of size ``magnitude`` built from ``terms`` float operations."""
    return UNIT_ROUNDOFF[dtype] * magnitude * (terms + 4)


def representation_error(x: float, dtype: str) -> float:
    """How far ``x`` moves when stored in ``dtype``."""
    if dtype == "float64":
        return 0.0
    return abs(float(np.float32(x)) - x)


def make_step(
    lo: Fraction | None, hi: Fraction | None, errors: dict[str, float], dtype: str
) -> Step:
    """The step for one boundary, steep enough for the error bound of ``dtype``."""
    if hi is None:
        return Step(
            0.0, 0.0, None if lo is None else float(lo), None, {d: math.inf for d in DTYPES}
        )
    if lo is None:
        return Step(0.0, 1.5, None, float(hi), {d: math.inf for d in DTYPES})
    half = float(hi - lo) / 2
    margins = {}
    for d, e in errors.items():
        e = e + 4 * UNIT_ROUNDOFF[d] * (abs(float(lo)) + abs(float(hi)))
        margins[d] = half - 2 * e
    e = errors[dtype] + 4 * UNIT_ROUNDOFF[dtype] * (abs(float(lo)) + abs(float(hi)))
    weight = 2.0 / (half - e) if half > e else 2.0 / half
    centre = float((lo + hi) / 2)
    return Step(weight, -weight * centre, float(lo), float(hi), margins)
