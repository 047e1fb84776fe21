"""Fast scalar random draws for the PTG generator, buffered from a seeded numpy Generator.

A numpy ``Generator`` costs microseconds per scalar call; the generator makes hundreds of small
draws per program, so :class:`Draws` pulls uniforms in blocks and hands them out one at a time.
The stream is a pure function of the generator's state, so seeded runs are reproducible.

>>> import numpy as np
>>> d = Draws(np.random.default_rng(0))
>>> [d.randint(1, 6) for _ in range(5)]
[4, 2, 1, 1, 5]
>>> d.choice(["a", "b", "c"]) in ("a", "b", "c")
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")
_BLOCK = 1024


class Draws:
    """Uniform floats in [0, 1) drawn from ``rng`` in blocks, with integer and choice helpers."""

    __slots__ = ("rng", "_buf", "_i")

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._buf: list[float] = []
        self._i = 0

    def random(self) -> float:
        """One uniform float in [0, 1)."""
        i = self._i
        if i >= len(self._buf):
            self._buf = self.rng.random(_BLOCK).tolist()
            i = 0
        self._i = i + 1
        return self._buf[i]

    def randint(self, lo: int, hi: int) -> int:
        """A uniform integer in the inclusive range ``lo..hi``."""
        return lo + int(self.random() * (hi - lo + 1))

    def choice(self, items: Sequence[T]) -> T:
        """A uniform element of a non-empty sequence."""
        return items[int(self.random() * len(items))]

    def chance(self, p: float) -> bool:
        """True with probability ``p``."""
        return self.random() < p
