"""Parity of a bit string, three ways (ALTA Figures 2, 7 and 8; Appendix D.1).

* ``parity_sequential_absolute`` (Figure 2): one position per layer; each position reads the
  parity of its left neighbour through absolute position indices (``idx_left`` -> ``idx``).
* ``parity_sequential_relative`` (Figure 8): the same loop with relative heads (offset -1)
  and a ``<start>`` token; no position embeddings, so nothing depends on the input length.
* ``parity_sum_mod_2`` (Figure 7): one layer; a numerical head averages a ``<start>``
  indicator over ``<start>`` and the ones, giving ``1/(k+1)`` for k ones; the MLP maps each
  bucket to ``k mod 2``. It needs one bucket (and rule) per possible number of ones.

The rules follow ALTA's sparse (MLPBuilder) versions so that counts are comparable: 3 update
rules for either sequential program (ALTA's 7 counts the 4 head-output resets too) and one
update rule per bucket for sum-mod-2. The natural input is the bits, e.g. ``"1 0 1 1"`` or
``"1011"``; the answer is the parity bit, read at the last position (``"0"`` for no bits).

>>> from rasplab.lang.reference import run_reference
>>> for entry in (SEQUENTIAL_ABSOLUTE, SEQUENTIAL_RELATIVE, SUM_MOD_2):
...     ids = entry.encode("1 0 1 1")
...     print(entry.name, ids, entry.decode(ids, run_reference(entry.program(), ids).output))
parity_sequential_absolute [1, 0, 1, 1] ['1']
parity_sequential_relative [2, 1, 0, 1, 1] ['1']
parity_sum_mod_2 [2, 1, 0, 1, 1] ['1']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.lang import (
    builder,
    input_var,
    numeric_var,
    position_var,
    program,
    qkv,
    v_relative,
    var,
)
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram, parse_tokens, register_program

START = 2
"""Token id of ``<start>`` (the relative and sum-mod-2 programs put it at position 0)."""
DEFAULT_MAX_LENGTH = 128


def _check_max_length(max_length: int) -> None:
    if not isinstance(max_length, int) or max_length < 1:
        raise RasplabError(f"max_length must be a positive int, got {max_length!r}")


def _sequential_rules(m) -> None:
    """ALTA's parity step: a position not yet done whose left neighbour is done takes
    ``parity_left xor parity`` and becomes done."""
    for done in m.get("done"):
        if done != 1:
            for done_left in m.get("done_left"):
                if done_left == 1:
                    m.set("done", 1)
                    for parity_left, parity in m.get("parity_left", "parity"):
                        m.set("parity", parity_left ^ parity)


def build_sequential_absolute(max_length: int = DEFAULT_MAX_LENGTH) -> Program:
    """Figure 2: absolute indices, halts when every position is done (``max_length`` bits)."""
    _check_max_length(max_length)
    variables = {
        "parity": input_var(2),
        "done": position_var(2, init_fn=lambda p: int(p == 0)),
        "idx": position_var(max_length),
        "idx_left": position_var(max_length, init_fn=lambda p: max(0, p - 1)),
    }
    heads = {
        "parity_left": qkv("idx_left", "idx", "parity"),
        "done_left": qkv("idx_left", "idx", "done"),
    }
    return program(
        variables,
        heads,
        builder(_sequential_rules),
        output="parity",
        input_range=2,
        position_range=max_length,
        halt=("done", 1),
        max_layers=max_length,
        name="parity_sequential_absolute",
    )


def build_sequential_relative(max_layers: int = 256) -> Program:
    """Figure 8: relative heads and a ``<start>`` token; any length up to ``max_layers`` bits."""
    variables = {
        "parity": input_var(2, init_fn=lambda t: 0 if t == START else t),
        "done": input_var(2, init_fn=lambda t: int(t == START)),
    }
    heads = {"parity_left": v_relative("parity", -1), "done_left": v_relative("done", -1)}
    return program(
        variables,
        heads,
        builder(_sequential_rules),
        output="parity",
        input_range=3,
        halt=("done", 1),
        max_layers=max_layers,
        name="parity_sequential_relative",
    )


def build_sum_mod_2(max_length: int = DEFAULT_MAX_LENGTH) -> Program:
    """Figure 7: one layer; buckets ``1/(k+1)`` for ``k = 0..max_length`` ones."""
    _check_max_length(max_length)
    buckets = tuple(sorted(1.0 / n for n in range(1, max_length + 2)))
    variables = {
        "parity": var(2),
        "start": numeric_var(values=(0.0, 1.0), input_init_fn=lambda t: float(t == START)),
        "start_or_one": input_var(2, init_fn=lambda t: int(t in (1, START))),
        "query": var(2, default=1),
    }
    heads = {"x": qkv("query", "start_or_one", "start", output=numeric_var(values=buckets))}

    def rules(m) -> None:
        for x in m.get("x"):
            m.set("parity", (round(1 / x) - 1) % 2)

    return program(
        variables,
        heads,
        builder(rules),
        output="parity",
        input_range=3,
        max_layers=1,
        name="parity_sum_mod_2",
    )


def _bits(text: str) -> list[int]:
    return [int(b) for b in parse_tokens(text, ["0", "1"], "parity input")]


def encode_bits(text: str) -> list[int]:
    """``"1 0 1"`` -> ``[1, 0, 1]`` (no special tokens)."""
    return _bits(text)


def encode_with_start(text: str) -> list[int]:
    """``"1 0 1"`` -> ``[<start>, 1, 0, 1]``."""
    return [START, *_bits(text)]


def decode_parity(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
    """The parity bit: the output at the last position (``"0"`` when there are no positions)."""
    return [str(int(outputs[-1]))] if len(outputs) else ["0"]


def reference_parity(text: str) -> list[str]:
    """Count the ones with plain Python: ``"1 1 0"`` -> ``["0"]``."""
    return [str(text.count("1") % 2)]


def random_bits(rng: np.random.Generator, length: int) -> str:
    """``length`` bits whose number of ones is uniform over ``0..length`` (ALTA's train sets
    hold roughly as many examples per number of ones), space-separated."""
    ones = int(rng.integers(0, length + 1))
    bits = np.zeros(length, dtype=int)
    bits[rng.permutation(length)[:ones]] = 1
    return " ".join(str(b) for b in bits)


def sample_bits(rng: np.random.Generator, lengths: Bin) -> str:
    """Bits from a bin with the number of ones k uniform over ``0..lengths.hi``, then the
    length uniform over ``max(k, lo)..hi`` (as many examples per number of ones, as in ALTA's
    parity sets)."""
    ones = int(rng.integers(0, lengths.hi + 1))
    length = int(rng.integers(max(ones, lengths.lo), lengths.hi + 1))
    bits = np.zeros(length, dtype=int)
    bits[rng.permutation(length)[:ones]] = 1
    return " ".join(str(b) for b in bits)


def all_bit_strings(length: int) -> Iterator[str]:
    """Every bit string of ``length`` bits."""
    for bits in itertools.product("01", repeat=length):
        yield " ".join(bits)


def _entry(name: str, description: str, build, encode, max_length: int) -> LibraryProgram:
    return register_program(
        LibraryProgram(
            name=name,
            description=description,
            build=build,
            encode=encode,
            decode=decode_parity,
            reference=reference_parity,
            random_input=random_bits,
            length_unit="bits",
            max_length=max_length,
            all_inputs=all_bit_strings,
            input_count=lambda n: 2**n,
            sample_input=sample_bits,
            input_length=lambda text: len(_bits(text)),
        )
    )


SEQUENTIAL_ABSOLUTE = _entry(
    "parity_sequential_absolute",
    "parity, one position per layer, left neighbour found by absolute position (ALTA Fig. 2)",
    build_sequential_absolute,
    encode_bits,
    DEFAULT_MAX_LENGTH,
)
SEQUENTIAL_RELATIVE = _entry(
    "parity_sequential_relative",
    "parity, one position per layer, left neighbour by relative attention (ALTA Fig. 8)",
    build_sequential_relative,
    encode_with_start,
    255,
)
SUM_MOD_2 = _entry(
    "parity_sum_mod_2",
    "parity in one layer: count the ones by attention, then mod 2 (ALTA Fig. 7)",
    build_sum_mod_2,
    encode_with_start,
    DEFAULT_MAX_LENGTH,
)
