"""Token-id batches checked in one place, before the interpreter or a compiled model runs.

Both runners take a batch as a list of token-id sequences. :func:`check_batch` turns one into
lists of ints, or raises one :class:`~rasplab.errors.RasplabError` naming the argument and
the first bad item: a string where a batch is expected, a token that is not an integer, a
token outside the input range, a sequence longer than the position range.

>>> check_batch([[1, 0], (2,)], input_range=3)
[[1, 0], [2]]
>>> check_batch("1 0 1", input_range=2)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: batch must be a list of token-id sequences, got a string; encode the input first (e.g. entry.encode(text)) and pass [ids]
>>> check_batch([[1, 0.5]], input_range=2)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: batch: token 0.5 at position 1 is not an integer token id
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from rasplab.errors import RasplabError


def _suffix(b: int, size: int) -> str:
    return f" (sequence {b} of the batch)" if size > 1 else ""


def _token(value: object) -> int | None:
    """``value`` as an int token id, or None when it is not an integer."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return None


def check_batch(
    batch: object, input_range: int, position_range: int | None = None, what: str = "batch"
) -> list[list[int]]:
    """The batch as lists of int token ids in ``[0, input_range)``, each at most
    ``position_range`` long; anything else is one RasplabError naming ``what``."""
    if isinstance(batch, (str, bytes)):
        raise RasplabError(
            f"{what} must be a list of token-id sequences, got a string; encode the input "
            "first (e.g. entry.encode(text)) and pass [ids]"
        )
    if isinstance(batch, np.ndarray):
        batch = batch.tolist() if batch.ndim == 2 else list(batch)
    if not isinstance(batch, Sequence):
        raise RasplabError(
            f"{what} must be a list of token-id sequences, got {type(batch).__name__}"
        )
    out = []
    for b, seq in enumerate(batch):
        where = _suffix(b, len(batch))
        if isinstance(seq, np.ndarray):
            seq = seq.tolist()
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
            raise RasplabError(
                f"{what} must be a list of token-id sequences; item {b} is "
                f"{type(seq).__name__} {seq!r:.40}"
            )
        ids = []
        for pos, value in enumerate(seq):
            tok = _token(value)
            if tok is None:
                raise RasplabError(
                    f"{what}: token {value!r} at position {pos} is not an integer token id{where}"
                )
            if not 0 <= tok < input_range:
                raise RasplabError(
                    f"token id {tok} at position {pos} is outside the input range "
                    f"[0, {input_range}){where}"
                )
            ids.append(tok)
        if position_range is not None and len(ids) > position_range:
            raise RasplabError(
                f"input of length {len(ids)} exceeds the program's position_range "
                f"{position_range}{where}"
            )
        out.append(ids)
    return out


