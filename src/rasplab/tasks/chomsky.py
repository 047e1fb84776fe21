"""Delétang et al.'s Chomsky-hierarchy benchmark (ICLR 2023): the regular and deterministic
context-free tasks, and the family's shared machinery (the context-sensitive tasks are in
:mod:`rasplab.tasks.chomsky_cs`).

Every task reads ``<bos> INPUT <sep> ANSWER <eos>`` like the algorithmic tasks: the answer
tokens and the final ``<eos>`` are scored. Length is the input's length as the paper counts it
(the number of input symbols); training covers lengths 1-40 and the test bins are 1-40
(in-distribution), 41-100, 101-200 and 201-500 (the paper's per-length score averages over
41-500). Each task draws one
example with :meth:`ChomskyTask._one` from a ``numpy`` generator, so the same seed gives the
same bytes everywhere. Where rasplab's encoding differs from the paper's code is listed in
``docs/tasks.md`` (Chomsky hierarchy).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from rasplab.bins import Bin
from rasplab.seeding import generator  # noqa: F401 (doctests)
from rasplab.tasks.base import BOS, SEP, SPECIALS, Example, Task, answer_example, register

TRAIN_BIN = Bin(1, 40)
TEST_BINS = (Bin(1, 40), Bin(41, 100), Bin(101, 200), Bin(201, 500))
"""The training bin (in-distribution: whether a run fitted) and the paper's three test ranges."""
SCORE_LENGTHS = Bin(41, 500)
"""The lengths the paper's score averages its per-length accuracy over."""
LEVELS = ("regular", "dcf", "cs")
"""The paper's Chomsky-hierarchy levels: regular, deterministic context-free, context-sensitive."""
MODULUS = 5
"""The modulus of the paper's arithmetic tasks and the length of cycle_navigation's cycle."""
DIGITS = tuple(str(d) for d in range(MODULUS))


class ChomskyTask(Task):
    """One task of the benchmark: ``_one(rng, n) -> (input symbols, answer symbols)``.

    ``level`` is the task's level in the paper (:data:`LEVELS`); ``answer_len(n)`` bounds the
    answer's length for an input of length n; ``paper_eos`` says whether the paper's output
    has a termination token (its score then counts it, as rasplab's ``<eos>``).
    """

    level: str = "regular"
    symbols: tuple[str, ...] = ()
    answer_symbols: tuple[str, ...] = ()
    paper_eos: bool = False

    def __init__(self) -> None:
        extra = tuple(a for a in self.answer_symbols if a not in self.symbols)
        self.vocab = SPECIALS + self.symbols + extra
        self.train_bin = Bin(max(self.min_length, TRAIN_BIN.lo), TRAIN_BIN.hi)
        self.test_bins = (self.train_bin, *TEST_BINS[1:])

    def answer_len(self, length: int) -> int:
        """The most answer tokens (without ``<eos>``) of an input of ``length``."""
        return 1

    def max_tokens(self, length: int) -> int:
        """``<bos>``, the input, ``<sep>``, the answer and ``<eos>``."""
        return length + 3 + self.answer_len(length)

    def paper_positions(self, example: Example) -> list[int]:
        """The scored positions the paper's per-token accuracy counts: every answer token, and
        the final ``<eos>`` only where the paper's output has a termination token.

        >>> from rasplab.tasks import get_task
        >>> ex = get_task("parity_check").sample(generator(0, "doc"), 3)
        >>> ex.scored_positions(), get_task("parity_check").paper_positions(ex)
        ([4, 5], [4])
        """
        scored = example.scored_positions()
        return scored if self.paper_eos else scored[:-1]

    def sample(self, rng: np.random.Generator, length: int) -> Example:
        """One example with an input of exactly ``length`` symbols."""
        self.lengths(Bin(length, length))  # one clear error for a length the task lacks
        x, y = self._one(rng, length)
        return answer_example([BOS, *x, SEP], y, length)

    def sample_many(self, rng: np.random.Generator, lengths: Sequence[int]) -> list[Example]:
        """One example per length, drawn in order (the lengths are checked first)."""
        for n in sorted({int(n) for n in lengths}):
            self.lengths(Bin(n, n))
        return [
            answer_example([BOS, *x, SEP], y, int(n))
            for n in lengths
            for x, y in [self._one(rng, int(n))]
        ]

    @abstractmethod
    def _one(self, rng: np.random.Generator, n: int) -> tuple[list[str], list[str]]:
        """The input symbols and the answer symbols of one example of length ``n``."""


