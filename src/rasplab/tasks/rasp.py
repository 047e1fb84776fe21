"""The RASP tasks of Learning Transformer Programs (seed 002) as per-position labelling tasks.

Inputs draw their length uniformly from the bin, then symbols i.i.d. uniform (Dyck: see
:class:`RaspDyck`). Labels depend on the whole input, so these tasks are not causal.

Splits (``train``/``val``/``test``, 16,000 / 2,000 / 2,000 by default) are disjoint by
construction: an example's split is fixed by its tokens alone (CRC32 of the space-joined
tokens mod 10: 0-7 train, 8 val, 9 test), whatever the seed or bin. Each split's dataset is a
seeded set of distinct examples of that split; when a bin has fewer, all of them are returned
and the count reported. ``sample`` (on-the-fly training) only returns training-split examples.
"""

from __future__ import annotations

import itertools
import string
import zlib
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks import get_task  # noqa: F401 (doctests)
from rasplab.tasks.base import BOS, EOS, PAD, Example, Target, Task, register

SPLIT_SIZES = {"train": 16000, "val": 2000, "test": 2000}


def split_of(tokens: Sequence[str]) -> str:
    """The split an example belongs to, from its tokens only.

    >>> split_of(["<bos>", "a", "b"])
    'train'
    """
    bucket = zlib.crc32(" ".join(tokens).encode()) % 10
    return "train" if bucket < 8 else ("val" if bucket == 8 else "test")


class RaspTask(Task):
    """Shared machinery: symbols, options (``k`` symbols, ``max_len`` tokens), splits."""

    target_kind = "labels"
    causal = False
    splits = ("train", "val", "test")
    specials: tuple[str, ...] = (PAD, BOS)
    default_k = 6
    default_max_len = 8

    def __init__(self, k: int | None = None, max_len: int | None = None) -> None:
        self.k = self.default_k if k is None else k
        self.max_len = self.default_max_len if max_len is None else max_len
        if not 1 <= self.k <= 26:
            raise RasplabError(
                f"{self.name} option k (number of symbols) must be in 1..26, got {self.k}"
            )
        inputs = len(self.specials) - 1  # <pad> is never in an input
        if self.max_len < inputs + 1:
            raise RasplabError(
                f"{self.name} option max_len must be at least {inputs + 1}, got {self.max_len}"
            )
        self.symbols = tuple(string.ascii_lowercase[: self.k])
        self.vocab = self.specials + self.symbols
        self.max_length = self.max_len - inputs
        self.train_bin = Bin(self.min_length, self.max_length)
        self.test_bins = (self.train_bin,)

    def max_tokens(self, length: int) -> int:
        """The input's specials plus ``length`` symbols."""
        return length + len(self.specials) - 1

    @abstractmethod
    def labels(self, xs: list[str]) -> list[Target]:
        """The label of each input symbol (``None`` where unscored)."""

    def example(self, xs: Sequence[str]) -> Example:
        """The example for input symbols ``xs``."""
        xs = list(xs)
        tail = (EOS,) if EOS in self.specials else ()
        targets = (None, *self.labels(xs)) + (None,) * len(tail)
        return Example(tokens=(BOS, *xs, *tail), targets=targets, length=len(xs))

    def candidates(
        self, rng: np.random.Generator, lengths: Sequence[int], split: str | None = None
    ) -> list[Example]:
        """One candidate per length (i.i.d. uniform symbols); with ``split``, only those of
        that split are kept (checked on the tokens, before labelling)."""
        lengths = [int(n) for n in lengths]
        draws = rng.integers(0, self.k, size=(len(lengths), max(lengths, default=0))).tolist()
        return self._labelled(
            ([self.symbols[i] for i in row[:n]] for row, n in zip(draws, lengths)), split
        )

    def _labelled(self, inputs, split: str | None) -> list[Example]:
        """Examples for the inputs that belong to ``split`` (all when ``None``)."""
        tail = [EOS] if EOS in self.specials else []
        return [
            self.example(xs)
            for xs in inputs
            if split is None or split_of([BOS, *xs, *tail]) == split
        ]

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """A training-split example of ``length`` (candidates redrawn until in ``train``)."""
        self.lengths(Bin(length, length))
        for _ in range(10000):
            ex = self.candidates(rng, [length])[0]
            if split_of(ex.tokens) == "train":
                return ex
        raise RasplabError(f"{self.name} found no training example of length {length}")

    def inputs(self, length: int) -> Sequence[Sequence[str]]:
        """Every input of ``length`` (lazily), for exhaustive small bins."""
        return itertools.product(self.symbols, repeat=length)

    def count(self, length: int) -> int:
        """Number of distinct inputs of ``length``."""
        return self.k**length

    def exhaustive(self, bin: Bin, limit: int) -> list[Example] | None:
        """Every example of the bin when there are at most ``limit``."""
        lengths = self.lengths(bin)
        if sum(self.count(n) for n in lengths) > limit:
            return None
        return [self.example(xs) for n in lengths for xs in self.inputs(n)]

    def default_bin(self, split: str) -> Bin:
        """Every supported length."""
        return self.train_bin

    def default_size(self, split: str) -> int:
        """16,000 / 2,000 / 2,000."""
        return SPLIT_SIZES[split]

    def stream(
        self, split: str, bin: Bin | str | None = None, n: int | None = None, seed: int = 0
    ) -> Iterator[Example]:
        """Up to ``n`` distinct examples of ``split`` (fewer when the bin has fewer)."""
        if split not in self.splits:
            raise RasplabError(
                f"{self.name} has no split {split!r}; choose one of: {', '.join(self.splits)}"
            )
        bin = self.default_bin(split) if bin is None else Bin.parse(bin)
        n = self.default_size(split) if n is None else n
        if n < 0:
            raise RasplabError(f"n must be a non-negative number of examples, got {n}")
        rng = generator(seed, self.name, split, str(bin))
        keep: Callable[[Example], bool] = lambda ex: split_of(ex.tokens) == split  # noqa: E731
        return self.iter_distinct(
            rng, bin, n, keep=keep, draw=lambda g, lengths: self.candidates(g, lengths, split)
        )


