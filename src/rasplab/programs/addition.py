"""Multi-digit addition of two non-negative integers, written compactly as traced Python.

The input is ``<start> a + b <end>`` with the operands left-padded with zeros to the same
number of digits N (:func:`encode` pads). The algorithm is ALTA's (Appendix D.2): two pointers
start at the last digit of ``a`` and the last digit of ``b``; each layer reads the two pointed
digits through attention, writes ``(a + b + carry) mod 10`` at ``b``'s pointer and moves both
pointers one position left (relative heads at offset +1). When ``a``'s pointer reaches
``<start>``, ``b``'s is on ``+``: the final carry is written there and the program halts,
N + 2 layers in all. The answer is read from ``+`` to the last digit of ``b``, leading zeros
cut.

What makes it small is how the MLP is written, not the algorithm: it is a list of small
functions, each traced alone (so a rule names only what its own update needs); the carry is
a 0/1 variable; every cell is written once, from its initial 0, so each digit rule reads the
old value instead of enumerating it; and ``b``'s pointer doubles as the output pointer.
That gives 285 update rules (318 counting ALTA's head-output resets) where the ALTA-shaped
builder program (``addition_alta``, :mod:`rasplab.programs.addition_alta`) has 16,421.

>>> from rasplab.lang import interpret
>>> ids = ADDITION.encode("12345+678")
>>> ids
[10, 1, 2, 3, 4, 5, 11, 0, 0, 6, 7, 8, 12]
>>> run = interpret(ADDITION.program(), [ids])
>>> ADDITION.decode(ids, run.outputs[0]), run.layers[0]
(['1', '3', '0', '2', '3'], 7)
>>> len(ADDITION.program().rules)
285
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import input_var, program, qkv, v_relative, var
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram, register_program

START, PLUS, END = 10, 11, 12
"""Token ids: digits are 0-9, then ``<start>``, ``+`` and ``<end>``."""
INPUT_RANGE = 13
INIT, ITERATE, DONE = 0, 1, 2
"""Values of ``step`` (the same at every position)."""
OTHER, PLUS_MARK, END_MARK = 0, 1, 2
"""Values of ``mark``: which cells the first layer looks for to the right."""
_INPUT = re.compile(r"^\s*(\d+)\s*\+\s*(\d+)\s*$")


def _mark(token: int) -> int:
    return {PLUS: PLUS_MARK, END: END_MARK}.get(token, OTHER)


def _advance(x) -> None:
    """``step``: INIT -> ITERATE after the first layer; ITERATE -> DONE once ``a`` is used up."""
    if x["step"] == INIT:
        x["step"] = ITERATE
    elif x["step"] == ITERATE and x["a_digit"] == START:
        x["step"] = DONE


def _start_pointers(x) -> None:
    """First layer: ``ptr_a`` left of ``+``, ``ptr_b`` left of ``<end>``."""
    if x["step"] == INIT and x["mark"] != END_MARK:  # right of <end> is undefined
        if x["mark_right"] == END_MARK:
            x["ptr_b"] = 1
        elif x["mark_right"] == PLUS_MARK:
            x["ptr_a"] = 1


def _move(pointer: str):
    """Shift ``pointer`` one position left (take the value of the right neighbour)."""

    def move(x) -> None:
        if x["step"] == ITERATE and x["mark"] != END_MARK:
            x[pointer] = x[pointer + "_right"]

    move.__name__ = f"move_{pointer}"
    return move


def _write_digit(x) -> None:
    """At ``b``'s pointer, write the column's digit (or, past the last column, the carry)."""
    if x["step"] == ITERATE and x["ptr_b"] == 1 and x["out"] == 0:
        a = x["a_digit"]
        if a == START:
            x["out"] = x["carry"]
        elif a < 10 and x["b_digit"] < 10:
            x["out"] = (a + x["b_digit"] + x["carry"]) % 10


def _update_carry(x) -> None:
    """Every position keeps the same carry: ``(a + b + carry) // 10`` of the current column."""
    if x["step"] == ITERATE and x["a_digit"] < 10 and x["b_digit"] < 10:
        x["carry"] = (x["a_digit"] + x["b_digit"] + x["carry"]) // 10


