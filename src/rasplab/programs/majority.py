"""Majority: the most frequent letter of a string over a..z, in four layers.

The input is ``<bos> x1 .. xn``. Ties are broken toward the alphabetically first letter (so
every non-empty input has one answer; :func:`random_input` draws tie-free strings, as the
``majority`` task of ``docs/tasks.md`` does). Each layer is one step:

1. count: a numerical head averages a ``<bos>`` indicator over ``<bos>`` and the positions
   holding my letter (a set query), giving ``1/(c+1)``; the MLP stores c as ``count`` and the
   set ``more`` = {0} and every count above c.
2. top count: a head averages the indicator over positions whose ``count`` is in ``more``:
   it is 1 exactly when no letter is more frequent; such positions become candidates.
3. tie-break: a head over candidates with a smaller letter (``smaller`` set query): 1 exactly
   when I hold the first candidate letter; those positions become ``winner``.
4. answer: a head averages the numerical letter value over the winners (all hold the same
   letter) and the MLP writes it to ``answer`` at every position; it is read at ``<bos>``.

Rules grow linearly with ``max_length`` (one per count) and the alphabet.

>>> from rasplab.lang import interpret
>>> words = ["abcab", "zzy", "c"]
>>> run = interpret(MAJORITY.program(), [MAJORITY.encode(w) for w in words])
>>> [MAJORITY.decode(MAJORITY.encode(w), out)[0] for w, out in zip(words, run.outputs)]
['a', 'z', 'c']
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import builder, input_var, numeric_var, program, qkv, set_var, var
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram, parse_tokens, register_program

BOS = 0
LETTERS = string.ascii_lowercase
V = len(LETTERS)
NOT_CANDIDATE = V + 1
"""``cand`` value of a position that does not hold a top-count letter (never queried)."""
DEFAULT_MAX_LENGTH = 128
_FLAG = numeric_var(values=(0.5, 1.0))  # a mean of indicators: 1 (only <bos>) or <= 1/2


def _more(count: int, max_length: int) -> frozenset:
    return frozenset({0, *range(count + 1, max_length + 1)})


def _smaller(token: int) -> frozenset:
    return frozenset({0, *range(1, token)})


def build_majority(max_length: int = DEFAULT_MAX_LENGTH) -> Program:
    """The program for strings of 1..``max_length`` letters."""
    if not isinstance(max_length, int) or max_length < 1:
        raise RasplabError(f"max_length must be a positive int, got {max_length!r}")
    return program(
        _variables(max_length),
        _heads(max_length),
        builder(_rules(max_length)),
        output="answer",
        input_range=V + 1,
        halt=("step", 4),
        max_layers=4,
        name="majority",
    )


def _variables(max_length: int) -> dict:
    """The program's variables for strings of up to ``max_length`` letters."""
    return {
        "token": input_var(V + 1),
        "bos": numeric_var(values=(0.0, 1.0), input_init_fn=lambda t: float(t == BOS)),
        "same": set_var(
            V + 1,
            values=tuple(frozenset({0, t}) for t in range(V + 1)),
            input_init_fn=lambda t: frozenset({0, t}),
        ),
        "step": var(5),
        "count": var(max_length + 1),
        "more": set_var(
            max_length + 1,
            values=tuple(_more(c, max_length) for c in range(max_length + 1)),
            default=frozenset({0}),
        ),
        "cand": input_var(V + 2, init_fn=lambda t: 0 if t == BOS else NOT_CANDIDATE),
        "smaller": set_var(
            V + 2, values=tuple(_smaller(t) for t in range(V + 1)), input_init_fn=_smaller
        ),
        "winner": var(2),
        "one": var(2, default=1),
        "letter": numeric_var(
            values=tuple(float(i) for i in range(V)), input_init_fn=lambda t: float(max(t - 1, 0))
        ),
        "answer": var(V),
    }


def _heads(max_length: int) -> dict:
    """The program's four heads: letter frequency, most frequent, first such, its letter."""
    return {
        "freq": qkv(
            "same",
            "token",
            "bos",
            output=numeric_var(values=tuple(sorted(1.0 / n for n in range(1, max_length + 2)))),
        ),
        "top": qkv("more", "count", "bos", output=_FLAG),
        "first": qkv("smaller", "cand", "bos", output=_FLAG),
        "pick": qkv("one", "winner", "letter"),
    }


def _rules(max_length: int):
    """The MLP's builder callback: one step per layer (count, candidates, winner, answer)."""

    def rules(m) -> None:
        for step in m.get("step"):
            if step < 4:
                m.set("step", step + 1)
            if step == 0:
                for x in m.get("freq"):
                    count = round(1 / x) - 1
                    for old in m.get("count"):
                        if old == 0:
                            m.set("count", count)
                    for old in m.get("more"):
                        if old == frozenset({0}):
                            m.set("more", _more(count, max_length))
            elif step == 1:
                for top in m.get("top"):
                    if top == 1.0:
                        for token, old in m.get("token", "cand"):
                            if token != BOS and old == NOT_CANDIDATE:
                                m.set("cand", token)
            elif step == 2:
                for first in m.get("first"):
                    if first == 1.0:
                        for cand in m.get("cand"):
                            if 1 <= cand <= V:
                                m.set("winner", 1)
            elif step == 3:
                for pick, old in m.get("pick", "answer"):
                    if old == 0:
                        m.set("answer", int(pick))

    return rules


def _letters(text: str) -> list[str]:
    return parse_tokens(text, list(LETTERS), "majority input")


def encode(text: str) -> list[int]:
    """``"aba"`` or ``"a b a"`` -> ``[<bos>, 1, 2, 1]`` (a = 1, ..., z = 26)."""
    letters = _letters(text)
    if not letters:
        raise RasplabError("majority needs at least one letter")
    return [BOS, *(LETTERS.index(c) + 1 for c in letters)]


def decode(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
    """The letter the output holds at ``<bos>``."""
    return [LETTERS[int(outputs[0])]]


def reference(text: str) -> list[str]:
    """``collections.Counter``; ties go to the alphabetically first letter."""
    counts = Counter(_letters(text))
    return [min(counts, key=lambda c: (-counts[c], c))]


def random_input(rng: np.random.Generator, length: int) -> str:
    """``length`` letters i.i.d. uniform, redrawn until the top count is unique."""
    if length < 1:
        raise RasplabError(f"majority needs length >= 1, got {length}")
    while True:
        letters = [LETTERS[i] for i in rng.integers(0, V, length)]
        top = Counter(letters).most_common(2)
        if len(top) == 1 or top[0][1] > top[1][1]:
            return "".join(letters)


MAJORITY = register_program(
    LibraryProgram(
        name="majority",
        description="the most frequent letter (ties: alphabetically first), by counting attention",
        build=build_majority,
        encode=encode,
        decode=decode,
        reference=reference,
        random_input=random_input,
        length_unit="letters",
        min_length=1,
        max_length=DEFAULT_MAX_LENGTH,
        input_length=lambda text: len(_letters(text)),
    )
)
