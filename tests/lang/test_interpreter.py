"""The fast batched interpreter agrees with the reference interpreter, variable by variable."""

from __future__ import annotations

import re

import numpy as np
import pytest
from example_programs import CONFLICT_RULES, conflict_program, parity_program
from random_programs import random_program  # tests/lang/random_programs.py

from rasplab.errors import RasplabError
from rasplab.lang import (
    input_var,
    interpret,
    numeric_var,
    program,
    qkv,
    set_var,
    v_relative,
    var,
)
from rasplab.lang.arrays import match_codes
from rasplab.lang.attention import MAX_SHIFT_OFFSETS
from rasplab.lang.reference import run_reference
from rasplab.lang.trace import reference_trace
from rasplab.seeding import generator


def assert_same(p, batch, max_layers=None):
    """Batched run == reference run on every sequence: outputs, layers and the full trace."""
    run = interpret(p, batch, trace=True, max_layers=max_layers)
    for b, tokens in enumerate(batch):
        ref = run_reference(p, tokens, max_layers=max_layers)
        assert run.outputs[b] == ref.output
        assert run.layers[b] == ref.layers
        diff = reference_trace(p, tokens, max_layers=max_layers).first_difference(
            run.traces[b], tol=0.0
        )
        assert diff is None, (b, tokens, diff)
    plain = interpret(p, batch, max_layers=max_layers)
    assert (plain.outputs, plain.layers, plain.traces) == (run.outputs, run.layers, None)
    return run


# ---------------------------------------------------------------- hand-written programs


def test_parity_matches_figure_3_and_halts_per_sequence():
    p = parity_program()
    batch = [[1, 0, 1], [1, 1, 1, 1, 0, 1, 1], [0], [1, 1], []]
    run = assert_same(p, batch)
    assert run.outputs[0] == [1, 1, 0]  # Figure 3: output after the second layer
    assert run.layers == [2, 6, 1, 1, 1]
    assert run.traces[0].layers[0].after_attention["parity_left"] == [1, 1, 0]


def counter_program():
    """Counts layers (mod 5) in ``c``; no halt, so it must run exactly max_layers layers."""

    def mlp(z):
        z["c"] = (z["c"] + 1) % 5

    return program(
        {"tok": input_var(3), "c": var(5)}, {}, mlp, output="c", input_range=3, max_layers=3
    )


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_max_layers_means_exactly_k(k):
    p = counter_program()
    run = assert_same(p, [[0, 1, 2], [2]], max_layers=k if k != 3 else None)
    assert run.layers == [k, k]
    assert run.outputs == [[k % 5] * 3, [k % 5]]


def selector_width_program(values=(-2.0, -1.0, -0.5, 0.0, 1 / 3, 0.5, 1.0)):
    """Numerical means (negative and fractional), matched by bucket, written into categoricals."""
    variables = {
        "tok": input_var(4),
        "x": numeric_var(values=values, input_init_fn=lambda t: (-2.0, -1.0, 0.0, 1 / 3)[t]),
        "zero": var(1),
        "out": var(len(values)),
    }
    heads = {"mean": qkv("zero", "zero", "x"), "left": qkv("tok", "tok", "x", relative={-2, -1, 1})}

    def write_out(z):  # independent updates in functions of their own (no head read unused)
        z["out"] = values.index(z["mean"])

    def write_x(z):
        if z["left"] == -0.5:
            z["x"] = 0.5
        elif z["left"] == 1 / 3:
            z["x"] = -1.0

    return program(
        variables,
        heads,
        [write_out, write_x],
        output="out",
        input_range=4,
        max_layers=3,
        undefined="no_match",
    )


def test_numerical_means_and_buckets():
    rng = generator(0, "selector-width")
    batch = [rng.integers(0, 4, n).tolist() for n in (1, 2, 3, 5, 8, 8, 13)] + [
        [0, 1],
        [1, 2],
        [2, 3, 3],
    ]
    assert_same(selector_width_program(), batch)