def build_addition(max_layers: int = 256) -> Program:
    """The compact addition program; operands of up to ``max_layers - 2`` digits."""
    variables = {
        "token": input_var(INPUT_RANGE),
        "mark": input_var(3, _mark),
        "step": var(3),
        "ptr_a": var(2),
        "ptr_b": var(2),
        "carry": var(2),
        "out": var(10),
        "one": var(2, default=1),
    }
    heads = {
        "mark_right": v_relative("mark", 1),
        "ptr_a_right": v_relative("ptr_a", 1),
        "ptr_b_right": v_relative("ptr_b", 1),
        "a_digit": qkv("one", "ptr_a", "token"),
        "b_digit": qkv("one", "ptr_b", "token"),
    }
    mlp = [_advance, _start_pointers, _move("ptr_a"), _move("ptr_b"), _write_digit, _update_carry]
    return program(
        variables,
        heads,
        mlp,
        output="out",
        input_range=INPUT_RANGE,
        halt=("step", DONE),
        max_layers=max_layers,
        name="addition",
    )


def _operands(text: str) -> tuple[str, str]:
    match = _INPUT.match(text)
    if not match:
        raise RasplabError(
            f"addition input {text!r} is not of the form DIGITS+DIGITS, e.g. 12345+678"
        )
    return match.group(1), match.group(2)


def encode(text: str) -> list[int]:
    """``"12+345"`` -> ``<start> 0 1 2 + 3 4 5 <end>`` (operands zero-padded to equal length)."""
    a, b = _operands(text)
    width = max(len(a), len(b))
    return [START, *(int(d) for d in a.zfill(width)), PLUS, *(int(d) for d in b.zfill(width)), END]


def decode(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
    """The sum's digits: the outputs from ``+`` to the last digit of ``b``, leading zeros cut."""
    ids = list(ids)
    if PLUS not in ids:
        raise RasplabError("addition token ids hold no '+' token")
    digits = [str(int(d)) for d in outputs[ids.index(PLUS) : len(ids) - 1]]
    while len(digits) > 1 and digits[0] == "0":
        digits.pop(0)
    return digits


def reference(text: str) -> list[str]:
    """Python's integers: ``"99+1"`` -> ``["1", "0", "0"]``."""
    a, b = _operands(text)
    return list(str(int(a) + int(b)))


def _number(rng: np.random.Generator, digits: int) -> str:
    """A ``digits``-digit number (no leading zero unless it is a single digit)."""
    first = str(int(rng.integers(0 if digits == 1 else 1, 10)))
    return first + "".join(str(d) for d in rng.integers(0, 10, digits - 1))


def random_input(rng: np.random.Generator, length: int) -> str:
    """Two operands, the longer with exactly ``length`` digits, the other 1..``length``."""
    if length < 1:
        raise RasplabError(f"addition operands need at least 1 digit, got length {length}")
    a = _number(rng, length)
    b = _number(rng, int(rng.integers(1, length + 1)))
    return f"{a}+{b}" if rng.integers(0, 2) else f"{b}+{a}"


def count_inputs(length: int) -> int:
    """Operand pairs whose longer operand has ``length`` digits."""
    below = 10 ** (length - 1) if length > 1 else 0
    return (10**length) ** 2 - below**2


def all_inputs(length: int):
    """Every operand pair whose longer operand has ``length`` digits."""
    below = 10 ** (length - 1) if length > 1 else 0
    for a in range(10**length):
        for b in range(10**length):
            if a >= below or b >= below:
                yield f"{a}+{b}"


GLUE = dict(
    encode=encode,
    decode=decode,
    reference=reference,
    random_input=random_input,
    length_unit="digits of the longer operand",
    min_length=1,
    all_inputs=all_inputs,
    input_count=count_inputs,
)
"""The task glue shared with ``addition_alta`` (same tokens, same answer cells)."""

ADDITION = register_program(
    LibraryProgram(
        name="addition",
        description="add two non-negative integers digit by digit, right to left; ALTA's "
        "algorithm in 285 traced rules",
        build=build_addition,
        max_length=254,
        **GLUE,
    )
)
