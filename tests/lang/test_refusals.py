"""Each malformed part of an ALTA program (a variable, a head, a rule, an MLP function, the
program's settings) is refused with one line naming it, before anything runs."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.lang import (
    MLPBuilder,
    Rule,
    Var,
    builder,
    input_var,
    numeric_var,
    program,
    qkv,
    set_var,
    v_relative,
    var,
)


def _copy(x):
    x["out"] = x["tok"]


def _build(**changes):
    """A one-layer program copying the token, with ``changes`` to its parts."""
    parts = {
        "variables": {"tok": input_var(2), "out": var(2)},
        "heads": {},
        "mlp": _copy,
        "output": "out",
        "input_range": 2,
    }
    parts.update(changes)
    return program(**parts)


def _refused(make, message):
    with pytest.raises(RasplabError) as caught:
        make()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_base_program_builds():
    assert _build().output == "out"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Var("vector", 2), "variable kind 'vector' unknown; choose one of:"),
        (lambda: Var("categorical", 2, init="random"), "variable init 'random' unknown"),
        (lambda: var(0), "categorical variable needs range >= 1, got 0"),
        (lambda: numeric_var(values=(2.0, 1.0)), "bucket values must be strictly increasing"),
        (
            lambda: numeric_var(input_init_fn=float, position_init_fn=float),
            "give at most one of input_init_fn and position_init_fn",
        ),
        (
            lambda: set_var(3, input_init_fn=frozenset, position_init_fn=frozenset),
            "give at most one of input_init_fn and position_init_fn",
        ),
        (lambda: var(3).check_value(True, "value"), "value True of a categorical variable"),
        (lambda: set_var(3).check_value({5}, "value"), "has members outside the set range [0, 3)"),
        (lambda: numeric_var().possible_values(), "read or written by an MLP rule needs `values`"),
    ],
)
def test_a_malformed_variable_is_refused(make, message):
    _refused(make, message)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"input_range": 0}, "input_range must be a positive int, got 0"),
        ({"max_layers": 0}, "max_layers must be a positive int, got 0"),
        ({"variables": {"tok": input_var(2), "out": var(2), "2x": var(2)}}, "got '2x'"),
        (
            {"heads": {"out": v_relative("tok", -1)}},
            "names used both as a variable and a head output: out",
        ),
        ({"output": "nothing"}, "output variable 'nothing' is not a program variable"),
        (
            {"variables": {"tok": input_var(2), "out": var(2), "n": numeric_var()}, "output": "n"},
            "output variable 'n' must be categorical",
        ),
        ({"halt": ("nothing", 1)}, "halt variable 'nothing' must be a categorical program"),
    ],
)
def test_malformed_program_settings_are_refused(changes, message):
    _refused(lambda: _build(**changes), message)


TWO = {"tok": input_var(2), "out": var(2), "q": var(3), "n": numeric_var(values=(0.0, 1.0))}


@pytest.mark.parametrize(
    ("heads", "message"),
    [
        (
            {"h": qkv("tok", "tok", "tok"), "g": qkv("h", "tok", "tok")},
            "head 'g' reads head output 'h' as its query; head outputs are undefined",
        ),
        ({"h": qkv("tok", "missing", "tok")}, "head 'h': unknown key variable 'missing'"),
        ({"h": qkv("n", "tok", "tok")}, "query 'n' must be categorical or set, not numerical"),
        ({"h": qkv("tok", "n", "tok")}, "key 'n' must be categorical, not numerical"),
        ({"h": qkv("q", "tok", "tok")}, "query 'q' has range 3 but key 'tok' has range 2"),
        (
            {"h": qkv("tok", "tok", "tok", output=numeric_var(values=(0.0,)))},
            "head 'h': output spec is numerical but its value is categorical",
        ),
    ],
)
def test_a_malformed_head_is_refused(heads, message):
    _refused(lambda: _build(variables=TWO, heads=heads), message)


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([Rule((("h", 0), ("out", 0)), "h", 0, 1)], "rule writes head output 'h'"),
        ([Rule((("zz", 0),), "zz", 0, 1)], "rule writes unknown variable 'zz'"),
        ([Rule((("out", 0), ("zz", 1)), "out", 0, 1)], "rule reads unknown variable 'zz'"),
        ([Rule((("out", 0), ("tok", 7)), "out", 0, 1)], "rule matches tok == 7, not a value"),
    ],
)
def test_a_malformed_rule_is_refused(rules, message):
    heads = {"h": v_relative("tok", -1)}
    _refused(lambda: _build(heads=heads, mlp=rules, undefined="no_match"), message)


def test_a_rule_that_names_a_variable_twice_or_contradicts_itself_is_refused():
    _refused(lambda: Rule((("a", 0), ("a", 1)), "b", 0, 1), "names a variable twice")
    _refused(lambda: Rule((("a", 0),), "a", 1, 0), "reads it as 0 but says old value 1")


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda x: x.__setitem__("zz", 1), "MLP function writes 'zz', which is not a writable"),
        (lambda x: x["zz"], "MLP function reads unknown variable 'zz'"),
        (lambda x: 1 / 0 if x.get("tok") else None, "MLP function failed on inputs {'tok': 1}"),
        (
            lambda x: x.__setitem__("out", 5),
            "value written to 'out' 5 is outside the variable's range [0, 2)",
        ),
    ],
)
def test_a_failing_mlp_function_is_refused_with_the_inputs(fn, message):
    _refused(lambda: _build(mlp=fn), message)


def test_the_mlp_builder_refuses_unknown_and_repeated_reads():
    @builder
    def unknown(m: MLPBuilder):
        for _ in m.get("zz"):
            pass

    @builder
    def twice(m: MLPBuilder):
        for _ in m.get("tok"):
            for _ in m.get("tok"):
                pass

    @builder
    def writes_unknown(m: MLPBuilder):
        m.set("zz", 1)

    _refused(lambda: _build(mlp=unknown), "MLP reads unknown variable 'zz'; known:")
    _refused(lambda: _build(mlp=twice), "MLP builder reads 'tok' twice in one context")
    _refused(lambda: _build(mlp=writes_unknown), "MLP writes unknown variable 'zz'; known:")


def test_a_set_value_outside_the_allowed_sets_is_refused():
    allowed = (frozenset(), frozenset({0}))
    variables = {"tok": input_var(2), "out": var(2), "s": set_var(2, values=allowed)}

    @builder
    def writes_two(m: MLPBuilder):
        m.set("s", frozenset({0, 1}))

    _refused(lambda: _build(variables=variables, mlp=writes_two), "is not among its allowed")
