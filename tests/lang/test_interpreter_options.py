"""The interpreter's options: ``fired=True`` usage, ``errors="mark"``, and the exact fast heads."""

from __future__ import annotations

import numpy as np
import pytest
from example_programs import conflict_program, parity_program  # tests/lang/example_programs.py
from random_programs import random_program  # tests/lang/random_programs.py

from rasplab.errors import RasplabError
from rasplab.lang import (
    attention,
    input_var,
    interpret,
    numeric_var,
    position_var,
    program,
    qkv,
    set_var,
    var,
)
from rasplab.lang.reference import run_reference
from rasplab.lang.trace import reference_trace
from rasplab.seeding import generator


def reference_outcome(p, tokens):
    """``(output, layers, error message)`` of the reference interpreter."""
    try:
        ref = run_reference(p, tokens)
    except RasplabError as err:
        return None, None, str(err)
    return ref.output, ref.layers, None


def head_codes(spec, values):
    """The match codes of a head output's defined Python values (what ``head_values`` marks)."""
    if spec.kind == "numerical":
        return {spec.bucket(v) for v in values if v is not None}
    return {v for v in values if v is not None and 0 <= v < spec.range}


# ---------------------------------------------------------------- fired=True


@pytest.mark.parametrize("chunk", range(4))
def test_fired_is_the_union_of_the_trace_and_errors_match_the_reference(chunk):
    """Random programs: ``fired``/``head_values`` == the trace's, ``errors`` == the reference's."""
    marked = compared = 0
    for i in range(40):
        rng = generator(chunk, "fired-options", i)
        p = random_program(rng)
        batch = [rng.integers(0, p.input_range, int(rng.integers(0, 9))).tolist() for _ in range(5)]
        run = interpret(p, batch, trace=True, fired=True, errors="mark")
        assert run.fired.shape == (len(batch), len(p.rules)) and run.fired.dtype == bool
        for b, tokens in enumerate(batch):
            trace = run.traces[b]
            assert len(trace.layers) == run.layers[b]
            want = sorted({r for layer in trace.layers for pos in layer.fired for r in pos})
            assert np.flatnonzero(run.fired[b]).tolist() == want, (i, b)
            for name, seen in run.head_values.items():
                spec = p.head_outputs[name]
                values = [v for layer in trace.layers for v in layer.after_attention[name]]
                assert set(np.flatnonzero(seen[b]).tolist()) == head_codes(spec, values)
            output, layers, error = reference_outcome(p, tokens)
            assert (run.outputs[b], run.errors[b]) == (output, error), (i, b)
            if error is None:
                assert run.layers[b] == layers
                assert reference_trace(p, tokens).first_difference(trace, tol=0.0) is None
                compared += 1
            else:
                marked += 1
        ok = [t for b, t in enumerate(batch) if run.errors[b] is None]
        plain = interpret(p, ok) if ok else None  # the failures did not disturb the others
        if plain is not None:
            assert plain.outputs == [o for o in run.outputs if o is not None]
    assert compared >= 100 and marked >= 1


def test_fired_on_parity_names_the_rules_and_head_values():
    p = parity_program()
    run = interpret(p, [[1, 0, 1], [0], []], fired=True)
    ref = run_reference(p, [1, 0, 1])
    want = sorted({r for layer in ref.fired for pos in layer for r in pos})
    assert np.flatnonzero(run.fired[0]).tolist() == want and len(want) > 0
    assert not run.fired[1].any() and not run.fired[2].any()  # nothing to do: halted at once
    assert run.head_values["done_left"][0].tolist() == [True, True]
    assert run.head_values["parity_left"][1].tolist() == [True, False]  # [0] reads its own 0
    assert run.errors == [None, None, None]
    plain = interpret(p, [[1, 0, 1], [0], []])
    assert (plain.fired, plain.head_values, plain.outputs) == (None, None, run.outputs)


# ---------------------------------------------------------------- errors="mark"


def test_mark_reports_conflicts_per_sequence_and_finishes_the_rest():
    p = conflict_program()
    batch = [[1, 0], [0, 1, 1], [1, 1], [0, 0, 1]]
    run = interpret(p, batch, errors="mark", fired=True)
    for b, tokens in enumerate(batch):
        assert (run.outputs[b], run.errors[b]) == reference_outcome(p, tokens)[::2]
    assert run.outputs[0] == [1, 2] and run.outputs[3] == [0, 0, 1]
    assert run.errors[1].startswith("rules conflict on 'out' at layer 1, position 2: ")
    assert run.layers == [2, 0, 0, 2]  # failing sequences completed no layer
    assert not run.fired[1].any()  # the failing layer's rules are not counted
    with pytest.raises(RasplabError, match=r"position 2: .*\(sequence 1 of the batch\)"):
        interpret(p, batch)  # the default still raises on the first failing sequence


