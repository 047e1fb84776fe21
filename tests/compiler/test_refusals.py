"""What cannot be compiled or run exactly is refused with a message naming it and the fix."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch

from rasplab.compiler import compile_program, run_compiled
from rasplab.errors import RasplabError
from rasplab.lang import (
    Rule,
    input_var,
    numeric_var,
    position_var,
    program,
    qkv,
    set_var,
    var,
)
from rasplab.programs import get_program


def _numeric_program(centres, inits):
    return program(
        {
            "tok": input_var(len(inits)),
            "x": numeric_var(values=centres, input_init_fn=lambda t: inits[t]),
            "out": var(2),
        },
        {},
        [Rule((("x", centres[-1]),), "out", 0, 1)],
        "out",
        len(inits),
        max_layers=1,
    )


def test_numerical_variable_without_buckets_is_refused_naming_it():
    p = _numeric_program((0.0, 1.0), (0.0, 1.0))
    broken = dataclasses.replace(
        p, variables={**p.variables, "x": numeric_var(input_init_fn=lambda t: float(t))}
    )
    with pytest.raises(
        RasplabError, match=r"numerical variable 'x' .* no `values`; give it values="
    ):
        compile_program(broken)


def test_head_output_narrower_than_its_value_is_refused():
    p = program(
        {"tok": input_var(3), "q": var(3), "out": var(2)},
        {"h": qkv("q", "tok", "tok", output=var(2))},
        [],
        "out",
        3,
        max_layers=1,
    )
    with pytest.raises(
        RasplabError, match=r"head 'h': its output range 2 is smaller than the range 3"
    ):
        compile_program(p)


def test_set_variable_as_attention_value_is_refused_by_the_program():
    with pytest.raises(RasplabError, match="set variable 's' cannot be an attention value"):
        program(
            {"tok": input_var(2), "s": set_var(2), "out": var(2)},
            {"h": qkv("tok", "tok", "s")},
            [],
            "out",
            2,
        )


def test_inseparable_numerical_values_are_refused_with_the_fix():
    p = _numeric_program((1.0, 1.0 + 2.0**-50), (1.0, 1.0 + 2.0**-50))
    with pytest.raises(
        RasplabError, match=r"numerical variable 'x': the values .* too close .* coarser values"
    ):
        compile_program(p)


def test_values_separable_only_in_float64_refuse_float32():
    p = _numeric_program((1.0, 1.0 + 2.0**-40), (1.0, 1.0 + 2.0**-40))
    model = compile_program(p)
    assert model.spec["exact_dtypes"] == ["float64"]
    assert run_compiled(model, [[0, 1]]).outputs == [[0, 1]]  # float64 by default
    with pytest.raises(RasplabError, match="exact only in float64, not float32"):
        run_compiled(model, [[0, 1]], dtype=torch.float32)


def test_inputs_longer_than_the_model_supports_are_refused():
    entry = get_program("parity_sequential_absolute")
    model = compile_program(entry.program(), max_length=8)
    assert model.max_length == 8
    with pytest.raises(
        RasplabError, match=r"length 9 is longer than the compiled model supports \(8 positions\)"
    ):
        run_compiled(model, [[1] * 9])
    with pytest.raises(RasplabError, match="outside the input range"):
        run_compiled(model, [[0, 5]])


def test_position_initialisation_limits_the_maximum_length():
    p = program({"pos": position_var(4), "out": var(2)}, {}, [], "out", 2, max_layers=1)
    model = compile_program(p)
    assert model.max_length == 4  # position 4 has no value in range(4)
    with pytest.raises(RasplabError, match="max_length 9 exceeds the program's position_range 4"):
        compile_program(dataclasses.replace(p, position_range=4), max_length=9)


def test_a_program_that_does_not_halt_is_an_error_as_in_the_interpreter():
    entry = get_program("parity_sequential_relative")
    model = compile_program(entry.program())
    with pytest.raises(RasplabError, match="did not halt within 3 layers"):
        run_compiled(model, [entry.encode("1 0 1 1 1")], max_layers=3)


def test_a_bad_maximum_length_or_a_position_value_failing_at_0_is_refused():
    p = program({"tok": input_var(2), "out": var(2)}, {}, [], "out", 2, max_layers=1)
    with pytest.raises(RasplabError, match="^max_length must be a positive int, got 0$"):
        compile_program(p, max_length=0)
    broken = position_var(4, lambda i: 1 // i)  # fails at position 0
    q = program({"pos": broken, "out": var(2)}, {}, [], "out", 2, max_layers=1)
    with pytest.raises(
        RasplabError, match="^position-initialised variable 'pos' fails at position"
    ):
        compile_program(q)


def _edited(**changes):
    """A valid program with parts swapped in afterwards (``dataclasses.replace`` skips the
    language's checks, so the compiler's own guard must catch them)."""
    variables = {
        "tok": input_var(2),
        "out": var(2),
        "n": numeric_var(values=(0.0, 1.0)),
        "s": set_var(2, values=(frozenset(), frozenset({0}))),
    }
    p = program(variables, {}, [], "out", 2, max_layers=1)
    return dataclasses.replace(p, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"heads": {"h": qkv("g", "tok", "tok")}}, "head 'h' reads a head output or an unknown"),
        ({"heads": {"h": qkv("n", "tok", "tok")}}, "query 'n' must be categorical or set and key"),
        ({"heads": {"h": qkv("tok", "tok", "s")}}, "set variable 's' cannot be an attention value"),
        (
            {"rules": (Rule((("out", 0), ("tok", 7)), "out", 0, 1),)},
            "tok == 7, outside its range 2",
        ),
        (
            {"rules": (Rule((("s", frozenset()),), "s", frozenset(), frozenset({5})),)},
            "writes a set outside the range of 's'",
        ),
        ({"output": "n"}, "output variable 'n' must be an ordinary categorical variable"),
    ],
)
def test_the_compiler_guards_against_programs_edited_past_the_checks(changes, message):
    with pytest.raises(RasplabError, match=re.escape(message)):
        compile_program(_edited(**changes))