def _pick(rng: np.random.Generator, options: Sequence[str], n: int) -> list[str]:
    """``n`` symbols drawn uniformly and independently from ``options``."""
    return [options[i] for i in rng.integers(0, len(options), size=n).tolist()]


@register("even_pairs")
class EvenPairs(ChomskyTask):
    """Whether the number of ``ab`` and ``ba`` pairs is even (``1``) or odd (``0``).

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("even_pairs").sample(generator(0, "doc"), 5).tokens)
    '<bos> b b a b a <sep> 0 <eos>'
    """

    name = "even_pairs"
    description = "1 if the number of ab and ba pairs is even, else 0"
    symbols = ("a", "b")
    answer_symbols = ("0", "1")

    def _one(self, rng, n):
        x = _pick(rng, self.symbols, n)
        changes = sum(x[i] != x[i + 1] for i in range(n - 1))
        return x, ["1" if changes % 2 == 0 else "0"]


@register("parity_check")
class ParityCheck(ChomskyTask):
    """Whether the number of ``b`` is even (``1``) or odd (``0``).

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("parity_check").sample(generator(0, "doc"), 4).tokens)
    '<bos> b b a b <sep> 0 <eos>'
    """

    name = "parity_check"
    description = "1 if the number of b is even, else 0"
    symbols = ("a", "b")
    answer_symbols = ("0", "1")

    def _one(self, rng, n):
        x = _pick(rng, self.symbols, n)
        return x, ["1" if x.count("b") % 2 == 0 else "0"]


@register("cycle_navigation")
class CycleNavigation(ChomskyTask):
    """The final position on a cycle of 5 starting at 0; moves ``0`` stay, ``1`` +1, ``2`` -1.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("cycle_navigation").sample(generator(0, "doc"), 4).tokens)
    '<bos> 2 2 1 2 <sep> 3 <eos>'
    """

    name = "cycle_navigation"
    description = "final position on a 5-cycle after moves 0 (stay), 1 (+1), 2 (-1)"
    symbols = ("0", "1", "2")
    answer_symbols = DIGITS

    def _one(self, rng, n):
        moves = rng.integers(0, 3, size=n)
        step = np.array([0, 1, -1])[moves]
        return [str(m) for m in moves.tolist()], [str(int(step.sum()) % MODULUS)]


