"""The layout of a compiled C-RASP program: residual coordinates, heads and ReLU units per layer.

The construction starts from Yang & Chiang ("Counting like transformers", 2024) and Huang et
al. (Appendix B.6), with three differences: comparisons are ReLU steps exact up to the maximum
length N (B.6: Heaviside units), local counts use an additive relative bias (B.6: query/key
products of positional encodings), and the start position is cleared in each counted value
(B.6: by an extra layer). A causal softmax transformer reads ``<bos> w_1 ... w_n``; every operation's
value at position ``i`` is an affine function (a *form*: coordinate -> weight) of the residual
stream at ``i``:

* **Booleans** are 0/1 coordinates: initial operations read the token embedding, periodic
  predicates the positional encoding (one coordinate ``[i mod m = r]`` per residue used),
  constants the ``one`` coordinate; NOT is ``1 - P`` (no coordinate of its own).
* **The start position.** The model reads ``<bos>`` at position 0 (a softmax head needs a
  key to attend to); the program never counts it (:mod:`rasplab.crasp.ir`). Every counted value
  is ``v = P - P(0) tok_<bos>``: ``P(0)``, the operation's value at the start position, is the
  same for every input, so ``v`` is ``P`` on the string's symbols and exactly 0 at the start
  position, which therefore "does not contribute to the sum" (Appendix B.6).
* **Counts** are stored as ratios ``C(i) / (i+1)``. A counting operation without relation is a
  *uniform* head (every score equal): the average over ``j = 0..i`` of ``v`` is exactly
  ``#[1 <= j <= i] P(j) / (i+1)``. The uniform head reading ``tok_<bos>`` gives
  ``u = 1/(i+1)``, which scales constants (``k`` is ``k u``); addition and subtraction are sums
  of forms.
* **Local counts** ``#[j <= i, j = i-d] P(j)``: a *positional* head with an additive relative
  bias (0 on ``j = i-d``, -1500 elsewhere) and +750 on the ``<bos>`` key reads ``v(i-d)`` for
  ``i >= d`` and ``v(0) = 0`` for ``i < d``. The MLP turns the read Boolean ``b`` into a
  ratio, ``b u = ReLU(u + b - 1)``. ``d = 0`` needs no head (``b = v(i)``).
* **Comparisons** ``C1 op C2`` (and with constants): ``y = (C1 - C2)/(i+1)`` is a form; for
  the integer ``D = y (i+1)``, ``[D >= k]`` is the step ``ReLU(a + 1/2) - ReLU(a - 1/2)`` with
  ``a = 2(N+1) (y - (k - 1/2) u)``: ``|y - (k-1/2)u| >= u/2 >= 1/(2(N+1))`` for every ``i <= N``,
  so ``|a| >= 1`` and the step is exactly 0 or 1. ``==`` and ``!=`` are differences of two steps.
* **AND/OR** are one ReLU each, flattened over nested AND/OR (and NOT of the other kind, by De
  Morgan): ``AND = ReLU(sum P_k - (k-1))``, ``OR = 1 - AND(NOT P_k)``.
* **Conditionals** ``B ? C1 : C2``, flattened over nested conditionals, are two ReLUs per leaf
  with a big-M bound: ``ReLU(y - M s) - ReLU(-y - M s)`` where ``s`` counts the unsatisfied
  literals on the leaf's path and ``M`` exceeds every ``|y|``.

**Layers.** Every value has a *time*: 0 for the embeddings, ``2l - 1`` after layer ``l``'s
attention, ``2l`` after its MLP. An operation is placed as early as its arguments allow (a
count in the first attention after its Boolean is ready, an MLP operation in the first MLP
after its inputs are ready), so the number of layers is set by the nesting of counting and
nonlinear operations, never by the maximum length N. Heads of one layer with the same attention
pattern are one head (all uniform counts of a layer are one head; local reads one head per
offset), with one value dimension per count.

:mod:`rasplab.crasp_compiler.precision` bounds the float error of every coordinate as the plan is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rasplab.crasp.interpreter import run_ids
from rasplab.crasp.ir import CraspProgram, Op
from rasplab.crasp_compiler import precision as prec
from rasplab.errors import RasplabError
from rasplab.tasks.base import BOS

LOCAL_BIAS = -1500.0
"""Additive score outside a positional head's relation (exp(-750) is 0 in float64)."""
BOS_BONUS = 750.0
"""Score added to the ``<bos>`` key by a positional head: it wins when ``j = i-d`` is absent."""