def test_bucket_codes_match_var_bucket_on_boundaries_and_negatives():
    spec = numeric_var(values=(-3.0, -1.0, -0.25, 0.0, 0.5, 2.0))
    xs = [
        float(x)
        for x in "-10 -3 -2 -1.9999 -1 -0.625 -0.625000001 -0.25 -0.125 0 0.25 0.2500001 1.25 2 99".split()
    ]
    codes = match_codes(spec, np.array([xs]), None)[0].tolist()
    assert codes == [spec.bucket(x) for x in xs]
    assert (
        spec.bucket(-2.0) == 0 and spec.bucket(-0.625) == 1 and spec.bucket(0.25) == 3
    )  # (lo, hi]


def test_mean_exactly_on_a_bucket_boundary():
    """Means of [-1, 0] = -0.5 and of [0, 1] = 0.5 lie exactly on boundaries; (lo, hi] decides."""
    values = (-1.0, 0.0, 1.0)

    def mlp(z):
        z["b"] = values.index(z["m"])

    p = program(
        {
            "t": input_var(3),
            "x": numeric_var(values=values, input_init_fn=lambda t: values[t]),
            "b": var(3),
        },
        {"m": qkv("t", "t", "x", relative={0, 1})},
        mlp,
        output="b",
        input_range=3,
        max_layers=1,
    )
    run = assert_same(p, [[0, 1], [1, 2], [2, 1, 0]])
    assert run.outputs == [[0, 1], [1, 2], [2, 1, 0]]  # -0.5 -> bucket of -1; 0.5 -> bucket of 0


@pytest.mark.parametrize("causal", [False, True])
def test_long_numerical_means_are_bit_identical(causal):
    """Means over up to 60 non-dyadic values: every strategy sums in the reference's order."""
    xs = (1 / 3, 0.1, -0.7, 2 / 3)
    variables = {
        "tok": input_var(4),
        "zero": var(1),
        "x": numeric_var(values=(0.0, 1.0), input_init_fn=lambda t: xs[t]),
        "q": set_var(
            4, values=(frozenset({0, 1, 3}),), input_init_fn=lambda t: frozenset({0, 1, 3})
        ),
        "out": var(2),
    }
    heads = {
        "all": qkv("zero", "zero", "x"),
        "setq": qkv("q", "tok", "x"),
        "near": qkv("zero", "zero", "x", relative=range(-10, 6)),
        "wide": qkv("zero", "zero", "x", relative=range(-30, 30)),
        "same": qkv("tok", "tok", "x"),
    }

    def mlp(z):
        z["out"] = int(z["all"] == 1.0)

    p = program(variables, heads, mlp, output="out", input_range=4, max_layers=1, causal=causal)
    rng = generator(4, "long-means", causal)
    assert_same(p, [rng.integers(0, 4, n).tolist() for n in (60, 41, 17, 9)])


def set_query_program(causal=False):
    """Set-valued queries selecting several keys; categorical and numerical values; causal option."""
    sets = (frozenset(), frozenset({0}), frozenset({1, 2}), frozenset({0, 1, 2}))
    variables = {
        "tok": input_var(3),
        "q": set_var(3, values=sets, input_init_fn=lambda t: sets[t + 1]),
        "w": numeric_var(values=(0.0, 0.5, 1.0), input_init_fn=lambda t: float(t) / 2),
        "hit": var(3),
        "avg": var(3),
    }
    heads = {"one": qkv("q", "tok", "tok"), "m": qkv("q", "tok", "w")}

    def write_hit(z):
        if z["one"] == 2:
            z["hit"] = 2

    def write_avg(z):
        z["avg"] = (0.0, 0.5, 1.0).index(z["m"])

    def write_q(z):
        if z["hit"] == 2:
            z["q"] = sets[0]

    return program(
        variables,
        heads,
        [write_hit, write_avg, write_q],
        output="avg",
        input_range=3,
        max_layers=3,
        causal=causal,
        undefined="no_match",
    )


@pytest.mark.parametrize("causal", [False, True])
def test_set_queries_and_causal_mode(causal):
    rng = generator(1, "set-query", causal)
    batch = [rng.integers(0, 3, n).tolist() for n in (1, 2, 3, 4, 6, 9)] + [[2, 2, 0], [0, 0, 0]]
    assert_same(set_query_program(causal), batch)


