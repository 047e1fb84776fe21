"""Sort distinct tokens (the Tracr/ALTA ``sort_unique`` toy task), in two layers.

The input is ``<bos> x1 .. xn`` with distinct symbols from ``0..vocab_size-1`` (token id =
symbol + 1; ``<bos>`` is 0). Layer 1: a numerical head averages a ``<bos>`` indicator over
``<bos>`` and every position whose symbol is at most mine (a set-valued query), giving
``1/(r+1)`` where r is my rank; the MLP stores the target position r. Layer 2: position p reads
the token whose target is p, and the MLP copies it to the output. One rule per possible rank
and one per symbol, so the program is linear in ``max_length`` and ``vocab_size``.

>>> from rasplab.lang import interpret
>>> ids = SORT_UNIQUE.encode("5 2 9")
>>> ids
[0, 6, 3, 10]
>>> SORT_UNIQUE.decode(ids, interpret(SORT_UNIQUE.program(), [ids]).outputs[0])
['2', '5', '9']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import input_var, numeric_var, position_var, qkv, set_var, var
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram, register_program
from rasplab.programs.gather import gather_program

BOS = 0
VOCAB_SIZE = 150
"""Symbols 0..149, as in the ``sort`` task of ``docs/tasks.md``."""
_ALPHABET = frozenset(str(i) for i in range(VOCAB_SIZE))


def _at_most(token: int) -> frozenset:
    """The query of a position holding ``token``: ``<bos>`` and every token id up to it."""
    return frozenset(range(token + 1)) if token != BOS else frozenset({BOS})


def build_sort_unique(vocab_size: int = VOCAB_SIZE, max_length: int | None = None) -> Program:
    """The program for up to ``max_length`` (default ``vocab_size``) distinct symbols."""
    if not isinstance(vocab_size, int) or vocab_size < 1:
        raise RasplabError(f"vocab_size must be a positive int, got {vocab_size!r}")
    max_length = vocab_size if max_length is None else max_length
    if not isinstance(max_length, int) or not 1 <= max_length <= vocab_size:
        raise RasplabError(
            f"max_length must be an int in [1, vocab_size={vocab_size}], got {max_length!r}"
        )
    tokens, places = vocab_size + 1, max_length + 1
    variables = {
        "token": input_var(tokens),
        "idx": position_var(places),
        "at_most": set_var(
            tokens, values=tuple(_at_most(t) for t in range(tokens)), input_init_fn=_at_most
        ),
        "bos": numeric_var(values=(0.0, 1.0), input_init_fn=lambda t: float(t == BOS)),
        "step": var(3),
        "target": var(places),
        "out": var(tokens),
    }
    heads = {
        "rank": qkv(
            "at_most",
            "token",
            "bos",
            output=numeric_var(values=tuple(sorted(1.0 / n for n in range(1, places + 1)))),
        ),
        "read": qkv("idx", "target", "token"),
    }
    return gather_program(
        variables,
        heads,
        count="rank",
        position="target",
        input_range=tokens,
        position_range=places,
        name="sort_unique",
    )


def _symbols(text: str) -> list[int]:
    """Whitespace-separated symbols (never packed: ``"28"`` is the one symbol 28)."""
    bad = [s for s in text.split() if s not in _ALPHABET]
    if bad:
        raise RasplabError(
            f"sort_unique input has symbol {bad[0]!r}; symbols are 0..{VOCAB_SIZE - 1}"
        )
    symbols = [int(s) for s in text.split()]
    if len(set(symbols)) != len(symbols):
        raise RasplabError(f"sort_unique needs distinct symbols, got {text!r}")
    return symbols


def encode(text: str) -> list[int]:
    """``"5 2 9"`` -> ``[<bos>, 6, 3, 10]`` (token id = symbol + 1); repeats are an error."""
    return [BOS, *(s + 1 for s in _symbols(text))]


def decode(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
    """The symbols at positions 1..n of the output (``<bos>`` there is an error)."""
    bad = [i for i, v in enumerate(outputs[1:], start=1) if v == BOS]
    if bad:
        raise RasplabError(f"sort_unique output holds <bos> at position {bad[0]}, not a symbol")
    return [str(int(v) - 1) for v in outputs[1:]]


def reference(text: str) -> list[str]:
    """Python's ``sorted``: ``"5 2 9"`` -> ``["2", "5", "9"]``."""
    return [str(s) for s in sorted(int(s) for s in text.split())]


def random_input(rng: np.random.Generator, length: int) -> str:
    """``length`` distinct symbols drawn without replacement, space-separated."""
    if not 0 <= length <= VOCAB_SIZE:
        raise RasplabError(f"sort_unique lengths must be in [0, {VOCAB_SIZE}], got {length}")
    return " ".join(str(int(s)) for s in rng.permutation(VOCAB_SIZE)[:length])


SORT_UNIQUE = register_program(
    LibraryProgram(
        name="sort_unique",
        description="sort distinct tokens: rank by counting smaller tokens, then gather (Tracr/ALTA)",
        build=build_sort_unique,
        encode=encode,
        decode=decode,
        reference=reference,
        random_input=random_input,
        length_unit="tokens",
        max_length=VOCAB_SIZE,
    )
)
