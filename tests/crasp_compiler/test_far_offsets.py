"""Issue #39: a relation's offsets beyond the maximum length relate no two positions, so the
compiler builds no head for them (``window(10**5)`` at ``--max-length 8`` built 100,001)."""

from __future__ import annotations

from rasplab.crasp.build import Q, count, crasp_program, offset, window
from rasplab.crasp_compiler.compile import compile_program
from rasplab.crasp_compiler.verify import verify


def windowed(k: int):
    c = count(Q("a"), window(k), name="c")
    far = count(Q("a"), offset(50), name="far")
    return crasp_program("w", (c >= 2) | (far >= 1), ("a", "b"))


def test_far_offsets_build_no_heads_and_the_model_stays_exact():
    small, huge = compile_program(windowed(8), 8), compile_program(windowed(10**5), 8)
    assert huge.spec["heads"] == small.spec["heads"]
    assert verify(windowed(10**5), max_length=8, exhaustive_up_to=8, samples=0, model=huge).ok
