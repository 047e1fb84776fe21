"""The synthetic regression tasks of the quantitative length-generalization bound (seed 004).

``simple_task`` and ``modp_task`` (Section 5, Appendix B): tokens only (no specials), length =
number of tokens, one real target scored at the last position. Every float is computed with
IEEE basic operations only (no libm), so outputs are byte-identical on every machine.

Training draws whole batches as arrays (``sample_arrays``: token ids and last-position targets,
no :class:`Example` objects; :meth:`~rasplab.harness.encoding.Encoder.train_batch` uses it):
the same random draws and the same bits as ``sample_many``, computed with numpy's elementwise
IEEE operations in the same order (:func:`portable_sin_array`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.seeding import generator  # noqa: F401 (doctests)
from rasplab.tasks import get_task  # noqa: F401 (doctests)
from rasplab.tasks.base import Example, Task, register

_TWO_PI = 2 * math.pi


def portable_sin(x: float) -> float:
    """sin(x) from + - * / and round only (reduction by 2π, then a Taylor polynomial): the
    same bits on every IEEE-754 machine, within ~1e-15 of ``math.sin`` for moderate |x|.

    >>> abs(portable_sin(1.0) - math.sin(1.0)) < 1e-15, portable_sin(0.0)
    (True, 0.0)
    """
    r = x - round(x / _TWO_PI) * _TWO_PI
    r2, term, total = r * r, r, r
    for n in range(3, 40, 2):
        term = -term * r2 / ((n - 1) * n)
        total += term
    return total


def portable_sin_array(x: np.ndarray) -> np.ndarray:
    """:func:`portable_sin` of every element of a float64 array, with the same operations in
    the same order (numpy's ``round`` halves to even, as Python's does): the same bits.

    >>> xs = np.array([0.0, 1.0, -2.5, 7.25])
    >>> portable_sin_array(xs).tolist() == [portable_sin(v) for v in xs.tolist()]
    True
    """
    x = np.asarray(x, dtype=np.float64)
    r = x - np.round(x / _TWO_PI) * _TWO_PI
    r2, term = r * r, r
    total = r.copy()
    for n in range(3, 40, 2):
        term = -term * r2 / float((n - 1) * n)
        total = total + term
    return total


def _regression(tokens: Sequence[str], y: float) -> Example:
    """Tokens with ``y`` scored at the last position."""
    return Example(
        tokens=tuple(tokens), targets=(None,) * (len(tokens) - 1) + (y,), length=len(tokens)
    )


def _checked_lengths(task: Task, lengths: Sequence[int]) -> tuple[np.ndarray, int]:
    """``lengths`` as an int64 array, each checked by ``task.lengths``, and the longest (0 if
    there are none)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    for n in np.unique(lengths).tolist():
        task.lengths(Bin(n, n))
    return lengths, int(lengths.max()) if lengths.size else 0


def _rows_to_examples(task: Task, ids: np.ndarray, lengths: np.ndarray) -> list[Example]:
    """One regression example per row of token ids ``ids[B, T]``, cut to its length."""
    out = []
    for row, n in zip(ids.tolist(), lengths.tolist()):
        tokens = [task.vocab[i] for i in row[:n]]
        out.append(_regression(tokens, task.target(tokens)))
    return out


