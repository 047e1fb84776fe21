"""The compiled model is exact where the published compilers are not (ALTA's known defects)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from rasplab.compiler import INVALID, compile_program, decode, run_compiled
from rasplab.lang import Rule, input_var, interpret, numeric_var, program, qkv, v_relative, var
from rasplab.programs import get_program

from .agreement import assert_agree


def _after_attention(run, b, layer, name):
    return run.traces[b].layers[layer].after_attention[name]


def test_categorical_head_is_undefined_unless_exactly_one_position_is_selected():
    # ALTA averages: two selected positions holding the same value look like that value.
    p = program(
        {"tok": input_var(3), "q": var(3, default=1), "out": var(2)},
        {"h": qkv("q", "tok", "tok")},
        [Rule((("h", 1),), "out", 0, 1)],
        "out",
        3,
        max_layers=1,
        undefined="no_match",  # the compiled model: undefined matches no rule
    )
    batch = [[1], [0, 1, 2], [1, 1], [1, 0, 1], [0, 2], [2, 2, 0]]
    model = assert_agree(p, batch)
    run = run_compiled(model, batch, trace=True)
    assert [_after_attention(run, b, 0, "h")[0] for b in range(len(batch))] == [
        1,
        1,
        None,
        None,
        None,
        None,
    ]
    assert run.outputs == [[1], [1, 1, 1], [0, 0], [0, 0, 0], [0, 0], [0, 0, 0]]


def test_numerical_head_is_the_exact_mean_and_undefined_when_nothing_is_selected():
    values = (-5.0, 0.25, 3.0)
    p = program(
        {
            "tok": input_var(4),
            "x": numeric_var(input_init_fn=lambda t: values[t % 3]),
            "q": var(4, default=3),
            "out": var(3),
        },
        {"m": qkv("q", "tok", "x", relative=None, output=numeric_var(values=(-3.0, 0.0, 2.0)))},
        [Rule((("m", c),), "out", 0, i) for i, c in enumerate((-3.0, 0.0, 2.0)) if i],
        "out",
        4,
        max_layers=1,
        undefined="no_match",  # the compiled model: undefined matches no rule
    )
    # q == 3 selects the positions holding token 3 (x = values[0] = -5.0)
    batch = [[3, 1, 2], [0, 1, 2], [3, 3, 0], [2, 2, 2, 2]]
    model = assert_agree(p, batch)
    run = run_compiled(model, batch, trace=True)
    assert _after_attention(run, 0, 0, "m") == pytest.approx([-5.0] * 3)
    assert _after_attention(run, 1, 0, "m") == [None] * 3
    # a mean: tokens 3 and 0 have the same x only if selected; here token 3 twice -> -5.0
    assert _after_attention(run, 2, 0, "m") == pytest.approx([-5.0] * 3)


def test_negative_buckets_are_not_inverted():
    # ALTA's expansion maps -5 to bucket 2 and -3 to a two-hot vector for these centres.
    centres = (-5.0, -3.0, 0.0, 3.0)
    inits = (-5.0, -3.0, 0.0, 3.0, -4.0, -4.25, -1.5, 1.5)
    p = program(
        {
            "tok": input_var(8),
            "x": numeric_var(values=centres, input_init_fn=lambda t: inits[t]),
            "out": var(4),
        },
        {},
        [Rule((("x", c),), "out", 0, i) for i, c in enumerate(centres) if i],
        "out",
        8,
        max_layers=1,
        undefined="no_match",  # the compiled model: undefined matches no rule
    )
    batch = [list(range(8))]
    assert_agree(p, batch)
    expect = [p.variables["x"].bucket(v) for v in inits]
    assert expect == [0, 1, 2, 3, 0, 0, 1, 2]
    assert run_compiled(compile_program(p), batch).outputs == [expect]


def test_numerical_rule_write_overwrites_exactly():
    # ALTA adds new - bucket_centre, leaving x + (new - centre) = 7.3 - 10 + 2.5 = -0.2.
    p = program(
        {
            "tok": input_var(2),
            "x": numeric_var(values=(0.0, 10.0), input_init_fn=lambda t: (1.0, 7.3)[t]),
            "out": var(2),
        },
        {},
        [Rule((("x", 10.0),), "x", 10.0, 2.5), Rule((("x", 0.0),), "out", 0, 1)],
        "out",
        2,
        max_layers=2,
        undefined="no_match",  # the compiled model: undefined matches no rule
    )
    batch = [[1, 0, 1]]
    model = assert_agree(p, batch)
    run = run_compiled(model, batch, trace=True, dtype=torch.float64)
    assert run.traces[0].layers[0].after_mlp["x"] == pytest.approx([2.5, 1.0, 2.5], abs=1e-12)
    assert run.outputs == [[1, 1, 1]]


def test_fully_masked_rows_are_undefined():
    # offset -1 at position 0 and offset +5 everywhere in short inputs: no position allowed
    p = program(
        {"tok": input_var(2), "out": var(2)},
        {"left": v_relative("tok", -1), "far": v_relative("tok", 5)},
        [Rule((("far", 1),), "out", 0, 1), Rule((("left", 0),), "out", 0, 1)],
        "out",
        2,
        max_layers=1,
        undefined="no_match",  # the compiled model: undefined matches no rule
    )
    batch = [[1, 1, 1], [0, 1], [1]]
    model = assert_agree(p, batch)
    run = run_compiled(model, batch, trace=True)
    assert _after_attention(run, 0, 0, "far") == [None] * 3
    assert _after_attention(run, 0, 0, "left") == [None, 1, 1]
    assert run.outputs == [[0, 0, 0], [0, 1], [0]]


def test_causal_mode_hides_later_positions():
    p = program(
        {"tok": input_var(3), "q": var(3, default=2), "out": var(3)},
        {"h": qkv("q", "tok", "tok")},
        [Rule((("h", 2),), "out", 0, 2)],
        "out",
        3,
        max_layers=1,
        causal=True,
        undefined="no_match",  # the compiled model: undefined matches no rule
    )
    batch = [[0, 2, 1, 2], [2, 2], [1, 0]]
    model = assert_agree(p, batch)
    assert run_compiled(model, batch).outputs == [[0, 2, 2, 0], [2, 0], [0, 0]]


def test_halting_is_per_sequence_and_fixed_layers_ignore_it():
    entry = get_program("parity_sequential_relative")
    p = entry.program()
    batch = [entry.encode(x) for x in ("1", "1 0 1 1 0 1", "", "0 0 1", "1 1 1 1 1 1 1 1 1 1 1")]
    assert_agree(p, batch)
    model = compile_program(p)
    run = run_compiled(model, batch)
    assert run.layers == interpret(p, batch).layers == [1, 6, 1, 3, 11]
    fixed = run_compiled(model, batch, fixed_layers=4)
    assert fixed.layers == [4] * len(batch)
    no_halt = interpret(dataclasses.replace(p, halt=None), batch, max_layers=4)
    assert fixed.outputs == no_halt.outputs


def test_decode_turns_any_residual_into_assignments():
    entry = get_program("parity_sequential_relative")
    model = compile_program(entry.program())
    tokens = torch.tensor([entry.encode("1 0 1")])
    x = model.embed(tokens, torch.tensor([4]))
    first = decode(model.layout, x[0, 1])
    assert first == {
        "parity": 1,
        "done": 0,
        "relative_qk": 0,
        "parity_left": None,
        "done_left": None,
    }
    rows = decode(model.layout, x)
    assert len(rows) == 1 and len(rows[0]) == 4 and rows[0][0]["done"] == 1
    garbage = decode(model.layout, torch.full((model.layout.width,), 0.3))
    assert set(garbage) == set(model.layout.names())
    assert garbage["parity"] is INVALID and garbage["parity"] != garbage["parity"]


def test_length_independent_programs_accept_long_inputs():
    entry = get_program("parity_sequential_relative")
    model = compile_program(entry.program())
    assert model.max_length is None
    bits = " ".join("1" if i % 3 else "0" for i in range(300))
    run = run_compiled(model, [entry.encode(bits)], max_layers=400)
    assert entry.decode(entry.encode(bits), run.outputs[0]) == entry.reference(bits)
