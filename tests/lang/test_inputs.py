"""Python API misuse gets a RasplabError naming the argument (never a raw exception or a
silent acceptance): batches, tokens, relative offsets, bucket values."""

from __future__ import annotations

import numpy as np
import pytest

from rasplab.compiler import compile_program, run_compiled
from rasplab.errors import RasplabError
from rasplab.lang import input_var, interpret, numeric_var, program, v_relative, var


def _program():
    def step(x):
        if x["left"] == 1:
            x["out"] = 1

    return program(
        {"tok": input_var(2), "out": var(2)},
        {"left": v_relative("tok", -1)},
        step,
        "out",
        2,
        max_layers=1,
        undefined="no_match",
    )


@pytest.fixture(scope="module")
def runners():
    p = _program()
    model = compile_program(p)
    return {
        "interpreter": lambda batch: interpret(p, batch),
        "compiled": lambda batch: run_compiled(model, batch),
    }


@pytest.mark.parametrize("runner", ["interpreter", "compiled"])
@pytest.mark.parametrize(
    "batch, words",
    [
        ("1 0 1", ["batch must be a list of token-id sequences, got a string"]),
        (["101"], ["item 0 is str"]),
        ([[1, 0.5]], ["token 0.5 at position 1 is not an integer"]),
        ([[1, "1"]], ["token '1' at position 1 is not an integer"]),
        ([[1, None]], ["token None"]),
        ([[True, 0]], ["token True"]),
        ([[1, 2]], ["token id 2 at position 1 is outside the input range [0, 2)"]),
        (5, ["batch must be a list of token-id sequences, got int"]),
    ],
)
def test_bad_batches_are_rasplab_errors(runners, runner, batch, words):
    with pytest.raises(RasplabError) as err:
        runners[runner](batch)
    assert all(w in str(err.value) for w in words), str(err.value)


@pytest.mark.parametrize("runner", ["interpreter", "compiled"])
def test_integer_like_tokens_are_accepted_the_same(runners, runner):
    plain = runners[runner]([[1, 0, 1]]).outputs
    assert runners[runner]([np.array([1, 0, 1])]).outputs == plain
    assert runners[runner]([[1.0, 0.0, 1.0]]).outputs == plain


def test_fractional_relative_offsets_are_refused():
    with pytest.raises(RasplabError, match="v_relative offset must be an integer, got 1.5"):
        v_relative("tok", 1.5)
    assert v_relative("tok", np.int64(-2)).relative == frozenset({-2})


def test_an_empty_numeric_var_is_refused():
    with pytest.raises(RasplabError, match="numeric_var values must list at least one"):
        numeric_var(values=())