@register("modular_arithmetic_simple")
class ModularArithmeticSimple(ChomskyTask):
    """``d op d op ... d`` with digits 0-4 and ``+ - *`` (uniform), evaluated modulo 5 with
    ``*`` before ``+`` and ``-``; the paper's lengths are odd.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("modular_arithmetic_simple").sample(generator(0, "doc"), 5).tokens)
    '<bos> 3 * 4 + 2 <sep> 4 <eos>'
    """

    name = "modular_arithmetic_simple"
    description = "digits 0-4 and + - * (no brackets), evaluated modulo 5"
    symbols = (*DIGITS, "+", "-", "*")
    answer_symbols = DIGITS

    def allows_length(self, length: int) -> bool:
        """Only odd lengths: digit, then operator-digit pairs."""
        return length % 2 == 1

    def _one(self, rng, n):
        digits = rng.integers(0, MODULUS, size=n // 2 + 1).tolist()
        ops = _pick(rng, ("+", "-", "*"), n // 2)
        total, sign, term = 0, 1, digits[0]
        for op, d in zip(ops, digits[1:]):
            if op == "*":
                term *= d
            else:
                total += sign * term
                sign, term = (1 if op == "+" else -1), d
        total += sign * term
        x = [str(digits[0])]
        for op, d in zip(ops, digits[1:]):
            x += [op, str(d)]
        return x, [str(total % MODULUS)]


@register("stack_manipulation")
class StackManipulation(ChomskyTask):
    """A stack of ``0``/``1`` (bottom to top), then actions ``pop``, ``push0``, ``push1`` (a pop
    of the empty stack does nothing); output the final stack top to bottom. Length 1 is a
    one-symbol stack and no action; else the stack's size is uniform over 1..n-1.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("stack_manipulation").sample(generator(0, "doc"), 5).tokens)
    '<bos> 1 0 1 pop pop <sep> 1 <eos>'
    """

    name = "stack_manipulation"
    level = "dcf"
    description = "execute pop/push0/push1 on a given stack; output the stack top to bottom"
    symbols = ("0", "1", "pop", "push0", "push1")
    answer_symbols = ("0", "1")
    paper_eos = True

    def answer_len(self, length: int) -> int:
        """At most the stack plus every push: ``length`` symbols."""
        return length

    def _one(self, rng, n):
        size = 1 if n == 1 else int(rng.integers(1, n))
        stack = _pick(rng, ("0", "1"), size)
        actions = _pick(rng, ("pop", "push0", "push1"), n - size)
        final = list(stack)
        for a in actions:
            if a == "pop":
                if final:
                    final.pop()
            else:
                final.append(a[-1])
        return stack + actions, final[::-1]


@register("reverse_string")
class ReverseString(ChomskyTask):
    """The input over ``a b``, reversed.

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("reverse_string").sample(generator(0, "doc"), 3).tokens)
    '<bos> b b a <sep> a b b <eos>'
    """

    name = "reverse_string"
    level = "dcf"
    description = "reverse a string over a b"
    symbols = ("a", "b")
    answer_symbols = ("a", "b")

    def answer_len(self, length: int) -> int:
        """As long as the input."""
        return length

    def _one(self, rng, n):
        x = _pick(rng, self.symbols, n)
        return x, x[::-1]


def bracket_expression(rng: np.random.Generator, n: int, mult: bool) -> tuple[list[str], int]:
    """An expression of exactly ``n`` symbols and its value modulo 5, drawn as the paper's
    grammar does: ``d``, ``-d``, ``(d)``, ``(-d)`` for n = 1..4; else ``(L op R)`` with
    ``|L|`` uniform over 1..n-4 and ``op`` uniform over ``+ -`` (and ``*`` if ``mult``)."""
    if n < 5:
        d = int(rng.integers(0, MODULUS))
        value = -d % MODULUS if n in (2, 4) else d
        body = (["-"] if n in (2, 4) else []) + [str(d)]
        return (["(", *body, ")"] if n >= 3 else body), value
    left_len = int(rng.integers(1, n - 3))
    left, a = bracket_expression(rng, left_len, mult)
    right, b = bracket_expression(rng, n - 3 - left_len, mult)
    op = ("+", "-", "*")[int(rng.integers(0, 3 if mult else 2))]
    value = {"+": a + b, "-": a - b, "*": a * b}[op] % MODULUS
    return ["(", *left, op, *right, ")"], value


@register("modular_arithmetic_brackets")
class ModularArithmeticBrackets(ChomskyTask):
    """A bracketed expression over digits 0-4 with ``+ - *`` and unary ``-``, modulo 5 (the
    paper's grammar, :func:`bracket_expression`, with multiplication as in its experiments).

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("modular_arithmetic_brackets").sample(generator(0, "doc"), 7).tokens)
    '<bos> ( ( 4 ) * 2 ) <sep> 3 <eos>'
    """

    name = "modular_arithmetic_brackets"
    level = "dcf"
    description = "bracketed expression over digits 0-4 and + - *, evaluated modulo 5"
    symbols = (*DIGITS, "+", "-", "*", "(", ")")
    answer_symbols = DIGITS

    def _one(self, rng, n):
        x, value = bracket_expression(rng, n, mult=True)
        return x, [str(value)]


@register("solve_equation")
class SolveEquation(ChomskyTask):
    """A bracketed ``+ -`` expression of n - 2 symbols with one digit replaced by ``x``, then
    ``= v``: output the digit x (modulo 5). The replaced digit is the first digit at or after
    a uniform position, wrapping around (as the paper's code picks it).

    >>> from rasplab.tasks import get_task
    >>> " ".join(get_task("solve_equation").sample(generator(0, "doc"), 7).tokens)
    '<bos> ( 3 + x ) = 2 <sep> 4 <eos>'
    """

    name = "solve_equation"
    level = "dcf"
    description = "solve a bracketed + - equation modulo 5 for the digit x"
    symbols = (*DIGITS, "+", "-", "(", ")", "x", "=")
    answer_symbols = DIGITS
    min_length = 3

    def _one(self, rng, n):
        expr, value = bracket_expression(rng, n - 2, mult=False)
        i = int(rng.integers(0, len(expr)))
        while expr[i] not in DIGITS:
            i = (i + 1) % len(expr)
        digit = expr[i]
        return [*expr[:i], "x", *expr[i + 1 :], "=", str(value)], [digit]
