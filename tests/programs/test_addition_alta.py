"""The ALTA-shaped addition program (App. D.2): sums of long operands, layers."""

from __future__ import annotations

import pytest

from rasplab.lang import interpret
from rasplab.programs.addition_alta import ADDITION_ALTA

from .agreement import assert_interpreters_agree, assert_matches_reference


def test_matches_reference_function_up_to_45_digit_operands():
    groups = [("1-5", 700), ("6-20", 200), ("21-45", 100)]
    assert assert_matches_reference(ADDITION_ALTA, groups, seed=1) == 1000


def test_carries_across_a_100_position_input():
    texts = ["9" * 48 + "+1", "1+" + "9" * 48, "9" * 48 + "+" + "9" * 48, "0+0", "000+0"]
    batch = [ADDITION_ALTA.encode(t) for t in texts]
    assert max(len(ids) for ids in batch) == 99
    run = interpret(ADDITION_ALTA.program(), batch)
    answers = ["".join(ADDITION_ALTA.decode(ids, out)) for ids, out in zip(batch, run.outputs)]
    assert answers == ["1" + "0" * 48, "1" + "0" * 48, "1" + "9" * 47 + "8", "0", "0"]
    assert run.layers == [48 + 3, 48 + 3, 48 + 3, 1 + 3, 3 + 3]  # N digits: N + 3 layers


def test_fast_and_reference_interpreters_agree():
    # The reference interpreter checks all 16,421 rules at every position: keep it to one input.
    assert_interpreters_agree(ADDITION_ALTA, ["5+7"])


@pytest.mark.slow
def test_fast_and_reference_interpreters_agree_on_more_inputs():
    assert_interpreters_agree(ADDITION_ALTA, ["95+7", "0+0", "123+989", "9+99"])
