"""The Task protocol shared by every benchmark family, and the task registry.

A task turns a seeded generator and a length into one :class:`Example`: the token sequence a
model reads and, per position, what it must output there (``None`` where nothing is scored).
Targets are one of four kinds (:data:`TARGET_KINDS`):

* ``"answer"``: ``targets[t]`` is the next token: scored from the separator on, so the scored
  targets spell the answer and ``<eos>``; the tokens end with that ``<eos>`` (unscored);
* ``"labels"``: ``targets[t]`` is a per-position label (RASP tasks);
* ``"next_set"``: ``targets[t]`` is the sorted tuple of legal next symbols (regular languages);
* ``"regression"``: ``targets[t]`` is a float (the bound tasks).

Training data is sampled on the fly (:meth:`Task.sample_many`, length uniform over the
training bin); each test bin is a fixed seeded set of distinct examples (:meth:`Task.dataset`).
Same seed, same bytes on every machine: randomness only from :mod:`rasplab.seeding`.
:meth:`Task.stream` yields the same examples as :meth:`Task.dataset`, generated in batches of
at most :data:`STREAM_EXAMPLES` examples and :data:`STREAM_TOKENS` tokens, so that
``rasplab data --n 10000000`` runs in bounded memory.

Hooks a family may override for ``rasplab data``: :meth:`Task.record` (its JSON record),
:meth:`Task.text` (one text line), :attr:`Task.splits` (split names), :meth:`Task.default_bin`
and :meth:`Task.default_size`. APE helpers: :meth:`Task.num_positions` (P) and
:meth:`Task.offset_range` / :meth:`Task.sample_offset`.
"""

from __future__ import annotations

import hashlib
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.seeding import generator

Target = None | str | tuple | float
TARGET_KINDS = ("answer", "labels", "next_set", "regression")
SPLITS = ("train", "test")
DEFAULT_TEST_SIZE = 2000
STREAM_EXAMPLES = 16384
"""The most examples :meth:`Task.stream` samples in one batch: a dataset of at most this many
(and at most :data:`STREAM_TOKENS` tokens) is drawn in one batch, exactly as before streaming."""
STREAM_TOKENS = 2**22
"""The most tokens (counted with :meth:`Task.max_tokens` of the bin's longest length) of one
batch of :meth:`Task.stream`."""
PAD, BOS, SEP, EOS = "<pad>", "<bos>", "<sep>", "<eos>"
SPECIALS = (PAD, BOS, SEP, EOS)
"""The special tokens, first in every vocabulary that uses them, in this order."""


@dataclass(frozen=True)
class Example:
    """One example: ``tokens`` read left to right, ``targets[t]`` scored after ``tokens[:t+1]``.

    >>> ex = Example(
    ...     tokens=("<bos>", "1", "0", "<sep>", "1", "<eos>"),
    ...     targets=(None, None, None, "1", "<eos>", None),
    ...     length=2,
    ... )
    >>> ex.scored_positions()
    [3, 4]
    """

    tokens: tuple[str, ...]
    targets: tuple[Target, ...]
    length: int

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.targets):
            raise ValueError(
                f"tokens ({len(self.tokens)}) and targets ({len(self.targets)}) differ in length"
            )

    def scored_positions(self) -> list[int]:
        """Positions whose target is scored (not ``None``)."""
        return [t for t, y in enumerate(self.targets) if y is not None]

    def to_json(self, task: str) -> dict:
        """The JSONL record of ``docs/tasks.md``: task, length, tokens, targets (sets as lists)."""
        return {
            "task": task,
            "length": self.length,
            "tokens": list(self.tokens),
            "targets": [list(y) if isinstance(y, tuple) else y for y in self.targets],
        }


def answer_example(prompt: Sequence[str], answer: Sequence[str], length: int) -> Example:
    """An answer-task example: ``prompt`` (ending in its separator), ``answer``, ``<eos>``;
    scored are the separator (first answer token) and each answer token (the next one, then
    ``<eos>``); the final ``<eos>`` position is not scored.

    >>> answer_example(["<bos>", "1", "0", "<sep>"], ["1"], 2).targets
    (None, None, None, '1', '<eos>', None)
    """
    answer = tuple(answer)
    targets = (None,) * (len(prompt) - 1) + answer + (EOS, None)
    return Example(tokens=(*prompt, *answer, EOS), targets=targets, length=length)


