"""Program shapes: which (lines, trace steps) pairs exist, and drawing a shape that hits both.

A shape is the sequence of top-level items of a function body (the ``def`` and ``return``
lines aside): a simple statement (1 line, 1 step), an ``if`` block with ``k`` body lines
(``k + 1`` lines; 1 step if not taken, ``k + 1`` if taken), a counter ``while`` block with
``m`` body statements run ``n`` times (counter and condition set before it, both updated at
the end of the body: ``m + 5`` lines, ``3 + n (m + 3)`` steps) or a *list* ``while`` block
that consumes an input list of ``n`` elements::

    while lst_b != []:
        x = lst_b.pop()
        ... m statements ...

(``m + 2`` lines, ``1 + n (m + 2)`` steps, ``n`` the input list length, so the trace grows
linearly with the input size as in seed 000 §2 and L0-Bench). Counter loops have constant
bounds, list loops run once per element of an untouched input list and blocks do not nest, so
a shape and the list length fix the number of trace steps exactly.

The *natural* shape distribution writes items one after another: a simple statement with
probability 0.4, an ``if`` block 0.15 (size uniform, taken or not with probability 1/2), a
counter ``while`` block 0.1 (body size and iteration count uniform) and a list ``while`` block
0.35 (body size uniform; list loops are that frequent so that most programs that can afford
one have one). A split asks for programs whose lines lie in one range and trace steps in
another; :meth:`Reach.draw` gives exactly what
rejection sampling would (lines uniform, then a natural shape of that many lines, kept only
if its steps fall in range) without rejecting anything, from tables of the probability mass
of every (lines, steps) pair. Bit sets of the reachable pairs give exact feasibility.

>>> r = Reach(block=(1, 3), iterations=(1, 4), list_length=3)
>>> r.feasible(lines=8, steps=8), r.feasible(lines=5, steps=8)
(True, False)
>>> item_lines(("drain", 2, 3)), item_steps(("drain", 2, 3))
(4, 13)
>>> import numpy as np
>>> from rasplab.bins import Bin
>>> from rasplab.tasks.ptg.draws import Draws
>>> lines, steps, shape = r.draw(Draws(np.random.default_rng(0)), Bin(10, 14), Bin(30, 40))
>>> sum(item_lines(i) for i in shape) + 2 == lines, sum(item_steps(i) for i in shape) + 1 == steps
(True, True)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rasplab.bins import Bin
from rasplab.tasks.ptg.draws import Draws

SIMPLE = ("simple",)
#: probability of each item kind in the natural shape distribution
WEIGHTS = {"simple": 0.4, "if": 0.15, "loop": 0.1, "drain": 0.35}


def item_lines(item: tuple) -> int:
    """Program lines used by a shape item."""
    if item[0] == "simple":
        return 1
    if item[0] == "if":
        return item[1] + 1
    if item[0] == "drain":
        return item[1] + 2
    return item[1] + 5


def item_steps(item: tuple) -> int:
    """Trace steps produced by a shape item."""
    if item[0] == "simple":
        return 1
    if item[0] == "if":
        return 1 + item[1] if item[2] else 1
    if item[0] == "drain":
        return 1 + item[2] * (item[1] + 2)
    return 3 + item[2] * (item[1] + 3)


class Reach:
    """Reachable (lines, steps) pairs and their natural probability mass, for given knobs."""

    def __init__(
        self,
        block: tuple[int, int],
        iterations: tuple[int, int],
        allow_if: bool = True,
        allow_loop: bool = True,
        max_lines: int = 64,
        list_length: int = 0,
    ) -> None:
        self.block, self.iterations = block, iterations
        self.allow_if, self.allow_loop = allow_if, allow_loop
        self.ms = list(range(block[0], block[1] + 1))
        self.ns = list(range(iterations[0], iterations[1] + 1))
        self.ifs = [("if", k, t) for k in self.ms for t in (False, True)] if allow_if else []
        # list loops need a non-empty input list, an integer to pop into and (for the
        # generator's variable plan) as many variables as a counter loop
        drain = allow_loop and list_length > 0
        self.drains = [("drain", m, list_length) for m in self.ms] if drain else []
        kinds = {"simple": 1, "if": allow_if, "loop": allow_loop, "drain": drain}
        total = sum(WEIGHTS[k] * float(kinds[k]) for k in kinds)
        self.p_simple = WEIGHTS["simple"] / total
        self.p_if = WEIGHTS["if"] / total / max(len(self.ifs), 1)
        self.p_loop = WEIGHTS["loop"] / total / (len(self.ms) * len(self.ns))
        self.p_drain = WEIGHTS["drain"] / total / len(self.ms)
        self.bits = [1]  # bits[b]: bit s set when b body lines can make s body steps
        self.max_lines = 0
        self._cache: dict = {}
        self.extend(max_lines)

    def extend(self, max_lines: int) -> None:
        """Grow the tables to cover programs of ``max_lines`` lines."""
        if max_lines <= self.max_lines:
            return
        rows = max(max_lines - 1, 2)  # body lines 0 .. max_lines - 2
        bits = [1]
        for b in range(1, rows):
            acc = bits[b - 1] << 1
            for it in self.ifs + self.drains:
                if b >= item_lines(it):
                    acc |= bits[b - item_lines(it)] << item_steps(it)
            if self.allow_loop:
                for m in self.ms:
                    if b >= m + 5:
                        for n in self.ns:
                            acc |= bits[b - m - 5] << (3 + n * (m + 3))
            bits.append(acc)
        self.bits, self.max_lines = bits, max_lines
        self._build_mass(rows, bits[-1].bit_length() + 1)
        self._cache.clear()

    def _build_mass(self, rows: int, width: int) -> None:
        """Probability mass of every (body lines, body steps) pair, split by the first item."""
        mass = np.zeros((rows, width))
        by_if = np.zeros((rows, width))
        by_drain = np.zeros((rows, width))
        by_m = np.zeros((len(self.ms), rows, width))
        mass[0, 0] = 1.0
        for b in range(1, rows):
            row = np.zeros(width)
            row[1:] = self.p_simple * mass[b - 1, :-1]
            for it in self.ifs:
                r, s = b - item_lines(it), item_steps(it)
                if r >= 0:
                    by_if[b, s:] += self.p_if * mass[r, : width - s]
            for it in self.drains:
                r, s = b - item_lines(it), item_steps(it)
                if r >= 0 and s < width:
                    by_drain[b, s:] += self.p_drain * mass[r, : width - s]
            if self.allow_loop:
                for i, m in enumerate(self.ms):
                    if b >= m + 5:
                        for n in self.ns:
                            s = 3 + n * (m + 3)
                            if s < width:
                                by_m[i, b, s:] += self.p_loop * mass[b - m - 5, : width - s]
            mass[b] = row + by_if[b] + by_drain[b] + by_m[:, b].sum(0)
        self.mass = mass
        self.mass_rows = mass.tolist()
        self.if_rows = by_if.tolist()
        self.drain_rows = by_drain.tolist()
        self.m_rows = [x.tolist() for x in by_m]
        self.loop_rows = by_m.sum(0).tolist()
        self.row_total = mass.sum(1)

    def feasible(self, lines: int, steps: int) -> bool:
        """Whether some program of exactly ``lines`` lines has exactly ``steps`` trace steps."""
        body, s = lines - 2, steps - 1
        if body < 1 or s < 1:
            return False
        self.extend(lines)
        return bool((self.bits[body] >> s) & 1)

    def step_range(self, lines: int) -> tuple[int, int] | None:
        """The fewest and most trace steps of a ``lines``-line program (None if none exist)."""
        if lines < 3:
            return None
        self.extend(lines)
        bits = self.bits[lines - 2]
        return ((bits & -bits).bit_length(), bits.bit_length()) if bits else None

    def step_counts(self, lines: int) -> list[int]:
        """Every trace-step count some ``lines``-line program has, in increasing order.

        >>> Reach(block=(1, 2), iterations=(1, 2)).step_counts(5)
        [2, 3, 4]
        """
        if lines < 3:
            return []
        self.extend(lines)
        bits = self.bits[lines - 2]
        return [s + 1 for s in range(bits.bit_length()) if (bits >> s) & 1]

    def draw(self, draws: Draws, lines: Bin, steps: Bin) -> tuple[int, int, list] | None:
        """``(lines, steps, shape)``: lines uniform in ``lines``, a natural shape, conditioned
        on its steps lying in ``steps``; None when no program of those lines can."""
        self.extend(lines.hi)
        key = (lines.lo, lines.hi, steps.lo, steps.hi)
        if key not in self._cache:
            self._cache[key] = self._line_weights(lines, steps)
        cum = self._cache[key]
        if cum is None:
            return None
        n_lines = lines.lo + _pick(draws, cum)
        row = self.mass_rows[n_lines - 2]
        weights = [row[s - 1] if s - 1 < len(row) else 0.0 for s in steps.lengths()]
        n_steps = steps.lo + _pick(draws, np.cumsum(weights).tolist())
        return n_lines, n_steps, self.sample(draws, n_lines, n_steps)

    def _line_weights(self, lines: Bin, steps: Bin) -> list[float] | None:
        """Cumulative P(steps in range | lines) over the lines of the range (None if all 0)."""
        lo, hi = max(steps.lo - 1, 0), min(steps.hi, self.mass.shape[1])
        w = []
        for n in lines.lengths():
            total = self.row_total[n - 2] if n >= 3 else 0.0
            w.append(self.mass[n - 2, lo:hi].sum() / total if total > 0 and lo < hi else 0.0)
        return np.cumsum(w).tolist() if sum(w) > 0 else None

    def sample(self, draws: Draws, lines: int, steps: int) -> list[tuple]:
        """A natural shape with exactly ``lines`` lines and ``steps`` steps (must be feasible)."""
        if not self.feasible(lines, steps):
            raise ValueError(f"no shape with {lines} lines and {steps} steps")
        mass, b, s = self.mass_rows, lines - 2, steps - 1
        shape: list[tuple] = []
        while b > 0:
            row = mass[b - 1]
            ws = self.p_simple * row[s - 1] if 1 <= s <= len(row) else 0.0
            wi, wl, wd = self.if_rows[b][s], self.loop_rows[b][s], self.drain_rows[b][s]
            u = draws.random() * (ws + wi + wl + wd)
            if u < ws:
                item = SIMPLE
            elif u < ws + wi:
                item = self._pick_block(draws, self.ifs, b, s)
            elif u < ws + wi + wd:
                item = self._pick_block(draws, self.drains, b, s)
            else:
                item = self._pick_loop(draws, b, s)
            shape.append(item)
            b -= item_lines(item)
            s -= item_steps(item)
        return shape

    def _pick_block(self, draws: Draws, items: list, b: int, s: int) -> tuple:
        cands = [it for it in items if item_lines(it) <= b and item_steps(it) <= s]
        w = [self.mass_rows[b - item_lines(it)][s - item_steps(it)] for it in cands]
        return cands[_pick(draws, np.cumsum(w).tolist())]

    def _pick_loop(self, draws: Draws, b: int, s: int) -> tuple:
        m = self.ms[_pick(draws, np.cumsum([rows[b][s] for rows in self.m_rows]).tolist())]
        rest = self.mass_rows[b - m - 5]
        w = [rest[s - 3 - n * (m + 3)] if s >= 3 + n * (m + 3) else 0.0 for n in self.ns]
        return ("loop", m, self.ns[_pick(draws, np.cumsum(w).tolist())])


def _pick(draws: Draws, cumulative: list[float]) -> int:
    """An index drawn with probability proportional to the increments of ``cumulative``."""
    u = draws.random() * cumulative[-1]
    for i, c in enumerate(cumulative):
        if u < c:
            return i
    return len(cumulative) - 1


@lru_cache(maxsize=256)
def reach(
    block: tuple[int, int],
    iterations: tuple[int, int],
    allow_if: bool,
    allow_loop: bool,
    list_length: int = 0,
) -> Reach:
    """A shared :class:`Reach` table for these settings."""
    return Reach(block, iterations, allow_if, allow_loop, list_length=list_length)