def relative_program(mask, causal=False):
    """A categorical head over an arbitrary relative mask (shift strategy or dense)."""

    def write_out(z):
        z["out"] = 1 if z["h"] == 1 else 0

    def write_seen(z):
        if z["n"] == 1.0:
            z["seen"] = 1

    variables = {
        "tok": input_var(2),
        "one": numeric_var(values=(0.0, 1.0), default=1.0),
        "out": var(2),
        "seen": var(2),
    }
    heads = {
        "h": qkv("tok", "tok", "tok", relative=mask),
        "n": qkv("tok", "tok", "one", relative=mask),
    }
    return program(
        variables,
        heads,
        [write_out, write_seen],
        output="out",
        input_range=2,
        max_layers=2,
        causal=causal,
        undefined="no_match",
    )


@pytest.mark.parametrize(
    "mask", [{-1}, {1}, {0}, {-3, 2}, set(range(-20, 21)), set(range(-40, 0, 2))]
)
@pytest.mark.parametrize("causal", [False, True])
def test_relative_masks(mask, causal):
    assert len(set(range(-20, 21))) > MAX_SHIFT_OFFSETS  # the wide masks take the dense path
    rng = generator(2, "relative", sorted(mask), causal)
    batch = [rng.integers(0, 2, n).tolist() for n in (1, 2, 3, 5, 8, 25)]
    assert_same(relative_program(mask, causal), batch)


def test_v_relative_reads_neighbour_and_undefined_at_edges():
    def mlp(z):
        if z["left"] == 1:
            z["out"] = 1

    p = program(
        {"tok": input_var(2), "out": var(2)},
        {"left": v_relative("tok", -1)},
        mlp,
        output="out",
        input_range=2,
        max_layers=1,
        undefined="no_match",
    )
    run = assert_same(p, [[1, 0, 1, 1], [1]])
    assert run.traces[0].layers[0].after_attention["left"] == [None, 1, 0, 1]
    assert run.traces[0].layers[0].after_mlp["left"] == [None] * 4


def test_undefined_head_outputs_match_no_rule():
    """A categorical head with 0 or 2+ matches is undefined; rules reading it do not fire."""

    def mlp(z):
        z["out"] = z["same"]  # fires only where ``same`` is defined

    p = program(
        {"tok": input_var(3), "out": var(3)},
        {"same": qkv("tok", "tok", "tok")},
        mlp,
        output="out",
        input_range=3,
        max_layers=1,
        undefined="no_match",
    )
    run = assert_same(p, [[0, 1, 1, 2], [2, 2]])
    assert run.traces[0].layers[0].after_attention["same"] == [0, None, None, 2]
    assert run.outputs == [[0, 0, 0, 2], [0, 0]]


def test_reading_an_undefined_value_raises_by_default():
    """ALTA's rule: the error names the rule, the variable, the layer (as traces number it)
    and the position; both interpreters agree, and ``errors="mark"`` fails only that row."""

    def mlp(z):
        z["out"] = z["same"]

    p = program(
        {"tok": input_var(3), "out": var(3)},
        {"same": qkv("tok", "tok", "tok")},
        mlp,
        output="out",
        input_range=3,
        max_layers=1,
    )
    assert p.undefined == "raise"
    with pytest.raises(RasplabError) as err:
        interpret(p, [[0, 1, 1, 2]])
    with pytest.raises(RasplabError) as ref_err:
        run_reference(p, [0, 1, 1, 2])
    assert str(err.value) == str(ref_err.value)
    assert "reads 'same', which is undefined at layer 1, position 1" in str(err.value)
    run = interpret(p, [[0, 1, 2], [1, 1], [2]], errors="mark")
    assert run.outputs == [[0, 1, 2], None, [2]] and run.errors[1].startswith("rule [")


def test_a_guarded_read_of_an_undefined_value_is_no_error():
    """A path that does not read the head where it is undefined runs under the default."""

    def mlp(z):
        if z["tok"] != 0:  # position 0 holds token 0: ``left`` is read only after it
            z["out"] = z["left"]

    p = program(
        {"tok": input_var(2), "out": var(2)},
        {"left": v_relative("tok", -1)},
        mlp,
        output="out",
        input_range=2,
        max_layers=1,
    )
    assert interpret(p, [[0, 1, 1, 0]]).outputs == [[0, 0, 1, 0]]
    with pytest.raises(RasplabError, match="undefined at layer 1, position 0"):
        interpret(p, [[1, 1]])
    with pytest.raises(RasplabError, match="undefined must be one of"):
        program({"o": var(2)}, {}, [], output="o", input_range=1, undefined="ignore")