Form = dict[int, float]


@dataclass
class Head:
    """One attention head: ``offset`` None = uniform (every score equal), else positional
    (relation ``j = i-offset`` plus the ``<bos>`` bonus); value dimension ``k`` reads the form
    ``values[k]`` at each key and writes the average to coordinate ``outputs[k]``."""

    offset: int | None
    values: list[Form] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)


@dataclass
class Unit:
    """One ReLU unit of a layer's MLP: ``ReLU(sum weights * x + bias)`` added to ``outputs``."""

    weights: Form
    bias: float
    outputs: Form


@dataclass
class Layer:
    """One transformer layer: its heads (uniform first) and its MLP units."""

    heads: list[Head] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)


@dataclass
class Plan:
    """Everything the model is built from (see the module docstring).

    ``forms[name]`` decodes operation ``name`` from the residual (a ratio for counts, listed in
    ``counts``); ``tokens`` maps each symbol (``<bos>`` first) to its coordinate;
    ``positional`` lists ``(coordinate, modulus, residue)``.
    """

    program: str
    alphabet: tuple[str, ...]
    max_length: int
    coords: list[str]
    tokens: dict[str, int]
    positional: list[tuple[int, int, int]]
    layers: list[Layer]
    forms: dict[str, Form]
    counts: frozenset[str]
    times: dict[str, int]
    budget: prec.Budget

    @property
    def width(self) -> int:
        """Residual width."""
        return len(self.coords)

    @property
    def heads(self) -> int:
        """Attention heads over all layers."""
        return sum(len(layer.heads) for layer in self.layers)


def attention_layer(t: int) -> int:
    """The first layer whose attention reads values ready at time ``t``."""
    return (t + 1) // 2 + 1


def mlp_layer(t: int) -> int:
    """The first layer whose MLP reads values ready at time ``t``."""
    return t // 2 + 1


def step_thresholds(comparison: str) -> tuple[list[tuple[int, float]], bool]:
    """``[D op 0]`` as a signed sum of steps ``[D >= k]``: (k, sign) pairs and whether the
    result is ``1 -`` that sum."""
    return {
        ">=": ([(0, 1.0)], False),
        ">": ([(1, 1.0)], False),
        "<": ([(0, 1.0)], True),
        "<=": ([(1, 1.0)], True),
        "==": ([(0, 1.0), (1, -1.0)], False),
        "!=": ([(0, 1.0), (1, -1.0)], True),
    }[comparison]


