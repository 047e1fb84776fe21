"""The inputs ``rasplab verify`` draws: refusals of a bad sample count, a bin beyond the
program's positions and a bin below its shortest valid input; divergence values as JSON."""

from __future__ import annotations

import pytest

from rasplab.compiler.verify import jsonable, sample_inputs
from rasplab.errors import RasplabError
from rasplab.lang import input_var, program, var
from rasplab.lang.inputs import InputSpec


def _copy(x):
    x["out"] = x["tok"]


def _program(**options):
    variables = {"tok": input_var(3), "out": var(3)}
    return program(variables, {}, _copy, "out", 3, name="copy", **options)


def test_sample_inputs_refuses_impossible_requests():
    with pytest.raises(RasplabError, match="^samples must be a positive int, got 0$"):
        sample_inputs(_program(), "1-3", 0)
    short = _program(position_range=4)
    with pytest.raises(
        RasplabError, match="accepts at most 4 tokens .position_range., got bin 2-6"
    ):
        sample_inputs(short, "2-6", 10)
    started = _program(inputs=InputSpec(start=0, alphabet=(1, 2)))
    with pytest.raises(RasplabError, match="has no valid inputs of lengths 0-0 .its inputs have"):
        sample_inputs(started, "0-0", 10)


def test_sample_inputs_enumerates_a_small_bin_of_valid_inputs():
    started = _program(inputs=InputSpec(start=0, alphabet=(1, 2)))
    inputs, exhaustive = sample_inputs(started, "1-3", 100)
    assert exhaustive and sorted(inputs) == sorted(
        [[0]] + [[0, a] for a in (1, 2)] + [[0, a, b] for a in (1, 2) for b in (1, 2)]
    )


def test_divergence_values_become_json_data():
    assert jsonable(frozenset({3, 1})) == [1, 3]
    assert jsonable((1, frozenset({2}), None)) == [1, [2], None]
    assert jsonable(2.5) == 2.5 and jsonable(object).startswith("<class")
