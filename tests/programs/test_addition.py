"""The compact addition program: sums of long operands, layers, rule count, input glue."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.lang import interpret
from rasplab.lang.program import rule_count
from rasplab.programs.addition import ADDITION, END, PLUS, START
from rasplab.programs.addition_alta import ADDITION_ALTA

from .agreement import assert_interpreters_agree, assert_matches_reference


def test_matches_reference_function_up_to_45_digit_operands():
    groups = [("1-5", 700), ("6-20", 200), ("21-45", 100)]
    assert assert_matches_reference(ADDITION, groups, seed=1) == 1000


def test_every_pair_of_two_digit_operands():
    texts = [f"{a}+{b}" for a in range(100) for b in range(100)]
    batch = [ADDITION.encode(t) for t in texts]
    run = interpret(ADDITION.program(), batch)
    for text, ids, out in zip(texts, batch, run.outputs):
        assert ADDITION.decode(ids, out) == ADDITION.reference(text), text


def test_carries_across_a_100_position_input_in_n_plus_2_layers():
    texts = ["9" * 48 + "+1", "1+" + "9" * 48, "9" * 48 + "+" + "9" * 48, "0+0", "000+0"]
    batch = [ADDITION.encode(t) for t in texts]
    run = interpret(ADDITION.program(), batch)
    answers = ["".join(ADDITION.decode(ids, out)) for ids, out in zip(batch, run.outputs)]
    assert answers == ["1" + "0" * 48, "1" + "0" * 48, "1" + "9" * 47 + "8", "0", "0"]
    assert run.layers == [48 + 2, 48 + 2, 48 + 2, 1 + 2, 3 + 2]  # one layer fewer than ALTA's


def test_far_fewer_rules_than_the_alta_shaped_program():
    compact, alta = ADDITION.program(), ADDITION_ALTA.program()
    assert rule_count(compact) * 40 < rule_count(alta)
    assert len(alta.rules) == 16_421 and rule_count(alta) == 16_466  # ALTA's public code: 16,466


def test_fast_and_reference_interpreters_agree():
    assert_interpreters_agree(ADDITION, ["95+7", "0+0", "123+989", "9+99"])


def test_input_glue():
    assert ADDITION.encode("7+12") == [START, 0, 7, PLUS, 1, 2, END]
    assert ADDITION.reference("12345+678") == list("13023")
    assert ADDITION.decode([START, 0, PLUS, 0, END], [0, 0, 0, 5, 0]) == ["5"]
    for bad in ("12+", "+3", "1+2+3", "a+b", "1-2"):
        with pytest.raises(RasplabError, match="DIGITS\\+DIGITS"):
            ADDITION.encode(bad)


def test_random_inputs_have_the_requested_length():
    from rasplab.seeding import generator

    rng = generator(0, "test-addition")
    for length in (1, 3, 17):
        for _ in range(20):
            a, b = ADDITION.random_input(rng, length).split("+")
            assert max(len(a), len(b)) == length
    with pytest.raises(RasplabError):
        ADDITION.check_lengths("0-3")