class Task(ABC):
    """A benchmark task: fixed vocabulary, a length definition, bins and seeded sampling.

    Subclasses set the class attributes and implement :meth:`sample` (the reference
    semantics); most also override :meth:`allows_length`, :meth:`max_tokens`, and for speed
    :meth:`sample_many` (a vectorized batch sampler with the same distribution). Finite
    families override :meth:`exhaustive` (all examples of a small bin) or :meth:`stream`.
    Hooks for ``rasplab data``: :meth:`record` (the JSON record), :meth:`text` (one text
    line) and :attr:`splits` (the split names ``dataset`` accepts).
    """

    name: str = ""
    description: str = ""
    vocab: tuple[str, ...] = ()
    target_kind: str = "answer"
    train_bin: Bin = Bin(1, 50)
    test_bins: tuple[Bin, ...] = (Bin(1, 50), Bin(51, 100), Bin(101, 150))
    min_length: int = 1
    max_length: int | None = None
    splits: tuple[str, ...] = SPLITS
    causal: bool = True
    """Whether every target is computable from ``tokens[:t+1]`` (False: labelling tasks whose
    labels depend on later tokens, e.g. ``rasp_reverse``, need bidirectional attention)."""
    #: APE training offsets are multiples of this (1: any offset). A task whose target depends
    #: on the absolute position modulo m (ModPTask: m = p) sets it to m, so that the table row
    #: ``o + t - 1`` of token t keeps ``t - 1 (mod m)`` and the pattern stays learnable.
    offset_step: int = 1
    slices: tuple[str, ...] = ("length",)
    """Per-example integer attributes an evaluation can be broken down by
    (:meth:`slice_value`); every task has ``length``, parity adds ``ones``."""

    def slice_value(self, example: Example, name: str) -> int:
        """The integer attribute ``name`` (one of :attr:`slices`) of ``example``.

        >>> task = get_task("parity")
        >>> ex = task.sample(generator(0, "doc"), 5)
        >>> [task.slice_value(ex, s) for s in task.slices]
        [5, 4]
        """
        if name == "length":
            return example.length
        raise unknown_name(f"slice of task {self.name!r}", name, self.slices)

    def record(self, example: Example) -> dict:
        """The JSON record written by ``rasplab data`` for ``example`` (override to change it)."""
        return example.to_json(self.name)

    def text(self, example: Example) -> str:
        """One line of ``--format text``: the tokens, then (unless an answer task) the targets."""
        line = " ".join(example.tokens)
        if self.target_kind == "answer":
            return line
        return line + "\t" + " ".join(_target_text(y) for y in example.targets)

    @abstractmethod
    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """One example of exactly ``length`` (the family's definition of length)."""

    def sample_many(self, rng: np.random.Generator, lengths: Sequence[int]) -> list[Example]:
        """One example per entry of ``lengths``; same distribution as :meth:`sample` (which
        stays the reference), vectorized where a family overrides it."""
        return [self.sample(rng, int(n)) for n in lengths]

    @property
    def classes(self) -> tuple[Hashable, ...]:
        """The fixed, ordered output classes (``targets`` values); ``()`` for regression."""
        return self.vocab if self.target_kind == "answer" else ()

    def max_tokens(self, length: int) -> int:
        """An upper bound on the token count of an example of ``length`` (for position tables)."""
        return length + 2

    def num_positions(self) -> int:
        """P, the number of absolute position embeddings an APE model needs: enough for the
        longest example of the training bin and every default test bin."""
        bins = (self.train_bin, *self.test_bins)
        return max(self.max_tokens(max(self.lengths(b))) for b in bins)

    def offset_range(self, n_tokens: int, num_positions: int | None = None) -> tuple[int, int]:
        """Inclusive range ``(0, P - n_tokens)`` of APE training offsets for a sequence of
        ``n_tokens`` tokens (positions ``o, o+1, ...``; evaluation uses offset 0)."""
        p = self.num_positions() if num_positions is None else num_positions
        if n_tokens > p:
            raise RasplabError(f"a sequence of {n_tokens} tokens does not fit in {p} positions")
        return 0, p - n_tokens

    def sample_offset(
        self, rng: np.random.Generator, n_tokens: int, num_positions: int | None = None
    ) -> int:
        """A random APE offset, uniform over the multiples of :attr:`offset_step` in
        :meth:`offset_range` (step 1: every offset of the range)."""
        lo, hi = self.offset_range(n_tokens, num_positions)
        step = self.offset_step
        return lo + step * int(rng.integers(0, (hi - lo) // step + 1))

    def lengths(self, bin: Bin | str) -> list[int]:
        """The lengths in ``bin`` at which this task has examples; error if there are none."""
        bin = Bin.parse(bin)
        hi = bin.hi if self.max_length is None else min(bin.hi, self.max_length)
        out = [n for n in range(max(bin.lo, self.min_length), hi + 1) if self.has_length(n)]
        if not out:
            raise RasplabError(
                f"task {self.name!r} has no examples with length in bin {bin}; "
                f"its lengths start at {self.min_length}"
                + (f" and end at {self.max_length}" if self.max_length is not None else "")
            )
        return out

    def has_length(self, length: int) -> bool:
        """Whether some example has exactly this length: an integer from :attr:`min_length`
        to :attr:`max_length` (if any) that the family allows (:meth:`allows_length`).
        Families override :meth:`allows_length`, never this, so the bounds hold for all.

        >>> task = get_task("tomita1")
        >>> [task.has_length(n) for n in (-1, 0, 1, 2)]
        [False, False, True, True]
        """
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
            return False
        if length < self.min_length:
            return False
        if self.max_length is not None and length > self.max_length:
            return False
        return self.allows_length(int(length))

    def allows_length(self, length: int) -> bool:
        """The family's own rule for a length within the bounds (override for periodic
        languages: only odd lengths, only multiples of 3, ...)."""
        return True

    def default_bin(self, split: str) -> Bin:
        """The bin used when none is given: the training bin, else the first test bin."""
        return self.train_bin if split == "train" else self.test_bins[0]

    def default_size(self, split: str) -> int:
        """The number of examples ``dataset`` returns when ``n`` is not given."""
        return DEFAULT_TEST_SIZE

    def draw_lengths(self, rng: np.random.Generator, bin: Bin | str, n: int) -> np.ndarray:
        """``n`` lengths uniform over the lengths of ``bin`` that have examples."""
        lengths = np.asarray(self.lengths(bin))
        return lengths[rng.integers(len(lengths), size=n)]

    def sample_in(self, rng: np.random.Generator, bin: Bin | str) -> Example:
        """One example with length uniform over the lengths of ``bin`` that have examples
        (the per-example reference of :meth:`sample_bin`)."""
        lengths = self.lengths(bin)
        return self.sample(rng, lengths[int(rng.integers(len(lengths)))])

    def sample_bin(self, rng: np.random.Generator, bin: Bin | str, n: int) -> list[Example]:
        """``n`` fresh examples of ``bin``: :meth:`draw_lengths`, then :meth:`sample_many`.
        Every draw of training data and test candidates goes through here, so that a task
        whose examples are not drawn length first (``parity`` with ``balance=ones``) overrides
        this one method.

        >>> task = get_task("parity")
        >>> [ex.length for ex in task.sample_bin(generator(0, "doc"), "1-9", 4)]
        [7, 9, 5, 7]
        """
        return self.sample_many(rng, self.draw_lengths(rng, bin, n))

    def dataset(
        self, split: str, bin: Bin | str | None = None, n: int | None = None, seed: int = 0
    ) -> list[Example]:
        """A seeded dataset: ``train`` draws ``n`` examples on the fly; ``test`` is a fixed set
        of up to ``n`` (default 2,000) distinct examples, fewer when the bin has fewer.
        The list of :meth:`stream`'s examples."""
        return list(self.stream(split, bin, n, seed))

    def stream(
        self, split: str, bin: Bin | str | None = None, n: int | None = None, seed: int = 0
    ) -> Iterator[Example]:
        """The examples of :meth:`dataset`, generated batch by batch (:meth:`batch_size`)
        as they are consumed; the split and ``n`` are checked at once, before any draw.
        Families override this (not :meth:`dataset`) to define their own splits.

        >>> task = get_task("parity")
        >>> examples = task.stream("train", "5-9", n=3, seed=1)
        >>> [ex.length for ex in examples] == [ex.length for ex in task.dataset("train", "5-9", 3, 1)]
        True
        """
        if split not in self.splits:
            raise unknown_name("split", split, self.splits)
        bin = self.default_bin(split) if bin is None else Bin.parse(bin)
        n = self.default_size(split) if n is None else n
        if n < 0:
            raise RasplabError(f"n must be a non-negative number of examples, got {n}")
        rng = generator(seed, self.name, split, str(bin))
        if split == "train":
            return self._draw_stream(rng, bin, n)
        return self.iter_distinct(rng, bin, n)

    def batch_size(self, bin: Bin | str) -> int:
        """How many examples of ``bin`` :meth:`stream` samples at once: :data:`STREAM_EXAMPLES`,
        fewer when the bin's longest examples would exceed :data:`STREAM_TOKENS` tokens.

        >>> get_task("parity").batch_size("1-50"), get_task("parity").batch_size("100000-100000")
        (16384, 41)
        """
        longest = self.max_tokens(max(self.lengths(bin)))
        return max(1, min(STREAM_EXAMPLES, STREAM_TOKENS // longest))

    def _draw_stream(self, rng: np.random.Generator, bin: Bin, n: int) -> Iterator[Example]:
        """``n`` examples with lengths uniform over ``bin``, one :meth:`batch_size` at a time
        (lengths, then examples, per batch: a single batch when ``n`` fits in one)."""
        size = self.batch_size(bin) if n else 0
        while n > 0:
            k = min(n, size)
            yield from self.sample_bin(rng, bin, k)
            n -= k

    def exhaustive(self, bin: Bin, limit: int) -> list[Example] | None:
        """Every example with length in ``bin`` if there are at most ``limit`` of them, in a
        fixed order; ``None`` when there are more (or the family cannot enumerate)."""
        return None

    def distinct(
        self,
        rng: np.random.Generator,
        bin: Bin | str,
        n: int,
        max_misses: int = 2000,
        keep: Callable[[Example], bool] | None = None,
        draw: Callable[[np.random.Generator, Sequence[int]], list[Example]] | None = None,
    ) -> list[Example]:
        """The list of :meth:`iter_distinct`'s examples."""
        return list(self.iter_distinct(rng, bin, n, max_misses, keep, draw))

    def iter_distinct(
        self,
        rng: np.random.Generator,
        bin: Bin | str,
        n: int,
        max_misses: int = 2000,
        keep: Callable[[Example], bool] | None = None,
        draw: Callable[[np.random.Generator, Sequence[int]], list[Example]] | None = None,
    ) -> Iterator[Example]:
        """Up to ``n`` distinct examples (optionally only those ``keep`` accepts); the whole bin
        (shuffled) when it has at most ``n``; else sampled in batches of at most
        :meth:`batch_size`, stopping after ``max_misses`` consecutive duplicates or
        rejections. Candidates come from :meth:`sample_bin`; ``draw``, given, replaces
        :meth:`sample_many` after :meth:`draw_lengths`. Examples are told apart by a
        128-bit digest of their tokens, so memory grows by about 100 bytes per example
        whatever its length."""
        bin = Bin.parse(bin)
        every = self.exhaustive(bin, n if keep is None else max(n, 1) * 10)
        if every is not None:
            every = [ex for ex in every if keep is None or keep(ex)]
            if len(every) <= n:
                yield from (every[i] for i in rng.permutation(len(every)))
                return
        size = self.batch_size(bin)
        seen: set[bytes] = set()
        misses = 0
        while len(seen) < n and misses < max_misses:
            want = max(min(n - len(seen), size), 64)
            if draw is None:
                batch = self.sample_bin(rng, bin, want)
            else:
                batch = draw(rng, self.draw_lengths(rng, bin, want))
            before = len(seen)
            for ex in batch:
                key = _digest(ex.tokens)
                if key in seen or (keep is not None and not keep(ex)):
                    misses += 1
                    if misses >= max_misses:
                        break
                    continue
                misses = 0
                seen.add(key)
                yield ex
                if len(seen) == n:
                    break
            if len(seen) == before:  # a draw may drop candidates it rejects itself: misses too
                misses += want - len(batch)


def _digest(tokens: Sequence[str]) -> bytes:
    """A 128-bit digest of a token sequence (how :meth:`Task.iter_distinct` tells examples
    apart without keeping them)."""
    return hashlib.blake2b("\x00".join(tokens).encode(), digest_size=16).digest()


def _target_text(y: Target) -> str:
    """A target written for ``--format text``: ``_`` unscored, sets joined by ``,``."""
    if y is None:
        return "_"
    if isinstance(y, tuple):
        return ",".join(y)
    return str(y)


_REGISTRY: dict[str, Callable[..., Task]] = {}


def register(name: str) -> Callable[[Callable[..., Task]], Callable[..., Task]]:
    """Class/factory decorator adding a task constructor to the registry under ``name``."""

    def wrap(factory: Callable[..., Task]) -> Callable[..., Task]:
        if name in _REGISTRY:
            raise ValueError(f"task {name!r} registered twice")
        _REGISTRY[name] = factory
        return factory

    return wrap


def get_task(name: str, **options) -> Task:
    """Build the task registered as ``name`` with its keyword options (e.g. ``p=3, k=1``)."""
    factory = task_factory(name)
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C factory: let the call check
        signature = None
    if signature is not None:
        try:
            signature.bind(**options)
        except TypeError as err:
            known = [p for p in signature.parameters if p != "self"]
            raise RasplabError(
                f"task {name!r} does not accept options {sorted(options)} ({err}); "
                f"its options: {', '.join(known) or 'none'}"
            ) from err
    return factory(**options)


def task_factory(name: str) -> Callable[..., Task]:
    """The class (or factory) registered as ``name``, without building the task.

    >>> task_factory("ptg").__name__
    'PTGTask'
    """
    _load_families()
    if name not in _REGISTRY:
        raise unknown_name("task", name, _REGISTRY)
    return _REGISTRY[name]


def task_names() -> Sequence[str]:
    """Every registered task name, in registration order."""
    _load_families()
    return list(_REGISTRY)


def _load_families() -> None:
    """Import the family modules so that their ``@register`` decorators run."""
    # import cycle: the family modules import this one to register
    import rasplab.tasks.families  # noqa: F401
