"""Weights of a planned RASP program, in numpy: residual layout, embeddings, heads, MLPs.

Residual stream (width D): ``one`` (1 everywhere), the BOS token's dim, a one-hot per
categorical SOp over its value set (``label:value``), one dim per numerical SOp (``label``),
and one dim per SelectorWidth for its attention output. Every SOp's dims are zero at the
BOS position (BOS has no token value and no index; every MLP unit is off there).

Attention (score scale ``M``): query i scores key j ``M`` per satisfied Select of the
selector's conjunction; BOS scores ``M (n - 1/2)`` (Aggregate: it wins only where nothing is
selected, and its values are zero: empty categorical = None, empty numerical = 0) or
``M n`` (SelectorWidth: BOS always counts, and its ``1/(k+1)`` share, read from the BOS dim,
tells k). Every score ``M/2 = 40`` below the row's best gets weight ``e^-40`` < 2^-57.

MLPs: categorical inputs use one unit per value (pair of values for a SequenceMap) that is 1
exactly there; a numerical input ``x`` over sorted values ``x_1 < ... < x_m`` uses a constant
unit and a two-unit step between each neighbour pair, each step saturating a quarter-gap away
from both values, so ``f`` is exact on every value the program can produce. Float32 error is
bounded along the way (:class:`Errors`); a step too narrow for it is refused, naming the SOp.

>>> from rasplab.rasp import rasp, lib
>>> from rasplab.rasp_compiler.plan import make_plan
>>> w = build_weights(make_plan(lib.make_hist(), {"a", "b"}, 3))
>>> w.labels[:5], w.width, len(w.layers)  # doctest: +ELLIPSIS
(['one', 'tokens:BOS', 'tokens:a', 'tokens:b', 'hist_...:0'], 9, 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rasplab.rasp import rasp
from rasplab.rasp_compiler.plan import Leaf, Plan, refuse

ONE, BOS = 0, 1


def score_scale(max_seq_len: int) -> float:
    """``M``: one satisfied Select's score. A score ``M/2`` below the best weighs
    ``e^(-M/2)``; with every position that low, the total stays below ``2^-26``.

    >>> score_scale(20)
    44.0
    """
    return 2.0 * math.ceil(math.log(max_seq_len + 1) + 26 * math.log(2))


@dataclass(frozen=True)
class Slot:
    """An SOp's dims: ``start`` and its sorted values (one dim each if categorical)."""

    start: int
    values: tuple
    numerical: bool

    @property
    def width(self) -> int:
        return 1 if self.numerical else len(self.values)

    def index(self, value) -> int | None:
        """The dim of ``value`` (categorical), or None if it is not a possible value."""
        for i, v in enumerate(self.values):
            if v == value and type(v) is type(value):
                return self.start + i
        for i, v in enumerate(self.values):
            if v == value:
                return self.start + i
        return None


@dataclass
class Head:
    """One attention head: ``W_Q``/``W_K`` ``[D, dk]``, ``W_V`` ``[D, dv]``, ``W_O`` ``[dv, D]``."""

    sop: rasp.SOp
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray


@dataclass
class Layer:
    """One transformer layer: heads, then an MLP ``W1 [D, F]``, ReLU, ``W2 [F, D]``."""

    heads: list[Head] = field(default_factory=list)
    W1: np.ndarray | None = None
    W2: np.ndarray | None = None
    mlp_sops: list[rasp.SOp] = field(default_factory=list)


@dataclass
class Weights:
    """Everything the torch model needs, plus the layout to decode every SOp."""

    labels: list[str]
    slots: dict[int, Slot]
    token_embed: np.ndarray  # [V + 1, D]: vocabulary tokens, then BOS
    pos_embed: np.ndarray  # [max_seq_len + 1, D]: position 0 is BOS
    layers: list[Layer]
    errors: dict[int, float]

    @property
    def width(self) -> int:
        return len(self.labels)


