"""Residual-stream traces: the table, JSON round trips and first_difference."""

from __future__ import annotations

import json

from example_programs import parity_program  # tests/lang/example_programs.py

from rasplab.lang import input_var, interpret, numeric_var, program, qkv, set_var, var
from rasplab.lang.trace import LayerTrace, Trace, reference_trace


def mixed_program():
    """Numerical and set variables, so every value kind appears in a trace."""

    def mlp(z):
        if z["m"] == 0.5:
            z["c"] = 1

    variables = {
        "tok": input_var(2),
        "x": numeric_var(values=(0.0, 0.5, 1.0), input_init_fn=float),
        "s": set_var(2, values=(frozenset({0, 1}),), default=frozenset({0, 1})),
        "c": var(2),
    }
    return program(
        variables, {"m": qkv("s", "tok", "x")}, mlp, output="c", input_range=2, max_layers=2
    )


def test_figure_3_table():
    """The paper's Figure 3: parity of [1, 0, 1] after two layers, rows = variables."""
    run = interpret(parity_program(8), [[1, 0, 1]], trace=True)
    trace = run.traces[0]
    assert len(trace.layers) == 2
    text = trace.table()
    lines = text.splitlines()
    assert lines[0].split() == ["position", "0", "1", "2"]
    blocks = [i for i, line in enumerate(lines) if line.startswith("layer ")]
    assert [lines[i] for i in blocks] == [
        "layer 0: initial",
        "layer 1: after attention",
        "layer 1: after MLP",
        "layer 2: after attention",
        "layer 2: after MLP",
    ]
    last = lines[blocks[-1] + 1 :]
    assert last[0].split() == [">", "parity", "1", "1", "0"]  # the output, highlighted
    assert last[1].split() == ["done", "1", "1", "1"]
    assert last[4].split() == ["parity_left", "-", "-", "-"]  # head outputs undefined after the MLP
    after_attention_2 = lines[blocks[3] + 1 : blocks[4]]
    assert after_attention_2[4].split() == ["parity_left", "1", "1", "1"]
    assert last[-3].split() == [
        "rules",
        "fired",
        "-",
        "-",
        "4,5",
    ]  # parity and done updated at position 2
    rules = run.traces[0].rules
    assert last[-2:] == [f"    rule 4 at 2: {rules[4]}", f"    rule 5 at 2: {rules[5]}"]
    assert {rules[4].var, rules[5].var} == {"parity", "done"}
    assert dict(rules[4].lhs)["done_left"] == 1  # the rule that fired reads the neighbour's done


def test_table_marks_changes_and_formats_every_kind():
    trace = interpret(mixed_program(), [[0, 1, 1]], trace=True).traces[0]
    text = trace.table(mark_changes=True)
    assert "{0,1}" in text and "2/3*" in text and "-*" in text  # the rules' number format
    rows = [line.split() for line in text.splitlines()]
    assert ["x", "0.0", "1.0", "1.0"] in rows and [">", "c", "1*", "1*", "1*"] in rows


def test_json_round_trip_keeps_sets_and_undefined():
    trace = interpret(mixed_program(), [[1, 0]], trace=True).traces[0]
    data = json.loads(json.dumps(trace.to_json()))
    assert data["initial"]["s"] == [[0, 1], [0, 1]] and data["initial"]["m"] == [None, None]
    again = Trace.from_json(data)
    assert again == trace
    assert trace.first_difference(again, tol=0.0) is None


def test_first_difference_reports_the_first_disagreement():
    expected = reference_trace(mixed_program(), [1, 0, 1])
    got = Trace.from_json(expected.to_json())
    assert expected.first_difference(got) is None
    got.layers[0].after_attention["m"][2] += 1e-9  # within tolerance
    assert expected.first_difference(got, tol=1e-6) is None
    assert expected.first_difference(got, tol=0.0)["position"] == 2
    got.layers[1].after_mlp["c"][1] = None
    assert expected.first_difference(got, tol=1e-6) == {
        "layer": 2,
        "stage": "mlp",
        "variable": "c",
        "position": 1,
        "expected": 1,
        "got": None,
    }
    got.layers[0].after_mlp["x"][0] = 0.5
    diff = expected.first_difference(got, tol=1e-6)
    assert (diff["layer"], diff["stage"], diff["variable"], diff["position"]) == (1, "mlp", "x", 0)


def test_first_difference_layers_rules_and_tokens():
    expected = reference_trace(mixed_program(), [1, 0])
    shorter = Trace(
        expected.tokens, expected.kinds, expected.initial, expected.layers[:1], expected.output
    )
    assert expected.first_difference(shorter) == {
        "layer": 2,
        "stage": "layers",
        "variable": None,
        "position": None,
        "expected": 2,
        "got": 1,
    }
    no_rules = Trace(
        expected.tokens,
        expected.kinds,
        expected.initial,
        [LayerTrace(lt.after_attention, lt.after_mlp, None) for lt in expected.layers],
    )
    assert expected.first_difference(no_rules) is None  # rules compared only when both know them
    wrong = Trace.from_json(expected.to_json())
    wrong.layers[0].fired[0] = [5]
    assert expected.first_difference(wrong)["stage"] == "rules"
    assert expected.first_difference(reference_trace(mixed_program(), [1, 1]))["stage"] == "tokens"


def test_reference_and_batched_traces_agree():
    p = parity_program(8)
    batch = [[1, 0, 1], [1, 1, 0, 1, 1, 1], [0]]
    run = interpret(p, batch, trace=True)
    for tokens, trace in zip(batch, run.traces):
        assert reference_trace(p, tokens).first_difference(trace, tol=0.0) is None
        assert trace.output == "parity" and list(trace.kinds)[:2] == ["parity", "done"]
