"""Traced MLP functions: the warning for updates that read a head output they never use."""

from __future__ import annotations

import warnings

import pytest

from rasplab.lang import input_var, interpret, program, v_relative, var
from rasplab.lang.rules import UnusedHeadReadWarning, rules_from_function, unused_head_reads
from rasplab.programs import get_program, program_names

VARIABLES = {"tok": input_var(2), "seen": var(2), "done": var(2)}
HEADS = {"left": v_relative("tok", -1)}


def together(x):
    """Two independent updates in one function: ``done`` ends up depending on ``left``."""
    if x["left"] == 1:
        x["seen"] = 1
    x["done"] = 1


def seen(x):
    if x["left"] == 1:
        x["seen"] = 1


def done(x):
    x["done"] = 1


def _build(mlp):
    return program(VARIABLES, HEADS, mlp, "done", 2, max_layers=1, undefined="no_match")


def test_an_update_that_ignores_a_head_it_reads_is_named_and_really_misfires():
    with pytest.warns(UnusedHeadReadWarning, match="'together'.*'done' reads 'left'") as caught:
        joined = _build(together)
    assert len(caught) == 1 and "'seen'" not in str(caught[0].message)
    # What the warning predicts: at position 0 'left' is undefined, so 'done' stays 0 there.
    assert interpret(joined, [[1, 0, 1]]).outputs[0] == [0, 1, 1]


def test_one_function_per_update_is_silent_and_fires_everywhere():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedHeadReadWarning)
        split = _build([seen, done])
    assert interpret(split, [[1, 0, 1]]).outputs[0] == [1, 1, 1]


def test_per_path_finds_a_path_that_ignores_the_value_while_others_use_it():
    def uses(x):
        if x["mode"] == 0:
            x["out"] = 1 if x["left"] == 1 else 0
        elif x["left"] in (0, 1):  # reads 'left', writes 1 for both of its values
            x["out"] = 1

    variables = {"mode": var(2), "out": var(2)}
    rules = rules_from_function(uses, variables, {**variables, "left": var(2)})
    assert unused_head_reads(rules, {"left": var(2)}) == []
    assert unused_head_reads(rules, {"left": var(2)}, per_path=True) == [("out", "left")]


@pytest.mark.parametrize("name", [n for n in program_names() if n != "addition_alta"])
def test_library_programs_build_without_the_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedHeadReadWarning)
        get_program(name).program()


def test_describe_counts_the_rules_of_each_mlp_function():
    split = _build([seen, done])
    readable = split.all_variables
    alone = [len(rules_from_function(f, split.variables, readable)) for f in (seen, done)]
    lines = split.describe().splitlines()
    assert lines[2] == f"  update rules per MLP function: seen {alone[0]}, done {alone[1]}"
    assert sum(alone) == len(split.rules)
    assert split.with_rules(split.rules[:1]).rule_sources == ()  # no longer per function
