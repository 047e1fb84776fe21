"""Batched attention heads for the fast interpreter, vectorised over sequences and positions.

Each head picks one of four exact strategies (all give the reference's results bit for bit):

* ``shift`` — a relative mask with few offsets: for each offset o compare position i with
  position i+o by shifting whole ``[B, T]`` arrays (O(B·T) per offset, no ``[B, T, T]``);
* ``histogram`` — a categorical query without mask or causal restriction: count the keys per
  value with ``bincount`` and look the query up (O(B·T + B·R));
* ``set histogram`` — the same for a set query: per-sequence key histograms ``[B, R]`` times
  the query sets' membership matrix ``[R, S]`` give every set's count and sum ``[B, S]``;
* ``dense`` — everything else (causal mode, wide masks, large set tables): a ``[B, T, T]``
  selection.

Numerical means must equal the reference's, which adds the selected values in ascending key
position. The shift, histogram and dense-loop strategies add in that order. The set histogram
and the dense matmul add in another order, so they are used only when the sum is *exact* in
any order (:func:`exact_sums`: every value a multiple of 2^-20 and every sequence's sum of
magnitudes below 2^32, so every partial sum is representable): then any order gives the
reference's floats. Otherwise the set histogram falls back to dense, and dense to the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rasplab.lang import numbers
from rasplab.lang.arrays import UNDEFINED, SetTable
from rasplab.lang.heads import HeadSpec
from rasplab.lang.program import Program

MAX_SHIFT_OFFSETS = 16
"""Relative masks with more usable offsets than this use the dense strategy."""
SET_HISTOGRAM_COST = 8
"""A set query uses the set histogram while ``R * S <= SET_HISTOGRAM_COST * T * T``."""
_EXACT_SCALE = 2.0**20  # values must be multiples of 1 / _EXACT_SCALE ...
_EXACT_LIMIT = 2.0**52  # ... and every sequence's |sum| times _EXACT_SCALE below this
_CHUNK_ELEMENTS = 1 << 22  # [b, T, T] float64 blocks of the dense matmul: 32 MiB at most


@dataclass(frozen=True)
class HeadPlan:
    """A head with what the batched kernels need to know about it."""

    name: str
    head: HeadSpec
    numerical: bool
    key_range: int
    query_table: SetTable | None  # set query: the query variable's interned sets
    centres: tuple | None  # numerical output with at least two buckets: their centres


def plan_heads(program: Program, tables: dict[str, SetTable]) -> list[HeadPlan]:
    """One :class:`HeadPlan` per head, in program order."""
    plans = []
    for name, head in program.heads.items():
        q = program.variables[head.query]
        plans.append(
            HeadPlan(
                name,
                head,
                program.head_outputs[name].kind == "numerical",
                program.variables[head.key].range,
                tables.get(head.query) if q.kind == "set" else None,
                _centres(program.head_outputs[name]),
            )
        )
    return plans


def _centres(spec) -> tuple | None:
    many = spec.kind == "numerical" and spec.values is not None and len(spec.values) > 1
    return spec.values if many else None


def run_heads(
    plans: list[HeadPlan], state: dict[str, np.ndarray], valid: np.ndarray, causal: bool
) -> dict[str, np.ndarray]:
    """Every head's output ``[B, T]`` read from ``state`` (``valid`` [B, T] marks real positions)."""
    out = {}
    for p in plans:
        h = p.head
        query, key, value = state[h.query], state[h.key], state[h.value]
        t = valid.shape[1]
        offsets = None
        if h.relative is not None:
            offsets = sorted(o for o in h.relative if abs(o) < t and not (causal and o > 0))
        if t == 0:  # every sequence is empty: nothing to select
            none = np.zeros(query.shape, dtype=np.int64)
            out[p.name] = _finish(p, none, none.astype(np.float64) if p.numerical else none)
        elif offsets is not None and len(offsets) <= MAX_SHIFT_OFFSETS:
            out[p.name] = _shift_head(p, query, key, value, valid, offsets)
        elif offsets is None and p.query_table is None and not causal:
            out[p.name] = _histogram_head(p, query, key, value, valid)
        else:
            masked = np.where(valid, value, 0.0) if p.numerical else None
            exact = masked is not None and exact_sums(masked)
            if offsets is None and not causal and _small_sets(p, t) and (exact or not p.numerical):
                out[p.name] = _set_histogram_head(p, query, key, value, valid)
            else:
                out[p.name] = _dense_head(p, query, key, value, valid, causal, masked, exact)
        if p.centres is not None:
            _exact_at_boundaries(p, out[p.name], query, key, value, valid, causal)
    return out


