"""Exact bucket semantics: a numerical mean on a bucket boundary means the same everywhere."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rasplab.compiler import compile_program, run_compiled
from rasplab.lang import input_var, interpret, numeric_var, program, qkv, set_var, v_relative, var
from rasplab.lang.numbers import bucket, bucket_codes, exact, exact_mean
from rasplab.lang.reference import run_reference


def boundary_program(causal: bool = False, relative=None):
    """The issue's reproducer: the exact mean of -0.6 and 1.1 is 1/4, the boundary of (0, 0.5),
    but the float mean is 0.25000000000000006, in the upper bucket."""

    def step(x):
        x["out"] = 1 if x["avg"] == 0.5 else 0

    return program(
        {
            "tok": input_var(2),
            "v": numeric_var(input_init_fn=lambda t: (-0.6, 1.1)[t]),
            "q": set_var(2, default=frozenset({0, 1})),
            "out": var(2),
        },
        {"avg": qkv("q", "tok", "v", relative=relative, output=numeric_var(values=(0.0, 0.5)))},
        step,
        output="out",
        input_range=2,
        max_layers=1,
        causal=causal,
    )


def test_float_rounding_really_crosses_the_boundary():
    assert (-0.6 + 1.1) / 2 > 0.25 and exact_mean([-0.6, 1.1]) == Fraction(1, 4)


def test_interpreters_and_compiled_model_agree_on_a_boundary_mean():
    for kwargs in ({}, {"causal": True}, {"relative": (-1, 0)}):
        p = boundary_program(**kwargs)
        batch = [[0, 1], [1, 0], [0, 1, 1, 0], [0, 0, 1]]
        fast = interpret(p, batch).outputs
        ref = [run_reference(p, b).output for b in batch]
        compiled = run_compiled(compile_program(p), batch).outputs
        assert fast == ref == compiled, kwargs
    # [0, 1] selects both positions: the mean is exactly the boundary, the lower bucket (out=0)
    assert interpret(boundary_program(), [[0, 1]]).outputs == [[0, 0]]


def test_a_head_value_near_the_boundary_is_the_exact_mean():
    run = interpret(boundary_program(), [[0, 1]], trace=True)
    assert run.traces[0].layers[0].after_attention["avg"] == [0.25, 0.25]


def test_ordinary_numerical_variable_on_a_boundary():
    # 0.15 is exactly the boundary of (0.1, 0.2); the float midpoint is 0.15000000000000002
    centres = (0.1, 0.2)
    assert bucket(centres, 0.15) == 0 and bucket(centres, 0.1500001) == 1
    codes = bucket_codes(centres, np.array([0.15, 0.1500001, np.nan, 0.1]))
    assert codes.tolist() == [0, 1, 2, 0]

    def step(x):
        x["out"] = 1 if x["v"] == 0.2 else 0

    p = program(
        {
            "tok": input_var(2),
            "v": numeric_var(values=centres, input_init_fn=lambda t: (0.15, 0.3)[t]),
            "out": var(2),
        },
        {"left": v_relative("tok", -1)},
        step,
        output="out",
        input_range=2,
        max_layers=1,
    )
    batch = [[0, 1, 0]]
    assert interpret(p, batch).outputs == [[0, 1, 0]] == [run_reference(p, batch[0]).output]
    assert run_compiled(compile_program(p), batch).outputs == [[0, 1, 0]]


def test_exact_reads_the_number_as_typed():
    assert exact(-0.6) == Fraction(-3, 5) and exact(2.0**-30) == Fraction(1, 2**30)
