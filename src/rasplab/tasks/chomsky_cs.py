"""The context-sensitive tasks of Delétang et al.'s Chomsky-hierarchy benchmark (the family's
format, lengths and bins are in :mod:`rasplab.tasks.chomsky`).

The binary arithmetic tasks draw their numbers as Python integers and stop at length
:data:`ARITHMETIC_MAX_LENGTH` (the benchmark's longest test length): a longer input is refused
with one clear error.
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from rasplab.seeding import generator  # noqa: F401 (doctests)
from rasplab.tasks.base import register
from rasplab.tasks.chomsky import ChomskyTask, _pick

ARITHMETIC_MAX_LENGTH = 500
PAD_SYMBOL = "#"
"""missing_duplicate_string's filler at the end of an odd-length input (the paper's empty
token)."""


@register("duplicate_string")
class DuplicateString(ChomskyTask):
    """The input ``w`` over ``a b``, output ``w w``.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("duplicate_string").sample(generator(0, "doc"), 3).tokens)
    '<bos> b b a <sep> b b a b b a <eos>'
    """

    name = "duplicate_string"
    level = "cs"
    description = "output the input over a b twice"
    symbols = ("a", "b")
    answer_symbols = ("a", "b")

    def answer_len(self, length: int) -> int:
        """Twice the input."""
        return 2 * length

    def _one(self, rng, n):
        x = _pick(rng, self.symbols, n)
        return x, x + x


@register("missing_duplicate_string")
class MissingDuplicateString(ChomskyTask):
    """``w w`` over ``a b`` (``|w| = n // 2``) with one uniform position replaced by ``_``, and a
    final ``#`` when n is odd; output the replaced symbol.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("missing_duplicate_string").sample(generator(0, "doc"), 7).tokens)
    '<bos> b b a b _ a # <sep> b <eos>'
    """

    name = "missing_duplicate_string"
    level = "cs"
    description = "w w over a b with one symbol replaced by _ (odd lengths end in #); output it"
    symbols = ("a", "b", "_", PAD_SYMBOL)
    answer_symbols = ("a", "b")
    min_length = 2

    def _one(self, rng, n):
        w = _pick(rng, ("a", "b"), n // 2)
        x = w + w
        i = int(rng.integers(0, len(x)))
        missing = x[i]
        x[i] = "_"
        return x + [PAD_SYMBOL] * (n % 2), [missing]


@register("odds_first")
class OddsFirst(ChomskyTask):
    """The symbols at positions 1, 3, 5, ... then those at 2, 4, ... (counting from 1).

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("odds_first").sample(generator(0, "doc"), 5).tokens)
    '<bos> b b a b a <sep> b a a b b <eos>'
    """

    name = "odds_first"
    level = "cs"
    description = "the symbols at odd positions, then those at even positions (from 1)"
    symbols = ("a", "b")
    answer_symbols = ("a", "b")

    def answer_len(self, length: int) -> int:
        """As long as the input."""
        return length

    def _one(self, rng, n):
        x = _pick(rng, self.symbols, n)
        return x, x[0::2] + x[1::2]


def _binary(rng: np.random.Generator, bits: int) -> int:
    """A number with exactly ``bits`` binary digits and no leading zero (``bits == 1``: 0 or 1),
    uniform among them."""
    if bits == 1:
        return int(rng.integers(0, 2))
    low = rng.integers(0, 2, size=bits - 1).tolist()
    return int("1" + "".join(map(str, low)), 2)


class _BinaryOperation(ChomskyTask):
    """``x OP y`` in binary (most significant bit first, no leading zeros but ``0`` itself);
    ``|x|`` uniform over 1..n-2 and ``|y| = n - 1 - |x|``; output ``x OP y`` the same way."""

    level = "cs"
    op = "+"
    symbols = ("0", "1")
    answer_symbols = ("0", "1")
    min_length = 3
    max_length = ARITHMETIC_MAX_LENGTH
    paper_eos = True

    def __init__(self) -> None:
        self.symbols = ("0", "1", self.op)
        super().__init__()

    def answer_len(self, length: int) -> int:
        """At most the two operands' digits: ``length - 1``."""
        return length - 1

    @abstractmethod
    def _apply(self, x: int, y: int) -> int:
        """The operation on the two operands."""

    def _one(self, rng, n):
        a = int(rng.integers(1, n - 1))
        x, y = _binary(rng, a), _binary(rng, n - 1 - a)
        return [*f"{x:b}", self.op, *f"{y:b}"], list(f"{self._apply(x, y):b}")


@register("binary_addition")
class BinaryAddition(_BinaryOperation):
    """``x + y`` in binary, output the sum in binary.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("binary_addition").sample(generator(0, "doc"), 6).tokens)
    '<bos> 1 1 0 + 1 1 <sep> 1 0 0 1 <eos>'
    """

    name = "binary_addition"
    description = "x + y in binary (most significant bit first); output the sum"
    op = "+"

    def _apply(self, x: int, y: int) -> int:
        return x + y


@register("binary_multiplication")
class BinaryMultiplication(_BinaryOperation):
    """``x * y`` in binary, output the product in binary.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("binary_multiplication").sample(generator(0, "doc"), 6).tokens)
    '<bos> 1 1 0 * 1 1 <sep> 1 0 0 1 0 <eos>'
    """

    name = "binary_multiplication"
    description = "x * y in binary (most significant bit first); output the product"
    op = "*"

    def _apply(self, x: int, y: int) -> int:
        return x * y


@register("compute_sqrt")
class ComputeSqrt(ChomskyTask):
    """``x`` as n binary digits (most significant first, leading zeros allowed; x uniform over
    1..2^n - 1); output floor(sqrt(x)) as exactly ceil(n / 2) digits, as the paper does.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("compute_sqrt").sample(generator(0, "doc"), 5).tokens)
    '<bos> 1 1 0 1 0 <sep> 1 0 1 <eos>'
    """

    name = "compute_sqrt"
    level = "cs"
    description = "floor(sqrt(x)) of an n-digit binary x, as ceil(n/2) digits"
    symbols = ("0", "1")
    answer_symbols = ("0", "1")
    max_length = ARITHMETIC_MAX_LENGTH

    def answer_len(self, length: int) -> int:
        """``ceil(length / 2)`` digits."""
        return (length + 1) // 2

    def _one(self, rng, n):
        while True:
            bits = rng.integers(0, 2, size=n).tolist()
            if any(bits):
                break
        x = int("".join(map(str, bits)), 2)
        root = format(math.isqrt(x), "b").zfill(self.answer_len(n))
        return [str(b) for b in bits], list(root)


@register("bucket_sort")
class BucketSort(ChomskyTask):
    """Symbols over ``a b c d e``, output them sorted.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("bucket_sort").sample(generator(0, "doc"), 4).tokens)
    '<bos> d e c d <sep> c d d e <eos>'
    """

    name = "bucket_sort"
    level = "cs"
    description = "sort symbols over a b c d e"
    symbols = ("a", "b", "c", "d", "e")
    answer_symbols = ("a", "b", "c", "d", "e")

    def answer_len(self, length: int) -> int:
        """As long as the input."""
        return length

    def _one(self, rng, n):
        x = _pick(rng, self.symbols, n)
        return x, sorted(x)