@dataclass(frozen=True)
class InputSpec:
    """How a program's valid inputs look, so that ``verify``, ``minimal`` and ``explore`` draw
    only inputs the program is defined on (``program(..., inputs=InputSpec(...))``).

    * ``start``: the token id every input begins with (None: no start token);
    * ``separator``: a token id that appears exactly once, after the start token (None: none);
    * ``alphabet``: the token ids allowed at the other positions: one sequence for every
      position, or a function ``alphabet(i, n)`` giving those allowed at position ``i`` of an
      ``n``-token input (None: every token id but ``start`` and ``separator``);
    * ``sampler``: ``sampler(rng, n)`` draws one valid input of ``n`` tokens itself (the other
      fields are then only checked against the input range); inputs are not enumerated.

    >>> spec = InputSpec(start=0, alphabet=(1, 2))
    >>> spec.min_length, spec.count(3), list(spec.enumerate(2))
    (1, 4, [[0, 1], [0, 2]])
    >>> spec.problem([1, 2])
    'position 0 must be the start token 0, got 1'
    >>> spec.sample(np.random.default_rng(0), 4)[0]
    0
    >>> InputSpec(start=0, separator=3, alphabet=(1, 2)).problem([0, 1, 3, 3])
    'the separator 3 must appear exactly once, got 2 times'
    """

    start: int | None = None
    separator: int | None = None
    alphabet: Sequence[int] | Callable[[int, int], Sequence[int]] | None = None
    sampler: Callable[[np.random.Generator, int], Sequence[int]] | None = None

    def __post_init__(self) -> None:
        for name in ("start", "separator"):
            value = getattr(self, name)
            if value is not None and _token(value) is None:
                raise RasplabError(f"InputSpec {name} must be an int token id, got {value!r}")
        if self.start is not None and self.start == self.separator:
            raise RasplabError(f"InputSpec start and separator are both token {self.start}")
        if self.alphabet is not None and not callable(self.alphabet):
            if isinstance(self.alphabet, (str, bytes)) or not isinstance(
                self.alphabet, Sequence | range
            ):
                raise RasplabError(
                    "InputSpec alphabet must be a sequence of token ids or a function "
                    f"alphabet(i, n), got {type(self.alphabet).__name__}"
                )
            bad = [t for t in self.alphabet if _token(t) is None]
            if bad or not self.alphabet:
                raise RasplabError(
                    "InputSpec alphabet must hold at least one int token id"
                    + (f", got {bad[0]!r}" if bad else "")
                )
            object.__setattr__(self, "alphabet", tuple(int(t) for t in self.alphabet))
        if self.sampler is not None and not callable(self.sampler):
            raise RasplabError(
                f"InputSpec sampler must be a function sampler(rng, n), got {self.sampler!r}"
            )

    def check_range(self, input_range: int, name: str = "program") -> None:
        """Refuse token ids outside ``[0, input_range)`` (called by ``program()``)."""
        fixed = [t for t in (self.start, self.separator) if t is not None]
        if isinstance(self.alphabet, tuple):
            fixed += list(self.alphabet)
        bad = [t for t in fixed if not 0 <= t < input_range]
        if bad:
            raise RasplabError(
                f"{name}: inputs spec names token id {bad[0]}, outside the input range "
                f"[0, {input_range})"
            )

    @property
    def min_length(self) -> int:
        """The fewest tokens a valid input has (the start token and the separator)."""
        return (self.start is not None) + (self.separator is not None)

    def symbols(self, i: int, n: int, input_range: int) -> list[int]:
        """The token ids allowed at ordinary position ``i`` of an ``n``-token input."""
        if self.alphabet is None:
            special = {self.start, self.separator}
            return [t for t in range(input_range) if t not in special]
        allowed = self.alphabet(i, n) if callable(self.alphabet) else self.alphabet
        return [int(t) for t in allowed]

    def _first(self) -> int:
        return 1 if self.start is not None else 0

    def problem(self, ids: Sequence[int], input_range: int | None = None) -> str | None:
        """Why ``ids`` is not a valid input (None when it is, or when only a sampler says)."""
        n = len(ids)
        if n < self.min_length:
            return f"a valid input has at least {self.min_length} tokens, got {n}"
        if self.start is not None and ids[0] != self.start:
            return f"position 0 must be the start token {self.start}, got {ids[0]}"
        if self.start is not None and self.start in ids[1:]:
            return f"the start token {self.start} may appear only at position 0"
        if self.separator is not None and list(ids).count(self.separator) != 1:
            times = list(ids).count(self.separator)
            return f"the separator {self.separator} must appear exactly once, got {times} times"
        if self.sampler is not None or (self.alphabet is None and input_range is None):
            return None
        for i in range(self._first(), n):
            if ids[i] != self.separator and ids[i] not in self.symbols(i, n, input_range or 0):
                return f"token {ids[i]} is not allowed at position {i}"
        return None

    def sample(self, rng: np.random.Generator, n: int, input_range: int = 0) -> list[int]:
        """One valid input of ``n`` tokens (``n >= min_length``)."""
        if self.sampler is not None:
            return [int(t) for t in self.sampler(rng, n)]
        first = self._first()
        sep = int(rng.integers(first, n)) if self.separator is not None else None
        out = [] if self.start is None else [self.start]
        for i in range(first, n):
            if i == sep:
                out.append(self.separator)
                continue
            allowed = self.symbols(i, n, input_range)
            if not allowed:
                raise RasplabError(f"inputs spec allows no token at position {i} of {n}")
            out.append(allowed[int(rng.integers(0, len(allowed)))])
        return out

    def enumerate(self, n: int, input_range: int = 0) -> Iterator[list[int]]:
        """Every valid input of ``n`` tokens (none below ``min_length``); needs no sampler."""
        if self.sampler is not None:
            raise RasplabError("an inputs spec with a sampler cannot enumerate its inputs")
        if n < self.min_length:
            return
        first = self._first()
        head = [] if self.start is None else [self.start]
        seps = range(first, n) if self.separator is not None else [None]
        for sep in seps:
            choices = [
                [self.separator] if i == sep else self.symbols(i, n, input_range)
                for i in range(first, n)
            ]
            for rest in itertools.product(*choices):
                yield head + list(rest)

    def count(self, n: int, input_range: int = 0) -> int | None:
        """How many valid inputs of ``n`` tokens there are (None with a sampler)."""
        if self.sampler is not None:
            return None
        if n < self.min_length:
            return 0
        first = self._first()
        seps = range(first, n) if self.separator is not None else [None]
        total = 0
        for sep in seps:
            ways = 1
            for i in range(first, n):
                ways *= 1 if i == sep else len(self.symbols(i, n, input_range))
            total += ways
        return total