class Errors:
    """Bounds on each SOp's rounding error (``eps``: the dtype's unit roundoff): a categorical
    SOp's largest one-hot deviation, a numerical SOp's absolute error. Keyed by ``id(sop)``;
    a SelectorWidth's attention output by ``-id(sop)``."""

    def __init__(self, plan: Plan, eps: float) -> None:
        self.plan, self.eps = plan, eps
        self.m = score_scale(plan.max_seq_len)
        self.bound: dict[int, float] = {}
        self.off: dict[int, float] = {}  # categorical: largest error of an absent value's dim

    def attention(self, leaves: list[Leaf]) -> float:
        """Relative error of an attention weight: twice the worst difference between the
        scores of two selected keys (a query's own error scales all its scores alike), plus
        the softmax's rounding and the sum over positions."""
        score = 0.0
        for leaf in leaves:
            nq, nk = leaf.table.shape
            k, q = id(leaf.keys), id(leaf.queries)
            score += self.bound[k] + nk * self.off.get(k, 0.0) + nq * self.off.get(q, 0.0)
        return 2 * self.m * score + (self.plan.max_seq_len + 2) * self.eps


def _layout(plan: Plan) -> tuple[list[str], dict[int, Slot], dict[int, int]]:
    labels = ["one", "tokens:BOS"]
    slots: dict[int, Slot] = {}
    temp: dict[int, int] = {}
    ordered = sorted(plan.order, key=lambda s: (s is not rasp.tokens, s is not rasp.indices))
    for sop in ordered:
        vals = plan.values[id(sop)].values
        numerical = rasp.is_numerical(sop)
        slots[id(sop)] = Slot(len(labels), vals, numerical)
        if numerical:
            labels.append(sop.label)
        else:
            labels.extend(f"{sop.label}:{v}" for v in vals)
        if isinstance(sop, rasp.SelectorWidth):
            temp[id(sop)] = len(labels)
            labels.append(f"{sop.label}_selector_width_attn_output")
    return labels, slots, temp


def _local(slot: Slot, value) -> np.ndarray:
    """The slot's own dims of ``value`` (zero for None or an impossible value)."""
    vec = np.zeros(slot.width)
    if value is None:
        return vec
    if slot.numerical:
        vec[0] = float(value)
    else:
        at = slot.index(value)
        if at is not None:
            vec[at - slot.start] = 1.0
    return vec


def _encode(slot: Slot, value, width: int) -> np.ndarray:
    """The residual vector of ``value`` in ``slot`` (zero for None)."""
    vec = np.zeros(width)
    vec[slot.start : slot.start + slot.width] = _local(slot, value)
    return vec


def _embeddings(plan: Plan, slots: dict[int, Slot], width: int) -> tuple[np.ndarray, np.ndarray]:
    tok = np.zeros((len(plan.vocab) + 1, width))
    tok[:, ONE] = 1.0
    tok[-1, BOS] = 1.0
    tslot = slots.get(id(rasp.tokens))
    for t, value in enumerate(plan.vocab):
        if tslot is not None:
            tok[t] += _encode(tslot, value, width)
        for sop in plan.order:
            if isinstance(sop, rasp.Full):
                tok[t] += _encode(slots[id(sop)], sop.fill, width)
    pos = np.zeros((plan.max_seq_len + 1, width))
    islot = slots.get(id(rasp.indices))
    if islot is not None:
        for i in range(plan.max_seq_len):
            pos[i + 1] = _encode(islot, i, width)
    return tok, pos