def test_error_layers_are_numbered_as_in_traces():
    """A conflict in the layer after the trace's last completed layer k is reported as k + 1."""
    p = conflict_program()
    for tokens in ([0, 1, 1], [1, 0, 1, 1]):
        run = interpret(p, [tokens], errors="mark", trace=True)
        if run.errors[0] is None:
            continue
        done = len(run.traces[0].layers)
        assert f"at layer {done + 1}," in run.errors[0]
        table = run.traces[0].table()
        assert (f"layer {done}:" in table) and (f"layer {done + 1}:" not in table)


def test_mark_reports_sequences_that_do_not_halt():
    batch = [[1, 0], [1, 0, 1, 1, 1], [1, 0, 1, 1], [1] * 9]
    run = interpret(parity_program(), batch, max_layers=3, errors="mark", trace=True)
    message = "program 'program' did not halt within 3 layers"
    assert run.errors == [None, message, None, message]
    assert run.outputs[0] == [1, 1] and run.outputs[2] == [1, 1, 0, 1]
    assert run.outputs[1] is None and run.outputs[3] is None
    assert run.layers == [1, 3, 3, 3] and len(run.traces[3].layers) == 3
    with pytest.raises(RasplabError, match="did not halt within 3 layers"):
        interpret(parity_program(), batch, max_layers=3)


def test_bad_options_and_inputs_raise_in_either_mode():
    with pytest.raises(RasplabError, match="errors must be one of: raise, mark; got 'skip'"):
        interpret(parity_program(), [[1]], errors="skip")
    with pytest.raises(RasplabError, match="token id 2 at position 1"):
        interpret(parity_program(), [[1, 0], [1, 2]], errors="mark")


# ---------------------------------------------------------------- exact fast heads


def test_exact_sums_accepts_only_order_independent_sums():
    assert attention.exact_sums(np.array([[0.0, 1.0, 1.0, 5.0], [2.0, -3.0, 0.5, 0.25]]))
    assert attention.exact_sums(np.zeros((0, 4)))
    assert not attention.exact_sums(np.array([[0.1, 0.2]]))
    assert not attention.exact_sums(np.array([[1 / 3]]))
    assert not attention.exact_sums(np.array([[np.nan, 1.0]]))
    assert not attention.exact_sums(np.array([[np.inf, 1.0]]))
    assert not attention.exact_sums(np.array([[2.0**40, 1.0]]))  # partial sums could round


def counting_program(xs, causal=False):
    """Set-query and causal means over ``xs``, and a set-query categorical read, written out."""
    sets = (frozenset({0}), frozenset({0, 2}), frozenset({1, 2}), frozenset({0, 1, 2}))
    variables = {
        "tok": input_var(3),
        "x": numeric_var(values=(0.0, 0.5, 1.0), input_init_fn=lambda t: xs[t]),
        "q": set_var(3, values=sets, input_init_fn=lambda t: sets[t + 1]),
        "zero": var(1),
        "pos": position_var(4, lambda p: p % 4),
        "mid": var(3),
        "got": var(4),
    }
    heads = {
        "mean": qkv("q", "tok", "x"),
        "one": qkv("q", "tok", "pos"),
        "all": qkv("zero", "zero", "x", relative=range(-40, 1)),
    }

    def write_mid(z):  # independent updates in functions of their own (no head read unused)
        z["mid"] = (0.0, 0.5, 1.0).index(z["mean"])

    def write_got(z):
        z["got"] = z["one"]

    return program(
        variables,
        heads,
        [write_mid, write_got],
        output="mid",
        input_range=3,
        max_layers=1,
        causal=causal,
        undefined="no_match",
    )


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("xs", [(0.0, 1.0, 0.5), (0.1, 0.7, 1 / 3)])
def test_fast_numerical_heads_equal_the_reference_bit_for_bit(monkeypatch, causal, xs):
    """Exact values take the set histogram (or the dense matmul if causal); others the loop."""
    used = []
    histogram = attention._set_histogram_head
    monkeypatch.setattr(
        attention,
        "_set_histogram_head",
        lambda p, *a: used.append((p.name, p.numerical)) or histogram(p, *a),
    )
    p = counting_program(xs, causal)
    rng = generator(5, "counting", causal, xs)
    batch = [rng.integers(0, 3, n).tolist() for n in (40, 33, 17, 9, 2, 0)]
    batch.append([2, 2, 0, 1, 0, 2, 2, 0, 1, 0, 2, 2])
    run = interpret(p, batch, trace=True)
    for b, tokens in enumerate(batch):
        diff = reference_trace(p, tokens).first_difference(run.traces[b], tol=0.0)
        assert diff is None, (b, diff)
    exact = xs[2] == 0.5
    histogram_used = {name: numerical for name, numerical in used}
    assert histogram_used == ({} if causal else {"one": False, **({"mean": True} if exact else {})})
