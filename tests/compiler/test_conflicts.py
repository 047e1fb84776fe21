"""Rule conflicts in the compiled model: reported per sequence as the interpreter does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rasplab.compiler import compile_program, run_compiled
from rasplab.errors import RasplabError
from rasplab.lang import interpret

sys.path.insert(0, str(Path(__file__).parents[1] / "lang"))
from example_programs import conflict_program  # noqa: E402  (tests/lang/example_programs.py)

BATCH = [[1, 0], [0, 1, 1], [1, 1], [0, 0, 1]]


def test_compiled_conflicts_are_marked_like_the_interpreter():
    p = conflict_program()
    want = interpret(p, BATCH, errors="mark")
    got = run_compiled(compile_program(p), BATCH, errors="mark", trace=True)
    assert got.outputs == want.outputs  # the failed sequences get None, never a made-up output
    assert [e is None for e in got.errors] == [e is None for e in want.errors]
    assert None in got.outputs
    for mine, theirs in zip(got.errors, want.errors):
        if theirs is not None:  # same variable, layer and position; rules by index
            assert mine.split(": ")[0] == theirs.split(": ")[0]
    assert got.layers == want.layers
    assert [len(t.layers) for t in got.traces] == got.layers


def test_compiled_conflicts_raise_by_default():
    with pytest.raises(RasplabError, match=r"rules conflict on 'out' at layer 1, position 2"):
        run_compiled(compile_program(conflict_program()), BATCH)
    with pytest.raises(RasplabError, match="errors must be one of"):
        run_compiled(compile_program(conflict_program()), BATCH, errors="ignore")
