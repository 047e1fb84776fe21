"""The algorithmic tasks of Huang et al. (seed 003, Appendix E.2) except addition.

Sequence ``<bos> INPUT <sep> ANSWER <eos>``; only ANSWER and the final ``<eos>`` are scored
(``docs/tasks.md``, algorithmic tasks). Each task has a per-example reference sampler (``_one``) and a
numpy batch sampler (``_batch``, used by ``sample_many``) with the same distribution.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.seeding import generator  # noqa: F401 (doctests)
from rasplab.tasks import get_task  # noqa: F401 (doctests)
from rasplab.tasks.base import BOS, SEP, SPECIALS, Example, Task, answer_example, register


class AlgorithmicTask(Task):
    """Shared machinery: content ``symbols``, prompt/answer assembly, batching by length.

    Subclasses give ``_one(rng, n) -> (input ids, answer ids)`` (reference) and
    ``_batch(rng, n, count) -> (inputs (count, n), answers (count, k))`` (vectorized).
    """

    symbols: tuple[str, ...] = ()
    answer_symbols: tuple[str, ...] | None = None
    answer_len = 1  # answer tokens per example (without <eos>), for max_tokens

    def __init__(self) -> None:
        self.vocab = (
            SPECIALS
            + self.symbols
            + tuple(a for a in (self.answer_symbols or ()) if a not in self.symbols)
        )
        self._in = np.array(self.symbols, dtype=object)
        self._out = np.array(self.answer_symbols or self.symbols, dtype=object)
        lo = self.min_length
        self.train_bin = Bin(max(lo, 1), 50)
        self.test_bins = (Bin(max(lo, 1), 50), Bin(51, 100), Bin(101, 150))

    def max_tokens(self, length: int) -> int:
        """``<bos>``, the input, ``<sep>``, the answer and ``<eos>``."""
        return length + 3 + self.answer_len

    def _check(self, length: int) -> None:
        """Reject lengths the task has no examples of."""
        self.lengths(Bin(length, length))

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """One example with input of exactly ``length`` tokens (reference sampler)."""
        self._check(length)
        x, y = self._one(rng, length)
        return answer_example([BOS, *self._in[x].tolist(), SEP], self._out[y].tolist(), length)

    def sample_many(self, rng: np.random.Generator, lengths: Sequence[int]) -> list[Example]:
        """Vectorized: one numpy batch per distinct length, results in the order asked."""
        lengths = np.asarray(lengths, dtype=np.int64)
        out: list[Example | None] = [None] * len(lengths)
        for n in np.unique(lengths).tolist():
            self._check(n)
            where = np.nonzero(lengths == n)[0]
            x, y = self._batch(rng, n, len(where))
            for i, xs, ys in zip(where.tolist(), self._in[x].tolist(), self._out[y].tolist()):
                out[i] = answer_example([BOS, *xs, SEP], ys, n)
        return out  # type: ignore[return-value]


def _tie_free_counts(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """Counts k uniform over [0, n] without k == n - k."""
    if n % 2:
        return rng.integers(0, n + 1, size=size)
    j = rng.integers(0, n, size=size)
    return j + (j >= n // 2)


def _shuffled_bits(rng: np.random.Generator, zeros: np.ndarray, n: int) -> np.ndarray:
    """Rows of n bits with ``zeros[b]`` zeros each, uniformly shuffled (rank trick)."""
    ranks = np.argsort(rng.random((len(zeros), n)), axis=1)
    return (ranks >= zeros[:, None]).astype(np.int64)


@register("binary_majority")
class BinaryMajority(AlgorithmicTask):
    """The majority bit of a tie-free bit string (k0 zeros, k0 uniform with k0 != n - k0).

    >>> ex = get_task("binary_majority").sample(generator(0, "doc"), 5)
    >>> " ".join(ex.tokens), ex.scored_positions()
    ('<bos> 0 0 1 0 0 <sep> 0 <eos>', [6, 7])
    """

    name = "binary_majority"
    description = "majority bit of a tie-free bit string"
    symbols = ("0", "1")

    def _one(self, rng, n):
        values = [k for k in range(n + 1) if 2 * k != n]
        k0 = values[int(rng.integers(len(values)))]
        bits = np.array([0] * k0 + [1] * (n - k0))
        rng.shuffle(bits)
        return bits, [0 if 2 * k0 > n else 1]

    def _batch(self, rng, n, count):
        k0 = _tie_free_counts(rng, n, count)
        return _shuffled_bits(rng, k0, n), (2 * k0 < n).astype(np.int64)[:, None]


@register("binary_majority_interleave")
class BinaryMajorityInterleave(AlgorithmicTask):
    """Three tie-free bit strings of length m interleaved position-wise (n = 3m); answer:
    their three majority bits in stream order.

    >>> ex = get_task("binary_majority_interleave").sample(generator(0, "doc"), 6)
    >>> " ".join(ex.tokens)
    '<bos> 0 1 1 0 1 1 <sep> 0 1 1 <eos>'
    """

    name = "binary_majority_interleave"
    description = "three interleaved binary majority strings; answer the three majority bits"
    symbols = ("0", "1")
    min_length = 3
    answer_len = 3

    def allows_length(self, length: int) -> bool:
        """Only multiples of 3."""
        return length % 3 == 0

    def _one(self, rng, n):
        streams, answers = [], []
        for _ in range(3):
            bits, ans = BinaryMajority._one(self, rng, n // 3)
            streams.append(bits)
            answers += ans
        return np.stack(streams, axis=1).reshape(-1), answers

    def _batch(self, rng, n, count):
        m = n // 3
        k0 = _tie_free_counts(rng, m, 3 * count).reshape(count, 3)
        bits = _shuffled_bits(rng, k0.reshape(-1), m).reshape(count, 3, m)
        return bits.transpose(0, 2, 1).reshape(count, n), (2 * k0 < m).astype(np.int64)


@register("majority")
class Majority(AlgorithmicTask):
    """The most frequent letter of n i.i.d. uniform letters a..z (redrawn until unique).

    >>> ex = get_task("majority").sample(generator(0, "doc"), 4)
    >>> " ".join(ex.tokens)
    '<bos> b f b v <sep> b <eos>'
    """

    name = "majority"
    description = "most frequent letter (unique by construction)"
    symbols = tuple("abcdefghijklmnopqrstuvwxyz")

    def _one(self, rng, n):
        while True:
            x = rng.integers(0, 26, size=n)
            counts = np.bincount(x, minlength=26)
            if (counts == counts.max()).sum() == 1:
                return x, [int(counts.argmax())]

    def _batch(self, rng, n, count):
        x = np.empty((count, n), dtype=np.int64)
        todo = np.arange(count)
        while todo.size:
            x[todo] = rng.integers(0, 26, size=(todo.size, n))
            counts = _row_counts(x[todo], 26)
            tied = (counts == counts.max(axis=1, keepdims=True)).sum(axis=1) > 1
            todo = todo[tied]
        return x, _row_counts(x, 26).argmax(axis=1)[:, None]


def _row_counts(x: np.ndarray, k: int) -> np.ndarray:
    """``counts[b, s]``: occurrences of symbol s in row b."""
    flat = (x + k * np.arange(len(x))[:, None]).ravel()
    return np.bincount(flat, minlength=k * len(x)).reshape(len(x), k)


class _Distinct(AlgorithmicTask):
    """n distinct tokens out of 150, drawn without replacement."""

    symbols = tuple(str(i) for i in range(150))
    max_length = 150

    def max_tokens(self, length: int) -> int:
        """``<bos>``, n tokens, ``<sep>``, n tokens, ``<eos>``."""
        return 2 * length + 3

    def _draw(self, rng, n):
        return rng.choice(150, size=n, replace=False)

    def _draw_batch(self, rng, n, count):
        return np.argsort(rng.random((count, 150)), axis=1)[:, :n]


@register("sort")
class Sort(_Distinct):
    """Sort n distinct tokens from 0..149 increasingly.

    >>> ex = get_task("sort").sample(generator(0, "doc"), 4)
    >>> " ".join(ex.tokens)
    '<bos> 133 72 107 109 <sep> 72 107 109 133 <eos>'
    """

    name = "sort"
    description = "sort distinct tokens 0..149"

    def _one(self, rng, n):
        x = self._draw(rng, n)
        return x, np.sort(x)

    def _batch(self, rng, n, count):
        x = self._draw_batch(rng, n, count)
        return x, np.sort(x, axis=1)


@register("copy_unique")
class CopyUnique(_Distinct):
    """Copy n distinct tokens from 0..149.

    >>> ex = get_task("copy_unique").sample(generator(0, "doc"), 3)
    >>> " ".join(ex.tokens)
    '<bos> 133 109 73 <sep> 133 109 73 <eos>'
    """

    name = "copy_unique"
    description = "copy distinct tokens 0..149"

    def _one(self, rng, n):
        x = self._draw(rng, n)
        return x, x

    def _batch(self, rng, n, count):
        x = self._draw_batch(rng, n, count)
        return x, x


@register("copy_repeat")
class CopyRepeat(AlgorithmicTask):
    """Copy n i.i.d. uniform tokens over {a, b}.

    >>> ex = get_task("copy_repeat").sample(generator(0, "doc"), 3)
    >>> " ".join(ex.tokens)
    '<bos> b b a <sep> b b a <eos>'
    """

    name = "copy_repeat"
    description = "copy a string over {a, b} (repeats allowed)"
    symbols = ("a", "b")

    def max_tokens(self, length: int) -> int:
        """``<bos>``, n tokens, ``<sep>``, n tokens, ``<eos>``."""
        return 2 * length + 3

    def _one(self, rng, n):
        x = rng.integers(0, 2, size=n)
        return x, x

    def _batch(self, rng, n, count):
        x = rng.integers(0, 2, size=(count, n))
        return x, x


PARITY_BALANCES = ("length", "ones")
"""How ``parity`` spreads the examples of a bin (its ``balance`` option): ``length`` (the
default) as many per length, the number of ones uniform over ``0..n`` at each length n;
``ones`` as many per number of ones (ALTA's parity sets, seed 001 App. D.1)."""


@register("parity")
class Parity(AlgorithmicTask):
    """Whether a bit string has an even (``e``) or odd (``o``) number of ones.

    At a given length n the number of ones is uniform over [0, n] (:meth:`sample`). A bin
    ``lo-hi`` is drawn by its ``balance`` option (:data:`PARITY_BALANCES`):

    * ``length`` (default): the length uniform over ``lo..hi``, then the ones as above; a
      count k is then rarer the larger it is (only lengths >= k hold it);
    * ``ones``: the number of ones k uniform over ``0..hi`` (every count the bin can hold),
      then the length uniform over ``max(k, lo)..hi``, then the positions of the ones
      uniformly: roughly as many examples per number of ones, as in ALTA's train and test
      sets (App. D.1). Lengths start at 1 in both (``min_length``; ALTA's ranges start at 0).

    >>> ex = get_task("parity").sample(generator(0, "doc"), 5)
    >>> " ".join(ex.tokens)
    '<bos> 1 1 0 1 1 <sep> e <eos>'
    >>> task = get_task("parity", balance="ones")
    >>> drawn = task.sample_bin(generator(0, "doc"), "21-40", 4)
    >>> [(ex.length, ex.tokens.count("1")) for ex in drawn]
    [(30, 30), (37, 36), (22, 20), (38, 29)]
    """

    name = "parity"
    description = "parity of the number of ones (e/o)"
    symbols = ("0", "1")
    answer_symbols = ("e", "o")
    slices = ("length", "ones")

    def __init__(self, balance: str = "length") -> None:
        if not isinstance(balance, str) or balance not in PARITY_BALANCES:
            raise RasplabError(
                f"parity option balance must be one of: {', '.join(PARITY_BALANCES)} "
                f"(got {balance!r})"
            )
        super().__init__()
        self.balance = balance

    def slice_value(self, example: Example, name: str) -> int:
        """``ones``: the number of ones in the input (ALTA scores parity by it); else as Task."""
        if name == "ones":
            return example.tokens[1 : 1 + example.length].count("1")
        return super().slice_value(example, name)

    def _one(self, rng, n):
        k1 = int(rng.integers(0, n + 1))
        bits = np.array([1] * k1 + [0] * (n - k1))
        rng.shuffle(bits)
        return bits, [k1 % 2]

    def _batch(self, rng, n, count):
        k1 = rng.integers(0, n + 1, size=count)
        return _shuffled_bits(rng, n - k1, n), (k1 % 2)[:, None]

    def _span(self, bin: Bin | str) -> tuple[int, int]:
        """The shortest and longest length of ``bin`` (parity has every length from 1)."""
        lengths = self.lengths(bin)
        return lengths[0], lengths[-1]

    def sample_in(self, rng: np.random.Generator, bin: Bin | str) -> Example:
        """One example of ``bin`` drawn by :attr:`balance`, one draw at a time (the reference
        of :meth:`sample_bin`)."""
        if self.balance == "length":
            return super().sample_in(rng, bin)
        lo, hi = self._span(bin)
        k = int(rng.integers(0, hi + 1))
        n = int(rng.integers(max(k, lo), hi + 1))
        bits = np.array([1] * k + [0] * (n - k))
        rng.shuffle(bits)
        return answer_example([BOS, *self._in[bits].tolist(), SEP], [self._out[k % 2]], n)

    def sample_bin(self, rng: np.random.Generator, bin: Bin | str, n: int) -> list[Example]:
        """``n`` examples of ``bin`` drawn by :attr:`balance` (vectorized: all the counts,
        then all the lengths, then the bits of each length in one batch)."""
        if self.balance == "length":
            return super().sample_bin(rng, bin, n)
        lo, hi = self._span(bin)
        ones = rng.integers(0, hi + 1, size=n)
        sizes = rng.integers(np.maximum(ones, lo), hi + 1, size=n)
        out: list[Example | None] = [None] * n
        for m in np.unique(sizes).tolist():
            where = np.nonzero(sizes == m)[0]
            bits = _shuffled_bits(rng, m - ones[where], m)
            answers = self._out[ones[where] % 2].tolist()
            for i, xs, y in zip(where.tolist(), self._in[bits].tolist(), answers):
                out[i] = answer_example([BOS, *xs, SEP], [y], m)
        return out  # type: ignore[return-value]