@register("rasp_reverse")
class RaspReverse(RaspTask):
    """Reverse the input: the label at input position i is x_{n+1-i}.

    >>> ex = get_task("rasp_reverse").example("abcc")
    >>> ex.tokens, ex.targets
    (('<bos>', 'a', 'b', 'c', 'c', '<eos>'), (None, 'c', 'c', 'b', 'a', None))
    """

    name = "rasp_reverse"
    description = "RASP reverse (per-position labels)"
    specials = (PAD, BOS, EOS)
    default_k = 5

    @property
    def classes(self) -> tuple[str, ...]:
        """The symbols."""
        return self.symbols

    def labels(self, xs):
        return xs[::-1]


@register("rasp_sort")
class RaspSort(RaspTask):
    """Sort the input ascending (repeats kept): the label at position i is sorted(x)_i.

    >>> get_task("rasp_sort").example("cabc").targets
    (None, 'a', 'b', 'c', 'c', None)
    """

    name = "rasp_sort"
    description = "RASP sort with repeats (per-position labels)"
    specials = (PAD, BOS, EOS)
    default_k = 5

    @property
    def classes(self) -> tuple[str, ...]:
        """The symbols."""
        return self.symbols

    def labels(self, xs):
        return sorted(xs, key=self.symbols.index)


@register("rasp_hist")
class RaspHist(RaspTask):
    """Histogram: the label at position i is the number of occurrences of x_i.

    >>> get_task("rasp_hist").example("abca").targets
    (None, '2', '1', '1', '2')
    """

    name = "rasp_hist"
    description = "RASP histogram: count of each token"

    @property
    def classes(self) -> tuple[str, ...]:
        """Counts 1..max_length."""
        return tuple(str(i) for i in range(1, self.max_length + 1))

    def labels(self, xs):
        counts = Counter(xs)
        return [str(counts[x]) for x in xs]


@register("rasp_double_hist")
class RaspDoubleHist(RaspTask):
    """Double histogram: the number of distinct symbols whose count equals count(x_i).

    >>> get_task("rasp_double_hist").example("aabcd").targets
    (None, '1', '1', '3', '3', '3')
    """

    name = "rasp_double_hist"
    description = "RASP double histogram: how many symbols share each token's count"

    @property
    def classes(self) -> tuple[str, ...]:
        """1..min(k, max_length)."""
        return tuple(str(i) for i in range(1, min(self.k, self.max_length) + 1))

    def labels(self, xs):
        counts = Counter(xs)
        same = Counter(counts.values())
        return [str(same[counts[x]]) for x in xs]


@register("rasp_most_freq")
class RaspMostFreq(RaspTask):
    """Distinct symbols by descending count, ties by first occurrence; positions past the
    number of distinct symbols are filler and not scored.

    >>> get_task("rasp_most_freq").example("bacca").targets
    (None, 'a', 'c', 'b', None, None)
    """

    name = "rasp_most_freq"
    description = "RASP most-frequent: distinct tokens by count (filler unscored)"

    @property
    def classes(self) -> tuple[str, ...]:
        """The symbols."""
        return self.symbols

    def labels(self, xs):
        counts = Counter(xs)
        first = {x: xs.index(x) for x in counts}
        order = sorted(counts, key=lambda x: (-counts[x], first[x]))
        return order + [None] * (len(xs) - len(order))
