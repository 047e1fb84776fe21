"""verify draws the inputs a program states as valid, counts the inputs its interpreter fails on
apart (neither agree nor disagree), and reports a shortest disagreement first."""

from __future__ import annotations

from rasplab.compiler.compile import compile_program
from rasplab.compiler.verify import compare_batch, sample_inputs, verify
from rasplab.lang import InputSpec, input_var, program, v_relative, var


def after_start(inputs=None):
    """out[i] = tok[i-1] where tok[i] != 0; defined only when every input starts with 0 (the
    rule reads ``left``, undefined at position 0)."""

    def step(x):
        if x["tok"] != 0:
            x["out"] = x["left"]

    return program(
        {"tok": input_var(3), "out": var(3)},
        {"left": v_relative("tok", -1)},
        step,
        "out",
        3,
        max_layers=1,
        name="after_start",
        inputs=inputs,
    )


def test_inputs_the_interpreter_fails_on_are_counted_apart():
    report = verify(after_start(), "1-3", samples=1000)  # every sequence of 1-3 tokens: 39
    # the 26 starting with 1 or 2 are undefined (left of position 0 is read)
    assert (report.total, report.agree, report.undefined) == (13, 13, 26)
    assert report.first_divergence is None and report.ok
    assert "reads 'left', which is undefined" in report.first_undefined["reason"]
    data = report.to_json()
    assert data["undefined"] == 26 and data["first_undefined"]["tokens"][0] != 0
    assert "the program is undefined on this input" in report.undefined_line()


def test_a_program_stating_its_inputs_is_drawn_only_on_them():
    p = after_start(InputSpec(start=0))
    batch, exhaustive = sample_inputs(p, "1-3", 1000)
    assert exhaustive and len(batch) == 1 + 2 + 4 and all(b[0] == 0 for b in batch)
    drawn, exhaustive = sample_inputs(p, "1-9", 50)
    assert not exhaustive and len(drawn) == 50 and all(b[0] == 0 for b in drawn)
    report = verify(p, "1-9", samples=50)
    assert (report.total, report.agree, report.undefined) == (50, 50, 0)
    assert "undefined" not in report.to_json()


def copy_program(zero_twos: bool):
    """out = tok, or with ``zero_twos`` out = 0 where tok is 2."""

    def step(x):
        if x["tok"] == 2 and zero_twos:
            x["out"] = 0
        elif x["tok"] != 0:
            x["out"] = x["tok"]

    return program({"tok": input_var(3), "out": var(3)}, {}, step, "out", 3, max_layers=1)


def test_the_first_divergence_reported_is_a_shortest_one():
    model = compile_program(copy_program(zero_twos=False))
    batch = [[1, 1, 1, 1, 2, 1], [1, 1, 2, 1], [2, 1], [1, 1]]
    report = compare_batch(copy_program(zero_twos=True), model, batch)
    assert (report.total, report.agree) == (4, 1)
    assert report.first_divergence["tokens"] == [2, 1]