class _Builder:
    """Builds a :class:`Plan` operation by operation (program order is topological)."""

    def __init__(self, program: CraspProgram, max_length: int):
        self.p, self.n = program, max_length
        self.alpha = 2.0 * (max_length + 1)
        self.coords: list[str] = []
        self.err: list[float] = []  # error bound per coordinate, in units of the roundoff
        self.mag: list[float] = []  # bound on |value| per coordinate
        self.budget = prec.Budget(max_length)
        self.one = self._coord("one", 0.0, 1.0)
        self.tokens = {s: self._coord(f"tok:{s}", 0.0, 1.0) for s in (BOS, *program.alphabet)}
        self.positional: list[tuple[int, int, int]] = []
        self._pe: dict[tuple[int, int], int] = {}
        self.layers: list[Layer] = []
        self._reads: dict[tuple, int] = {}
        self._u: int | None = None
        self._leaf_cache: dict[tuple, list] = {}
        self._cond_cache: dict[str, list] = {}
        self.forms: dict[str, Form] = {}
        self.times: dict[str, int] = {}
        self.bound: dict[str, float] = {}  # |C(i)/(i+1)| <= bound, per count operation
        ids = np.zeros((1, 1), dtype=np.int64)
        self.at_start = {k: v[0, 0] for k, v in run_ids(program, ids).items()}

    # -- coordinates and forms ---------------------------------------------------------
    def _coord(self, name: str, err: float, mag: float) -> int:
        self.coords.append(name)
        self.err.append(err)
        self.mag.append(mag)
        return len(self.coords) - 1

    def ferr(self, f: Form) -> float:
        """Error bound of a form (its coordinates' errors plus the rounding of the sum)."""
        return prec.form_error(
            [(w, self.err[c], self.mag[c]) for c, w in f.items()],
        )

    def fmag(self, f: Form) -> float:
        return sum(abs(w) * self.mag[c] for c, w in f.items())

    @staticmethod
    def combine(*terms: tuple[float, Form]) -> Form:
        out: Form = {}
        for a, f in terms:
            for c, w in f.items():
                out[c] = out.get(c, 0.0) + a * w
        return {c: w for c, w in out.items() if w != 0.0}

    def layer(self, index: int) -> Layer:
        while len(self.layers) < index:
            self.layers.append(Layer())
        return self.layers[index - 1]

    def head(self, index: int, offset: int | None) -> Head:
        layer = self.layer(index)
        for h in layer.heads:
            if h.offset == offset:
                return h
        h = Head(offset)
        layer.heads.append(h)
        layer.heads.sort(key=lambda x: -1 if x.offset is None else x.offset)
        return h

    def read(self, index: int, offset: int | None, value: Form, name: str) -> int:
        """A head value dimension in layer ``index`` (shared by identical reads)."""
        key = (index, offset, frozenset(value.items()))
        if key in self._reads:
            return self._reads[key]
        verr, vmag = self.ferr(value), self.fmag(value)
        err = prec.uniform_head_error(verr, vmag, self.n) if offset is None else verr + 2 * vmag
        c = self._coord(name, err, vmag if offset is None else 1.0)
        h = self.head(index, offset)
        h.values.append(value)
        h.outputs.append(c)
        self._reads[key] = c
        return c

    @property
    def u(self) -> int:
        """The coordinate of ``u = 1/(i+1)`` (a uniform head of layer 1 reading <bos>)."""
        if self._u is None:
            self._u = self.read(1, None, {self.tokens[BOS]: 1.0}, "u")
        return self._u

    def pe(self, modulus: int, residue: int) -> int:
        if (modulus, residue) not in self._pe:
            c = self._coord(f"pos:{residue}mod{modulus}", 0.0, 1.0)
            self._pe[(modulus, residue)] = c
            self.positional.append((c, modulus, residue))
        return self._pe[(modulus, residue)]

    def unit(self, index: int, weights: Form, bias: float, outputs: Form) -> None:
        self.layer(index).units.append(Unit(weights, bias, outputs))

    # -- operations --------------------------------------------------------------------
    def add(self, op: Op) -> None:
        k, name = op.kind, op.name
        f, t = getattr(self, f"_op_{k}")(op)
        self.forms[name], self.times[name] = f, t
        if op.sort == "bool":
            self.budget.decode(name, self.ferr(f), 1.0)
        else:
            self.budget.decode(name, self.ferr(f), float(self.n + 1))

    def _op_initial(self, op: Op):
        return {self.tokens[op.symbol]: 1.0}, 0

    def _op_bool_const(self, op: Op):
        return ({self.one: 1.0} if op.value else {}), 0

    def _op_periodic(self, op: Op):
        m = op.period.modulus
        return {self.pe(m, r): 1.0 for r in sorted(op.period.residues)}, 0

    def _op_not(self, op: Op):
        a = op.args[0]
        return self.combine((1.0, {self.one: 1.0}), (-1.0, self.forms[a])), self.times[a]

    def _op_count_const(self, op: Op):
        self.bound[op.name] = abs(op.value)
        return ({self.u: float(op.value)} if op.value else {}), 1

    def _op_add(self, op: Op, sign: float = 1.0):
        a, b = op.args
        self.bound[op.name] = self.bound[a] + self.bound[b]
        f = self.combine((1.0, self.forms[a]), (sign, self.forms[b]))
        return f, max(self.times[a], self.times[b])

    def _op_sub(self, op: Op):
        return self._op_add(op, -1.0)

    def counted(self, name: str) -> Form:
        """The value a count reads from operation ``name``: its form minus its (input-
        independent) value at the start position times ``tok_<bos>``, so 0 at position 0."""
        start = float(bool(self.at_start[name]))
        return self.combine((1.0, self.forms[name]), (-start, {self.tokens[BOS]: 1.0}))

    def _op_count(self, op: Op):
        (a,) = op.args
        self.bound[op.name] = 1.0
        index = attention_layer(self.times[a])
        if op.relation is None:
            return {self.read(index, None, self.counted(a), op.name): 1.0}, 2 * index - 1
        return self._local_count(op, index), 2 * index

    def _local_count(self, op: Op, index: int) -> Form:
        a = op.args[0]
        out = self._coord(op.name, 0.0, 1.0)
        u, err, value = self.u, 0.0, self.counted(a)
        # an offset beyond the longest input relates no two positions: no head for it
        for d in sorted(d for d in op.relation.offsets if abs(d) <= self.n):
            b = value if d == 0 else {self.read(index, d, value, f"{op.name}@{d}"): 1.0}
            weights = self.combine((1.0, {u: 1.0}), (1.0, b))
            self.unit(index, weights, -1.0, {out: 1.0})
            err += self.ferr(weights) + 4
        self.err[out] = err
        return {out: 1.0}

    def _leaves(self, name: str, kind: str, negated: bool = False) -> list[tuple[str, bool]]:
        """The literals of a flattened AND (or OR) over nested ANDs (ORs) and NOTs of ORs
        (ANDs); ``negated`` flips the kind (De Morgan)."""
        key = (name, kind, negated)
        if key not in self._leaf_cache:
            self._leaf_cache[key] = list(dict.fromkeys(self._flatten(name, kind, negated)))
        return self._leaf_cache[key]

    def _flatten(self, name: str, kind: str, negated: bool) -> list[tuple[str, bool]]:
        op = self.p.op(name)
        want = kind if not negated else ("or" if kind == "and" else "and")
        if op.kind == want:
            return [x for a in op.args for x in self._leaves(a, kind, negated)]
        if op.kind == "not":
            return self._leaves(op.args[0], kind, not negated)
        return [(name, negated)]

    def literal(self, name: str, negated: bool) -> Form:
        f = self.forms[name]
        return self.combine((1.0, {self.one: 1.0}), (-1.0, f)) if negated else f

    def _op_and(self, op: Op, kind: str = "and"):
        leaves = list(dict.fromkeys(x for a in op.args for x in self._leaves(a, kind)))
        flip = kind == "or"  # OR = 1 - AND of the negations
        forms = [self.literal(n, neg != flip) for n, neg in leaves]
        t = max(self.times[n] for n, _ in leaves)
        index = mlp_layer(t)
        total = self.combine(*((1.0, f) for f in forms))
        c = self._coord(op.name, self.ferr(total) + len(forms) + 2, 1.0)
        self.unit(index, total, -(len(forms) - 1.0), {c: 1.0})
        f = self.combine((1.0, {self.one: 1.0}), (-1.0, {c: 1.0})) if flip else {c: 1.0}
        return f, 2 * index

    def _op_or(self, op: Op):
        return self._op_and(op, "or")

    def _op_compare(self, op: Op):
        a, b = op.args
        y = self.combine((1.0, self.forms[a]), (-1.0, self.forms[b]))
        return self._steps(op, y, max(self.times[a], self.times[b], 1))

    def _op_compare_const(self, op: Op):
        (a,) = op.args
        y = self.combine((1.0, self.forms[a]), (-float(op.value), {self.u: 1.0}))
        return self._steps(op, y, max(self.times[a], 1))

    def _steps(self, op: Op, y: Form, t: int):
        index = mlp_layer(t)
        steps, flip = step_thresholds(op.comparison)
        c = self._coord(op.name, 0.0, 1.0)
        for k, sign in steps:
            z = self.combine((1.0, y), (-(k - 0.5), {self.u: 1.0}))
            a = {x: self.alpha * w for x, w in z.items()}
            self.unit(index, a, 0.5, {c: sign})
            self.unit(index, a, -0.5, {c: -sign})
            self.err[c] += self.budget.step(op.name, self.ferr(z), self.fmag(z), self.alpha)
        f = self.combine((1.0, {self.one: 1.0}), (-1.0, {c: 1.0})) if flip else {c: 1.0}
        return f, 2 * index

    def _cond_leaves(self, name: str) -> list[tuple[Form, float, int, int, str]]:
        """The leaves of a flattened conditional: ``(s, error of s, time of s, path length,
        branch)`` with ``s`` the number of unsatisfied literals on the path (memoized)."""
        if name in self._cond_cache:
            return self._cond_cache[name]
        op = self.p.op(name)
        if op.kind != "cond":
            return [({}, 0.0, 0, 0, name)]
        b, c1, c2 = op.args
        out = []
        for branch, unsatisfied in ((c1, self.literal(b, True)), (c2, self.forms[b])):
            e, t = self.ferr(unsatisfied), self.times[b]
            for s, se, st, n, leaf in self._cond_leaves(branch):
                out.append(
                    (self.combine((1.0, s), (1.0, unsatisfied)), se + e, max(st, t), n + 1, leaf)
                )
        self._cond_cache[name] = out
        return out

    def _op_cond(self, op: Op):
        leaves = self._cond_leaves(op.name)
        self.bound[op.name] = max(self.bound[leaf] for *_, leaf in leaves)
        big = float(self.bound[op.name] + 1)
        t = max([1] + [max(st, self.times[leaf]) for _, _, st, _, leaf in leaves])
        index = mlp_layer(t)
        c = self._coord(op.name, 0.0, self.bound[op.name])
        worst = 0.0
        for s, s_err, _, n, leaf in leaves:
            # ReLU(y - M s) - ReLU(-y - M s): y on the taken path (s = 0), else 0 (s >= 1)
            y = self.forms[leaf]
            self.budget.gate(op.name, big * s_err)
            for sign in (1.0, -1.0):
                w = self.combine((sign, y), (-big, s))
                self.unit(index, w, 0.0, {c: sign})
            worst = max(worst, 2 * (self.ferr(y) + big * s_err) + 4 * big * (n + 1))
        self.err[c] = worst
        return {c: 1.0}, 2 * index


def build_plan(program: CraspProgram, max_length: int) -> Plan:
    """The :class:`Plan` of ``program`` for inputs of at most ``max_length`` symbols."""
    if not isinstance(max_length, int) or max_length < 1:
        raise RasplabError(f"the maximum length must be a positive integer, got {max_length!r}")
    b = _Builder(program, max_length)
    for op in program.ops:
        b.add(op)
    counts = frozenset(op.name for op in program.ops if op.sort == "count")
    return Plan(
        program=program.name,
        alphabet=program.alphabet,
        max_length=max_length,
        coords=b.coords,
        tokens=b.tokens,
        positional=b.positional,
        layers=b.layers,
        forms=b.forms,
        counts=counts,
        times=b.times,
        budget=b.budget,
    )


__all__ = ["BOS_BONUS", "LOCAL_BIAS", "Head", "Layer", "Plan", "Unit", "build_plan"]
