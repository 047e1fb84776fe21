"""The minimal SCAN program recombines parts seen in training (the factored parser and decoder)."""

from __future__ import annotations

import pytest

from rasplab.analysis.minimal import evaluate_on, minimize_on, unseen_rules
from rasplab.programs import get_program
from rasplab.tasks.scan import split_commands

SCAN = get_program("scan")
TRAIN = [
    "jump twice",
    "walk around left",
    "look opposite right",
    "run right after walk",
    "turn around left and look",
    "walk thrice and jump",
]
NO_LONE_PRIMITIVE = [  # every clause has a direction or a repetition (MCD1's training set too)
    "jump twice",
    "walk left thrice",
    "look opposite right and run twice",
    "turn around left after jump right",
    "run twice and turn left",
]


def test_new_combinations_of_seen_parts_are_decoded():
    result = minimize_on(SCAN, TRAIN)
    assert result.inputs == len(TRAIN) and len(result.program.rules) < len(result.full.rules)
    # jump only ever seen plain, around only with walk, right only plain/opposite: recombined
    novel = ["jump around left", "run around left", "jump opposite right", "walk right after look"]
    evaluation = evaluate_on(SCAN, result.program, novel)
    assert (evaluation.correct, evaluation.failed) == (len(novel), 0)


def test_a_phrase_is_reduced_by_the_same_rule_before_twice_and_before_and():
    # "x d" is reduced before a conjunction in TRAIN, never before "twice": same rule
    result = minimize_on(SCAN, TRAIN)
    assert evaluate_on(SCAN, result.program, ["look right twice"]).correct == 1


def test_a_lone_primitive_clause_needs_no_rule_of_its_own():
    result = minimize_on(SCAN, NO_LONE_PRIMITIVE)
    novel = ["walk and jump", "walk after look left", "run and turn left", "jump after walk"]
    evaluation = evaluate_on(SCAN, result.program, novel)
    assert (evaluation.correct, evaluation.failed) == (len(novel), 0)


def test_a_parser_step_never_seen_is_not_invented():
    # no conjunction in training: the reduce S K -> J never fired, so "and" cannot be parsed
    single = [c for c in NO_LONE_PRIMITIVE if " and " not in c and " after " not in c]
    result = minimize_on(SCAN, single)
    test = ["jump thrice", "walk left and jump twice", "walk after run"]
    assert evaluate_on(SCAN, result.program, test[1:2]).correct == 0
    assert evaluate_on(SCAN, SCAN.program(), test[1:2]).correct == 1
    unseen = unseen_rules(result, SCAN, test)
    assert {u.example for u in unseen} == set(test[1:])  # "jump thrice": seen rules only
    reduce = [u for u in unseen if u.rule.var == "sym" and u.rule.new == 8]  # S -> J
    assert [(u.inputs, u.example) for u in reduce] == [(2, test[1])]
    assert [u.inputs for u in unseen] == sorted((u.inputs for u in unseen), reverse=True)


def test_no_rule_is_unseen_on_the_training_inputs():
    result = minimize_on(SCAN, TRAIN)
    assert unseen_rules(result, SCAN, TRAIN) == []


@pytest.mark.slow
@pytest.mark.parametrize("split", ["mcd1", "mcd2", "mcd3", "length"])
def test_minimal_program_of_each_hard_split_answers_every_test_command(split):
    """ALTA §4.4: the minimal program w.r.t. the training set generalizes on length and MCD1-3
    (accuracy 1.0, fewer than 2,000 rules); no test command needs a rule training never fired."""
    train, test = split_commands(split)
    result = minimize_on(SCAN, train)
    assert result.rules_minimal < 2000
    evaluation = evaluate_on(SCAN, result.program, test)
    assert (evaluation.correct, evaluation.total) == (len(test), len(test))
    assert unseen_rules(result, SCAN, test) == []