def _head(plan: Plan, w: Weights, sop: rasp.SOp, temp: dict[int, int], err: Errors) -> Head:
    leaves = plan.leaves[id(sop)]
    d, m, eps = w.width, err.m, err.eps
    dk = sum(leaf.table.shape[1] for leaf in leaves) + 1
    wq, wk = np.zeros((d, dk)), np.zeros((d, dk))
    col = 0
    for leaf in leaves:
        q, k = w.slots[id(leaf.queries)], w.slots[id(leaf.keys)]
        nq, nk = leaf.table.shape
        wq[q.start : q.start + nq, col : col + nk] = m * leaf.table
        wk[k.start + np.arange(nk), col + np.arange(nk)] = 1.0
        col += nk
    width_head = isinstance(sop, rasp.SelectorWidth)
    wq[ONE, col] = m * (len(leaves) if width_head else len(leaves) - 0.5)
    wk[BOS, col] = 1.0
    omega = err.attention(leaves)
    out = w.slots[id(sop)]
    if width_head:
        wv, wo = np.zeros((d, 1)), np.zeros((1, d))
        wv[BOS, 0], wo[0, temp[id(sop)]] = 1.0, 1.0
        err.bound[-id(sop)] = omega + 2 * eps
    elif rasp.is_numerical(sop):
        src = w.slots[id(sop.sop)]
        wv, wo = np.zeros((d, 1)), np.zeros((1, d))
        if src.numerical:
            wv[src.start, 0] = 1.0
        else:
            wv[src.start : src.start + src.width, 0] = [float(v) for v in src.values]
        wo[0, out.start] = 1.0
        scale = max([abs(float(v)) for v in src.values], default=0.0)
        inner = err.bound[id(sop.sop)]
        if not src.numerical:
            inner += src.width * err.off.get(id(sop.sop), 0.0)
        err.bound[id(sop)] = (omega + 2 * eps) * scale + inner
    else:
        src = w.slots[id(sop.sop)]
        wv, wo = np.zeros((d, src.width)), np.zeros((src.width, d))
        wv[src.start + np.arange(src.width), np.arange(src.width)] = 1.0
        wo[np.arange(src.width), out.start + np.arange(out.width)] = 1.0
        err.bound[id(sop)] = err.bound[id(sop.sop)] + omega + 2 * eps
        err.off[id(sop)] = err.off.get(id(sop.sop), 0.0) + 2.0**-26 + 2 * eps
    return Head(sop, wq, wk, wv, wo)