def _exact_at_boundaries(p: HeadPlan, mean, query, key, value, valid, causal) -> None:
    """Replace, in place, each float mean near a bucket boundary by the float of the exact
    mean (:mod:`rasplab.lang.numbers`), so that it falls in the exact mean's bucket."""
    close = numbers.near(mean, numbers.float_boundaries(p.centres)) & valid
    for b, i in np.argwhere(close).tolist():
        j = np.flatnonzero(valid[b])
        member = p.query_table.membership()[query[b, i]] if p.query_table is not None else None
        sel = key[b, j] == query[b, i] if member is None else member[key[b, j]]
        if p.head.relative is not None:
            sel &= np.isin(j - i, np.fromiter(p.head.relative, dtype=np.int64))
        if causal:
            sel &= j <= i
        mean[b, i] = float(numbers.exact_mean(value[b, j[sel]].tolist()))


def _small_sets(p: HeadPlan, t: int) -> bool:
    """A set query whose histogram product ``[R, S]`` costs less than the ``[T, T]`` selection."""
    sets = 0 if p.query_table is None else len(p.query_table.sets)
    return 0 < p.key_range * sets <= SET_HISTOGRAM_COST * t * t


def exact_sums(masked: np.ndarray) -> bool:
    """Whether adding any selection of ``masked`` [B, T] (padding already 0) along T is exact.

    True when every value is a finite multiple of 2^-20 and each sequence's sum of magnitudes,
    times 2^20, stays below 2^52: every partial sum, in any order, is then such a multiple
    below 2^52 and is represented exactly, so every order gives the same float.
    """
    if not masked.size:
        return True
    scaled = masked * _EXACT_SCALE  # a power of two: exact unless it overflows
    if not np.isfinite(scaled).all() or not (scaled == np.floor(scaled)).all():
        return False
    return float(np.abs(scaled).sum(axis=1).max()) < _EXACT_LIMIT


def _shift(a: np.ndarray, o: int, fill) -> np.ndarray:
    """``out[:, i] = a[:, i + o]`` where that exists, else ``fill``."""
    t = a.shape[1]
    out = np.full_like(a, fill)
    if o >= 0:
        out[:, : t - o] = a[:, o:]
    else:
        out[:, -o:] = a[:, : t + o]
    return out