def test_rule_conflict_names_both_rules_layer_and_position():
    rules = CONFLICT_RULES
    p = conflict_program()
    with pytest.raises(RasplabError) as ref_err:
        run_reference(p, [0, 1, 1])
    with pytest.raises(RasplabError) as err:
        interpret(p, [[0, 1, 1]])
    assert str(err.value) == str(ref_err.value)
    assert "layer 1, position 2" in str(err.value) and str(rules[0]) in str(err.value)
    assert str(rules[1]) in str(err.value)
    with pytest.raises(RasplabError, match=r"position 2: .*\(sequence 1 of the batch\)"):
        interpret(p, [[1, 0], [0, 1, 1]])


def test_no_halt_within_max_layers_is_an_error():
    with pytest.raises(RasplabError, match="did not halt within 3 layers"):
        interpret(parity_program(), [[1, 0], [1, 0, 1, 1, 1]], max_layers=3)
    assert interpret(parity_program(), [[1, 0, 1, 1]], max_layers=3).layers == [3]


def test_empty_batches_and_empty_sequences():
    p = set_query_program(causal=True)  # dense heads
    assert_same(p, [[], []])
    assert interpret(p, []).outputs == []
    assert interpret(parity_program(), [[], []]).layers == [1, 1]


def test_bad_tokens_and_lengths():
    with pytest.raises(RasplabError, match="token id 2 at position 1"):
        interpret(parity_program(), [[1, 2]])
    with pytest.raises(RasplabError, match="exceeds the program's position_range 12"):
        interpret(parity_program(), [[1] * 13])
    with pytest.raises(RasplabError, match="max_layers"):
        interpret(parity_program(), [[1]], max_layers=0)


# ---------------------------------------------------------------- random differential testing


def _conflict_layer(message):
    m = re.search(r"at layer (\d+)", message)
    return int(m.group(1)) if m else None


@pytest.mark.parametrize("chunk", range(6))
def test_random_programs_match_reference(chunk):
    """40 random programs x 4 inputs per chunk: every variable at every layer, errors too."""
    compared = errors = 0
    for i in range(40):
        rng = generator(chunk, "random-program", i)
        p = random_program(rng)
        batch = [rng.integers(0, p.input_range, int(rng.integers(0, 7))).tolist() for _ in range(4)]
        failures = {}
        for b, tokens in enumerate(batch):
            try:
                run_reference(p, tokens)
            except RasplabError as err:
                failures[b] = str(err)
        ok = [t for b, t in enumerate(batch) if b not in failures]
        if ok:
            assert_same(p, ok)
            compared += len(ok)
        if failures:
            errors += 1
            with pytest.raises(RasplabError) as err:
                interpret(p, batch)
            conflicts = {b: m for b, m in failures.items() if _conflict_layer(m) is not None}
            if conflicts:  # the batch reports the earliest layer's conflict, lowest sequence first
                b = min(conflicts, key=lambda k: (_conflict_layer(conflicts[k]), k))
                assert str(err.value).startswith(conflicts[b]), (str(err.value), conflicts)
            else:
                assert "did not halt" in str(err.value)
    assert compared >= 100 and errors >= 1


def test_describe_starts_with_a_summary_and_mlp_takes_several_functions():
    def first(x):
        if x["tok"] == 1:
            x["a"] = 1

    def second(x):
        if x["tok"] == 0:
            x["b"] = 1

    p = program(
        {"tok": input_var(2), "a": var(2), "b": var(2)},
        {},
        [first, second],
        output="a",
        input_range=2,
        max_layers=1,
    )
    assert len(p.rules) == 2  # traced alone: neither rule tests what the other reads
    assert interpret(p, [[1, 0]]).outputs == [[1, 0]]
    summary = p.describe().splitlines()[1]
    assert "3 variables (3 categorical, 0 numerical, 0 set), 0 heads, 2 update rules" in summary
    with pytest.raises(RasplabError, match="got str; pass mlp as a list of Rules"):
        program({"o": var(2)}, {}, ["if o == 0"], output="o", input_range=1)