def _steps(
    sop: rasp.SOp, xs: tuple, col: int, d: int, err_in: float, outs: np.ndarray, at: int, eps: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Discretising MLP: input dim ``col`` holds one of the sorted values ``xs``; the output
    dims ``at:at + w`` get ``outs[i]`` (``[m, w]``) at ``xs[i]``. Returns ``W1 [D, F]``,
    ``W2 [F, D]`` and the output's error bound.

    Between neighbours ``lo < hi`` where the output changes, a step ``[x > t]`` (``t`` the
    midpoint, ramp half-width ``r = (hi - lo) / 2``) is two units
    ``relu(z + 1/2) - relu(z - 1/2)`` with ``z = (x - t) / r``: 0 at or below ``lo``, 1 at or
    above ``hi``, with slack ``r / 2`` for input error. Where x is far from t both units are
    either 0 (exact) or large (their difference rounds), so each step faces whichever side
    has the smaller reach, writing ``[x < t] = 1 - [x > t]`` when the values below t are
    closer than those above.
    """
    floats = np.array([float(x) for x in xs])
    w = outs.shape[1]
    deltas = np.diff(outs, axis=0)
    steps = np.flatnonzero(np.abs(deltas).sum(axis=1) > 0)
    w1, w2 = np.zeros((d, 1 + 2 * len(steps))), np.zeros((1 + 2 * len(steps), d))
    w1[ONE, 0], w1[BOS, 0] = 1.0, -1.0  # constant unit: 1, except 0 at BOS
    base = outs[0].copy()
    coord_err = np.zeros(w)
    for n, i in enumerate(steps):
        lo, hi = floats[i], floats[i + 1]
        t, r = (lo + hi) / 2, (hi - lo) / 2
        up, down = (floats[-1] - t) / r, (t - floats[0]) / r
        noise = err_in + eps * (abs(floats[-1]) + abs(floats[0]) + 2 * abs(t) + r)
        if not noise / r < 0.25:
            raise refuse(
                sop,
                f"its input values {xs[i]!r} and {xs[i + 1]!r} are too close to tell apart "
                f"(gap {hi - lo:.3g}, error bound {noise:.3g}); shorten max_seq_len or "
                "compile with dtype=torch.float64",
            )
        delta = deltas[i]
        sign = 1.0 if up <= down else -1.0  # +1: units read [x > t]; -1: [x < t]
        if sign < 0:
            base = base + delta
        for j, shift in enumerate((0.5, -0.5)):
            u = 1 + 2 * n + j
            w1[col, u] = sign / r
            w1[ONE, u] = -sign * t / r + shift
            w1[BOS, u] = -(abs(t / r) + 1.0 / r + 2.0)  # off at BOS, where |x| <= 1
            w2[u, at : at + w] = (1.0 if j == 0 else -1.0) * sign * delta
        coord_err += np.abs(delta) * 4 * eps * (min(up, down) + 1 + noise / r)
    w2[0, at : at + w] = base
    coord_err += eps * (np.abs(base) + 1)
    return w1, w2, float(coord_err.max(initial=0.0))


def _apply(f, *args):
    try:
        return f(*args)
    except ArithmeticError:
        return None


def _mlp(plan: Plan, w: Weights, sop: rasp.SOp, temp: dict[int, int], err: Errors):
    """``(W1, W2)`` of the MLP computing ``sop``; records its error bound.

    A categorical input's unit for value v is ``relu(x_v)`` when the dims of absent values
    are exactly 0, else ``relu(2 x_v - 1)``; a SequenceMap's for the pair (v, u) is
    ``relu(2 x_v + 2 y_u - 3)``: each is exactly 0 unless v (and u) are present, so small
    one-hot errors of the inputs do not add up."""
    d, out, eps = w.width, w.slots[id(sop)], err.eps
    enc = lambda v: _local(out, v)  # noqa: E731
    scale = 1.0 if not out.numerical else max([abs(float(v)) for v in out.values], default=1.0)
    if isinstance(sop, rasp.SelectorWidth):
        n = plan.max_seq_len
        xs = tuple(1.0 / (k + 1) for k in range(n, -1, -1))
        outs = np.array([enc(k) for k in range(n, -1, -1)])
        w1, w2, e = _steps(sop, xs, temp[id(sop)], d, err.bound[-id(sop)], outs, out.start, eps)
        err.bound[id(sop)] = err.off[id(sop)] = e
        return w1, w2
    if isinstance(sop, rasp.Map):
        src = w.slots[id(sop.inner)]
        if src.numerical:
            outs = np.array([enc(_apply(sop.f, x)) for x in src.values])
            e_in = err.bound[id(sop.inner)]
            w1, w2, e = _steps(sop, src.values, src.start, d, e_in, outs, out.start, eps)
            err.bound[id(sop)] = err.off[id(sop)] = e
            return w1, w2
        units = [(i, enc(_apply(sop.f, v))) for i, v in enumerate(src.values)]
        units = [(i, vec) for i, vec in units if vec.any()]
        w1, w2 = np.zeros((d, len(units))), np.zeros((len(units), d))
        clean = err.off.get(id(sop.inner), 0.0) == 0.0  # absent values' dims exactly 0
        gain = 1.0 if clean else 2.0
        for u, (i, vec) in enumerate(units):
            w1[src.start + i, u], w1[ONE, u] = gain, 1.0 - gain
            w2[u, out.start : out.start + out.width] = vec
        err.bound[id(sop)] = (gain * err.bound[id(sop.inner)] + 2 * eps) * scale
        return w1, w2
    a, b = w.slots[id(sop.fst)], w.slots[id(sop.snd)]
    if isinstance(sop, rasp.LinearSequenceMap) and out.numerical:
        return _linear(sop, a, b, out, d, err)
    units = []
    for i, x in enumerate(a.values):
        for j, y in enumerate(b.values):
            vec = enc(_apply(sop.f, x, y))
            if vec.any():
                units.append((i, j, vec))
    w1, w2 = np.zeros((d, len(units))), np.zeros((len(units), d))
    for u, (i, j, vec) in enumerate(units):
        w1[a.start + i, u] += 2.0
        w1[b.start + j, u] += 2.0
        w1[ONE, u] = -3.0
        w2[u, out.start : out.start + out.width] = vec
    both = err.bound[id(sop.fst)] + err.bound[id(sop.snd)]
    err.bound[id(sop)] = (2 * both + 3 * eps) * scale
    return w1, w2


def _linear(sop: rasp.LinearSequenceMap, a: Slot, b: Slot, out: Slot, d: int, err: Errors):
    """``fst_fac * x + snd_fac * y`` through units that pass each input through exactly."""
    cols: list[tuple[np.ndarray, float]] = []  # (first-layer column, output weight)
    bound = 0.0
    for slot, fac, child in ((a, sop.fst_fac, sop.fst), (b, sop.snd_fac, sop.snd)):
        scale = max([abs(float(v)) for v in slot.values], default=0.0)
        width = 1 if slot.numerical else slot.width
        bound += abs(fac) * (width * err.bound[id(child)] * max(scale, 1.0) + 4 * err.eps * scale)
        if slot.numerical:
            for sign in (1.0, -1.0):
                col = np.zeros(d)
                col[slot.start] = sign
                cols.append((col, sign * fac))
        else:
            for i, v in enumerate(slot.values):
                col = np.zeros(d)
                col[slot.start + i] = 1.0
                cols.append((col, fac * float(v)))
    w1, w2 = np.zeros((d, len(cols))), np.zeros((len(cols), d))
    for u, (col, weight) in enumerate(cols):
        w1[:, u], w2[u, out.start] = col, weight
    err.bound[id(sop)] = bound
    return w1, w2


def build_weights(plan: Plan, eps: float = 2.0**-24) -> Weights:
    """Layout, embeddings and every layer's heads and MLP for ``plan``; ``eps`` is the unit
    roundoff of the dtype the model will run in (float32's by default)."""
    labels, slots, temp = _layout(plan)
    tok, pos = _embeddings(plan, slots, len(labels))
    w = Weights(labels, slots, tok, pos, [Layer() for _ in range(plan.layers)], {})
    err = Errors(plan, eps)
    for sop in plan.order:
        at = plan.sublayer[id(sop)]
        if at == 0:
            err.bound[id(sop)] = 0.0
            continue
        if isinstance(sop, (rasp.Aggregate, rasp.SelectorWidth)):
            head_at = at - 1 if isinstance(sop, rasp.SelectorWidth) else at
            w.layers[(head_at - 1) // 2].heads.append(_head(plan, w, sop, temp, err))
        if not isinstance(sop, rasp.Aggregate):
            layer = w.layers[(at - 1) // 2]
            w1, w2 = _mlp(plan, w, sop, temp, err)
            layer.W1 = w1 if layer.W1 is None else np.concatenate([layer.W1, w1], axis=1)
            layer.W2 = w2 if layer.W2 is None else np.concatenate([layer.W2, w2], axis=0)
            layer.mlp_sops.append(sop)
        if not rasp.is_numerical(sop) and err.bound[id(sop)] > 0.1:
            raise refuse(
                sop,
                f"rounding could flip its one-hot (error bound {err.bound[id(sop)]:.3g}); "
                "shorten max_seq_len or compile with dtype=torch.float64",
            )
        if rasp.is_numerical(sop):
            _check_decodable(sop, slots[id(sop)], err.bound[id(sop)])
    w.errors = {k: v for k, v in err.bound.items() if k > 0}
    return w


def _check_decodable(sop: rasp.SOp, slot: Slot, bound: float) -> None:
    xs = sorted(float(v) for v in slot.values)
    gaps = [hi - lo for lo, hi in zip(xs, xs[1:])]
    if gaps and bound >= min(gaps) / 3:
        raise refuse(
            sop,
            f"its values lie {min(gaps):.3g} apart, too close to decode (error bound "
            f"{bound:.3g}); shorten max_seq_len or compile with dtype=torch.float64",
        )
