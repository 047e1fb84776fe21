"""Array encoding of variable values for the batched interpreter (one ``[B, T]`` array each).

* categorical: int64, ``-1`` = undefined (only head outputs can be undefined);
* numerical: float64, ``NaN`` = undefined;
* set: int64 index into the variable's :class:`SetTable` (every set that can occur is interned).

For rule matching each variable also has *match codes*: the categorical value, the numerical
bucket index, or the index of the set in the variable's ``values``; anything that can match no
atom (undefined, out of range, a set not among ``values``) gets the code ``radix``.

>>> from rasplab.lang.variables import numeric_var
>>> spec = numeric_var(values=(-1.0, 0.0, 1.0))
>>> match_codes(spec, np.array([[-0.5, -0.4, float("nan"), 7.0]]), None).tolist()
[[0, 1, 3, 2]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rasplab.lang.numbers import bucket_codes
from rasplab.lang.variables import Var

UNDEFINED = -1
"""The categorical (and set-index) array value meaning "undefined"."""


class SetTable:
    """The sets a set variable can hold, interned to small ints, with a membership matrix."""

    def __init__(self, spec: Var):
        self.spec = spec
        self.sets: list[frozenset] = []
        self.index: dict[frozenset, int] = {}
        self._membership: np.ndarray | None = None
        self._codes: np.ndarray | None = None
        for s in spec.values or ():
            self.intern(s)
        self.intern(spec.default)

    def intern(self, value: frozenset) -> int:
        """The id of ``value`` (added on first sight)."""
        value = frozenset(value)
        idx = self.index.get(value)
        if idx is None:
            idx = self.index[value] = len(self.sets)
            self.sets.append(value)
            self._membership = self._codes = None
        return idx

    def membership(self) -> np.ndarray:
        """``[S, R]`` bool: set id s contains member r."""
        if self._membership is None:
            m = np.zeros((len(self.sets), self.spec.range), dtype=bool)
            for i, s in enumerate(self.sets):
                m[i, sorted(s)] = True
            self._membership = m
        return self._membership

    def codes(self) -> np.ndarray:
        """``[S]`` int64: each set id's index in ``spec.values`` (``len(values)`` if absent)."""
        if self._codes is None:
            allowed = {s: i for i, s in enumerate(self.spec.values or ())}
            self._codes = np.array(
                [allowed.get(s, len(allowed)) for s in self.sets], dtype=np.int64
            )
        return self._codes


def radix(spec: Var) -> int:
    """How many distinct values a rule atom on ``spec`` can name."""
    return spec.range if spec.kind == "categorical" else len(spec.possible_values())


def undefined_array(spec: Var, shape: tuple[int, ...]) -> np.ndarray:
    """An all-undefined array for a head output of kind ``spec.kind``."""
    if spec.kind == "numerical":
        return np.full(shape, np.nan)
    return np.full(shape, UNDEFINED, dtype=np.int64)


def encode_value(spec: Var, value: Any, table: SetTable | None) -> int | float:
    """One Python value as its array entry."""
    if spec.kind == "set":
        return table.intern(value)
    return float(value) if spec.kind == "numerical" else int(value)


def initial_array(
    spec: Var, tokens: np.ndarray, token_values: tuple | None, table: SetTable | None
) -> np.ndarray:
    """``[B, T]`` initial values of a non-head variable for padded ``tokens`` ``[B, T]``."""
    _, t = tokens.shape
    dtype = np.float64 if spec.kind == "numerical" else np.int64
    if spec.init == "token":
        lut = np.array([encode_value(spec, v, table) for v in token_values], dtype=dtype)
        return lut[tokens]
    if spec.init == "position":
        row = np.array(
            [encode_value(spec, spec.initial(0, p), table) for p in range(t)], dtype=dtype
        )
        return np.broadcast_to(row, tokens.shape).copy()
    return np.full(tokens.shape, encode_value(spec, spec.default, table), dtype=dtype)


def match_codes(spec: Var, values: np.ndarray, table: SetTable | None) -> np.ndarray:
    """Rule-matching codes in ``[0, radix]`` (``radix`` = matches nothing), same shape."""
    r = radix(spec)
    if spec.kind == "categorical":
        return np.where((values >= 0) & (values < r), values, r)
    if spec.kind == "set":
        return table.codes()[values]
    return bucket_codes(spec.possible_values(), values)


def to_python(spec: Var, row: np.ndarray, table: SetTable | None) -> list:
    """A row of array entries as Python values (``None`` for undefined)."""
    if spec.kind == "numerical":
        return [None if np.isnan(x) else float(x) for x in row.tolist()]
    if spec.kind == "set":
        return [None if x < 0 else table.sets[x] for x in row.tolist()]
    return [None if x < 0 else x for x in row.tolist()]