@register("simple_task")
class SimpleTask(Task):
    """Tokens i.i.d. from p (p uniform on the simplex); target sin(ω (c0 - c1) / (c0 + c1)).

    Sequences with no 0 and no 1 (target 0/0, undefined) are redrawn: the seed does not say
    what it does with them; at length T a share 2/((T+1)(T+2)) of draws is redrawn (1/3 at
    T = 1, 0.43% at T = 20), as docs/bounds.md measures.

    >>> ex = get_task("simple_task", omega=2.0).sample(generator(0, "doc"), 5)
    >>> ex.tokens, ex.targets[-1]
    (('0', '1', '0', '0', '0'), 0.9320390859672263)
    """

    name = "simple_task"
    description = "sin(omega (c0 - c1) / (c0 + c1)) over tokens 0/1/2 (regression)"
    vocab = ("0", "1", "2")
    target_kind = "regression"

    def __init__(self, omega: float = 1.0) -> None:
        if not isinstance(omega, (int, float)) or not math.isfinite(omega):
            raise RasplabError(f"simple_task option omega must be a finite number, got {omega!r}")
        self.omega = float(omega)
        self.description = (
            f"sin({self.omega:g} (c0 - c1) / (c0 + c1)) over tokens 0/1/2 (regression)"
        )

    def max_tokens(self, length: int) -> int:
        """Just the tokens."""
        return length

    def target(self, tokens: Sequence[str]) -> float:
        """sin(ω (c0 - c1) / (c0 + c1))."""
        c0, c1 = tokens.count("0"), tokens.count("1")
        return portable_sin(self.omega * (c0 - c1) / (c0 + c1))

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """Reference sampler: simplex point from two sorted uniforms, then i.i.d. tokens."""
        self.lengths(Bin(length, length))
        while True:
            cut = sorted(rng.random(2).tolist())
            u = rng.random(length).tolist()
            tokens = [("0" if v < cut[0] else "1" if v < cut[1] else "2") for v in u]
            if "0" in tokens or "1" in tokens:
                return _regression(tokens, self.target(tokens))

    def sample_many(self, rng: np.random.Generator, lengths: Sequence[int]) -> list[Example]:
        """Vectorized draws (redraws for rows of only 2s); targets in Python floats."""
        lengths, top = _checked_lengths(self, lengths)
        return _rows_to_examples(self, self._draw_ids(rng, lengths, top), lengths)

    def sample_arrays(
        self, rng: np.random.Generator, lengths: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``sample_many``'s draws as arrays: (lengths [B], vocabulary indices [B, T] (past a
        row's length: undefined), targets [B] float64, the same bits as :meth:`target`).

        >>> task = get_task("simple_task", omega=3.0)
        >>> ex = task.sample_many(generator(1, "doc"), [4, 6])
        >>> n, ids, y = task.sample_arrays(generator(1, "doc"), [4, 6])
        >>> y.tolist() == [e.targets[-1] for e in ex], ids[1].tolist()
        (True, [2, 2, 2, 2, 2, 0])
        """
        lengths, top = _checked_lengths(self, lengths)
        ids = self._draw_ids(rng, lengths, top)
        valid = np.arange(top)[None, :] < lengths[:, None]
        c0 = ((ids == 0) & valid).sum(axis=1)
        c1 = ((ids == 1) & valid).sum(axis=1)
        z = self.omega * (c0 - c1).astype(np.float64) / (c0 + c1).astype(np.float64)
        return lengths, ids, portable_sin_array(z)

    def _draw_ids(self, rng: np.random.Generator, lengths: np.ndarray, top: int) -> np.ndarray:
        """Token indices [B, top] of rows of ``lengths`` (rows with no 0 and no 1 redrawn)."""
        ids = np.empty((lengths.size, top), dtype=np.int64)
        todo = np.arange(lengths.size)
        while todo.size:
            cut = np.sort(rng.random((todo.size, 2)), axis=1)
            u = rng.random((todo.size, top))
            ids[todo] = (u >= cut[:, :1]).astype(np.int64) + (u >= cut[:, 1:])
            valid = np.arange(top)[None, :] < lengths[todo, None]
            todo = todo[~((ids[todo] < 2) & valid).any(axis=1)]
        return ids


@register("modp_task")
class ModPTask(Task):
    """q_0..q_{p-1} uniform in [0, 1]; token t (positions 1..T) is Bernoulli(q_{t mod p});
    target = mean of the tokens at positions t ≡ k (mod p).

    >>> ex = get_task("modp_task", p=3, k=1).sample(generator(0, "doc"), 7)
    >>> ex.tokens, ex.targets[-1]
    (('0', '1', '1', '1', '0', '1', '0'), 0.3333333333333333)
    """

    name = "modp_task"
    description = "mean of the tokens at positions = k (mod p) (regression)"
    vocab = ("0", "1")
    target_kind = "regression"

    def __init__(self, p: int = 5, k: int = 1) -> None:
        if not isinstance(p, int) or isinstance(p, bool) or p < 1:
            raise RasplabError(f"modp_task option p must be an integer >= 1, got {p!r}")
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < p:
            raise RasplabError(
                f"modp_task option k must be an integer in 0..p-1 = 0..{p - 1}, got {k!r}"
            )
        self.p, self.k = p, k
        # APE offsets in multiples of p: row o + t - 1 of token t is t - 1 (mod p), so the
        # positions = k (mod p) are the same rows mod p in every training sequence (with any
        # offset the target would not be a function of the rows the model sees)
        self.offset_step = p
        self.min_length = k if k else p
        self.train_bin = Bin(self.min_length, 50)
        self.test_bins = (Bin(self.min_length, 50), Bin(51, 100), Bin(101, 150))
        self.description = f"mean of the tokens at positions = {k} (mod {p}) (regression)"

    def max_tokens(self, length: int) -> int:
        """Just the tokens."""
        return length

    def target(self, tokens: Sequence[str]) -> float:
        """Mean of the tokens at 1-based positions t with t ≡ k (mod p)."""
        picked = [int(x) for t, x in enumerate(tokens, start=1) if t % self.p == self.k]
        return sum(picked) / len(picked)

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """Reference sampler."""
        self.lengths(Bin(length, length))
        q = rng.random(self.p).tolist()
        u = rng.random(length).tolist()
        tokens = [("1" if u[t - 1] < q[t % self.p] else "0") for t in range(1, length + 1)]
        return _regression(tokens, self.target(tokens))

    def sample_many(self, rng: np.random.Generator, lengths: Sequence[int]) -> list[Example]:
        """Vectorized draws of q and the tokens."""
        lengths, top = _checked_lengths(self, lengths)
        return _rows_to_examples(self, self._draw_ids(rng, lengths, top), lengths)

    def sample_arrays(
        self, rng: np.random.Generator, lengths: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``sample_many``'s draws as arrays: (lengths [B], vocabulary indices [B, T] (past a
        row's length: undefined), targets [B] float64, the same bits as :meth:`target`).

        >>> task = get_task("modp_task", p=2, k=1)
        >>> n, ids, y = task.sample_arrays(generator(0, "doc"), [3, 5])
        >>> y.tolist() == [e.targets[-1] for e in task.sample_many(generator(0, "doc"), [3, 5])]
        True
        """
        lengths, top = _checked_lengths(self, lengths)
        ids = self._draw_ids(rng, lengths, top)
        t = np.arange(1, top + 1)
        picked = ((t % self.p) == self.k)[None, :] & (t[None, :] <= lengths[:, None])
        ones = (ids * picked).sum(axis=1).astype(np.float64)
        return lengths, ids, ones / picked.sum(axis=1).astype(np.float64)

    def _draw_ids(self, rng: np.random.Generator, lengths: np.ndarray, top: int) -> np.ndarray:
        """Token indices [B, top]: q per row, then token t is 1 with probability q[t mod p]."""
        q = rng.random((lengths.size, self.p))
        u = rng.random((lengths.size, top))
        return (u < q[:, np.arange(1, top + 1) % self.p]).astype(np.int64)
