"""The minimal SCAN program recombines parts seen in training (the factored decoder)."""

from __future__ import annotations

from rasplab.analysis.minimal import evaluate_on, minimize_on
from rasplab.programs import get_program

SCAN = get_program("scan")
TRAIN = [
    "jump twice",
    "walk around left",
    "look opposite right",
    "run right after walk",
    "turn around left and look",
    "walk thrice and jump",
]


def test_new_combinations_of_seen_parts_are_decoded():
    result = minimize_on(SCAN, TRAIN)
    assert result.inputs == len(TRAIN) and len(result.program.rules) < len(result.full.rules)
    # jump only ever seen plain, around only with walk, right only plain/opposite: recombined
    novel = ["jump around left", "run around left", "jump opposite right", "walk right after look"]
    evaluation = evaluate_on(SCAN, result.program, novel)
    assert (evaluation.correct, evaluation.failed) == (len(novel), 0)


def test_a_parser_step_never_seen_is_not_invented():
    # "x d" is only ever reduced before a conjunction in TRAIN (to a clause S); before
    # "twice" the parser reduces it to a phrase V first, a rule that never fired
    result = minimize_on(SCAN, TRAIN)
    assert evaluate_on(SCAN, result.program, ["look right twice"]).correct == 0
    assert evaluate_on(SCAN, SCAN.program(), ["look right twice"]).correct == 1
