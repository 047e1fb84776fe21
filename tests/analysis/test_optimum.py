"""Theorems 1-2 (ALTA App. B), numerically: minimality against coordinate-wise optimality."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rasplab.analysis.optimum import (
    _apply,
    _rules,
    check_optimum,
    compile_rules,
    encode,
    minimality,
    mlp,
    mlp_inputs,
)
from rasplab.errors import RasplabError
from rasplab.programs import get_program


def _all_bits(entry, hi: int) -> list[list[int]]:
    return [
        entry.encode(" ".join(b)) for n in range(hi + 1) for b in itertools.product("01", repeat=n)
    ]


def _case(name: str, hi: int):
    entry = get_program(name)
    prog = entry.program(max_length=hi) if name.endswith("absolute") else entry.program()
    return prog, _all_bits(entry, hi)


@pytest.mark.parametrize("name", ["parity_sequential_relative", "parity_sequential_absolute"])
def test_compiled_parameters_compute_the_rules_on_every_assignment(name):
    prog, batch = _case(name, 4)
    data = mlp_inputs(prog, batch)
    w1, b1, w2, offsets = compile_rules(prog)
    expected = encode([_apply(_rules(prog), v) for v in data], offsets)
    assert np.array_equal(mlp(w1, b1, w2, encode(data, offsets)), expected)


@pytest.mark.parametrize("name", ["parity_sequential_relative", "parity_sequential_absolute"])
def test_minimal_rule_set_is_a_strict_coordinatewise_optimum(name):  # Theorem 2
    prog, batch = _case(name, 4)
    report = check_optimum(prog, batch, alpha=0.5)
    assert report.minimal and report.strict_optimum
    assert report.reconstruction_at_compiled == 0.0


@pytest.mark.parametrize("alpha", [0.1, 0.9])
def test_unused_rule_gives_a_descent_direction(alpha):  # Theorem 1, a rule never fires
    entry = get_program("parity_sequential_relative")
    batch = [entry.encode(t) for t in ("", "0", "0 1", "1 1", "0 1 1")]  # rule 1 never fires
    report = check_optimum(entry.program(), batch, alpha=alpha)
    assert not report.minimal and not report.strict_optimum
    assert report.minimality.removable_rules == [1]
    # every descent direction touches the unused rule: its row of W1, b1 or its column of W2
    for d in report.descent:
        j = d["index"][0] if d["parameter"] in ("W1", "b1") else d["index"][1]
        assert j == 1 and d["change_per_unit"] == pytest.approx(-alpha, rel=1e-6)


def test_removable_constraint_descends_only_along_two_coordinates():
    # A constraint that D does not need (rule 2's done == 0: done == 1 never meets the rest)
    # is not a coordinate-wise descent: lowering its W1 weight lowers the rule's unit where it
    # fires. Removing it (W1 -= t with b1 += t) lowers the loss: Theorem 1's constraint case
    # holds for that direction, not for single coordinates.
    entry = get_program("parity_sequential_relative")
    batch = [entry.encode(t) for t in ("1 0", "1 1", "1 1 0", "0 1 1")]
    report = check_optimum(entry.program(), batch, alpha=0.5)
    assert report.minimality.removable_rules == []
    assert report.minimality.removable_constraints == [(2, "done", 0)]
    assert report.strict_optimum
    assert [d["change_per_unit"] for d in report.joint] == [pytest.approx(-1.0)]


def test_minimality_ignores_the_output_variable_constraint():
    prog, batch = _case("parity_sequential_relative", 4)
    assert minimality(prog, mlp_inputs(prog, batch)).minimal


def test_numerical_programs_and_bad_alpha_are_refused():
    entry = get_program("parity_sum_mod_2")
    with pytest.raises(RasplabError, match="all categorical"):
        check_optimum(entry.program(), [entry.encode("1 0")])
    prog, batch = _case("parity_sequential_relative", 2)
    with pytest.raises(RasplabError, match="alpha must be in"):
        check_optimum(prog, batch, alpha=1.0)