def _selected(p: HeadPlan, query: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``[B, T]`` bool: key (already aligned with each query position) lies in the query."""
    if p.query_table is None:
        return key == query
    member = p.query_table.membership()  # [S, R]
    return member[query, key]


def _shift_head(p, query, key, value, valid, offsets) -> np.ndarray:
    """Relative head: accumulate over the mask's offsets in ascending key position."""
    count = np.zeros(query.shape, dtype=np.int64)
    acc = np.zeros(query.shape) if p.numerical else np.full(query.shape, UNDEFINED, dtype=np.int64)
    for o in offsets:
        sel = _shift(valid, o, False) & _selected(p, query, _shift(key, o, 0))
        count += sel
        v = _shift(value, o, 0)
        if p.numerical:
            acc += np.where(sel, v, 0.0)
        else:
            acc = np.where(sel, v, acc)
    return _finish(p, count, acc)


def _histogram_head(p, query, key, value, valid) -> np.ndarray:
    """Categorical query, no mask: per-sequence key histograms (bincount is sequential in j)."""
    b, _ = query.shape
    r = p.key_range
    base = (np.arange(b, dtype=np.int64) * r)[:, None]
    flat = (base + key)[valid]
    counts = np.bincount(flat, minlength=b * r)
    qf = base + query
    count = counts[qf]
    if p.numerical:
        sums = np.bincount(flat, weights=value[valid], minlength=b * r)
        return _finish(p, count, sums[qf])
    store = np.full(b * r, UNDEFINED, dtype=np.int64)
    store[flat] = value[valid]  # duplicates only where count > 1, which is undefined anyway
    return _finish(p, count, store[qf])


def _set_histogram_head(p, query, key, value, valid) -> np.ndarray:
    """Set query, no mask, not causal: key histograms ``[B, R]`` @ membership ``[R, S]``.

    Counts and categorical values are small integers, so the float matmul is exact; numerical
    sums come here only when :func:`exact_sums` holds.
    """
    b, _ = query.shape
    r = p.key_range
    member = p.query_table.membership().T.astype(np.float64)  # [R, S]
    flat = ((np.arange(b, dtype=np.int64) * r)[:, None] + key)[valid]
    counts = np.bincount(flat, minlength=b * r).reshape(b, r)
    rows = np.arange(b)[:, None]
    count = (counts.astype(np.float64) @ member)[rows, query].astype(np.int64)
    if p.numerical:
        sums = np.bincount(flat, weights=value[valid], minlength=b * r).reshape(b, r)
        return _finish(p, count, (sums @ member)[rows, query] + 0.0)
    store = np.zeros(b * r, dtype=np.int64)
    store[flat] = value[valid]  # a key value held at two positions has count > 1: zeroed next
    single = np.where(counts == 1, store.reshape(b, r), 0).astype(np.float64)
    # where count == 1, exactly one key value of the set is present, once: the sum is its value
    acc = (single @ member)[rows, query].astype(np.int64)
    return _finish(p, count, acc)


def _dense_head(p, query, key, value, valid, causal, masked, exact) -> np.ndarray:
    """General head through a ``[B, T(i), T(j)]`` selection matrix."""
    b, t = query.shape
    if p.query_table is None:
        sel = key[:, None, :] == query[:, :, None]
    else:
        member = p.query_table.membership()  # [S, R]
        sel = member[query[:, :, None], key[:, None, :]]
    sel &= valid[:, None, :]
    if causal or p.head.relative is not None:
        i, j = np.arange(t)[:, None], np.arange(t)[None, :]
        allowed = np.ones((t, t), dtype=bool)
        if causal:
            allowed &= j <= i
        if p.head.relative is not None:
            allowed &= np.isin(j - i, np.fromiter(p.head.relative, dtype=np.int64))
        sel &= allowed[None]
    count = np.count_nonzero(sel, axis=2)
    if p.numerical and exact:  # any order gives the reference's sums: batched matmul in blocks
        acc = np.empty((b, t))
        step = max(1, _CHUNK_ELEMENTS // max(1, t * t))
        for lo in range(0, b, step):
            block = sel[lo : lo + step].astype(np.float64)  # [b, T, T]
            acc[lo : lo + step] = np.matmul(block, masked[lo : lo + step, :, None])[..., 0]
        return _finish(p, count, acc + 0.0)  # + 0.0: a -0.0 sum becomes 0.0, as in Python
    if p.numerical:
        acc = np.zeros((b, t))
        by_key = np.ascontiguousarray(sel.transpose(0, 2, 1))  # [B, T(j), T(i)]
        for j in range(t):  # one key position at a time: the reference's summation order
            np.add(acc, masked[:, j : j + 1], out=acc, where=by_key[:, j])
        return _finish(p, count, acc)
    first = sel.argmax(axis=2)
    return _finish(p, count, np.take_along_axis(value, first, axis=1))


def _finish(p: HeadPlan, count: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """Mean (numerical) or the unique value (categorical); undefined where not defined."""
    if p.numerical:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, acc / np.maximum(count, 1), np.nan)
    return np.where(count == 1, acc, UNDEFINED)
