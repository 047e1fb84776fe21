"""Minimal programs reproduce ALTA's Figure 4 pattern and rule counts (Sections 3.2, 4; App. C.2)."""

from __future__ import annotations

import json

import pytest

from rasplab.analysis.minimal import (
    Usage,
    evaluate_minimal,
    minimize,
    restrict,
    rule_count,
    score,
    usage,
)
from rasplab.cli import main
from rasplab.errors import RasplabError
from rasplab.lang import interpret
from rasplab.programs import get_program

RELATIVE = get_program("parity_sequential_relative")
ABSOLUTE = get_program("parity_sequential_absolute")
SUM_MOD_2 = get_program("parity_sum_mod_2")
ADDITION = get_program("addition_alta")


def test_minimal_sequential_relative_parity_generalizes_to_all_lengths():
    result = minimize(RELATIVE, "0-20", samples=300, seed=0)
    assert (result.rules_full, result.rules_minimal) == (7, 7)  # ALTA: 7 rules
    evaluation = evaluate_minimal(RELATIVE, result.program, "21-40", samples=300, seed=0)
    assert (evaluation.accuracy, evaluation.failed) == (1.0, 0)
    longer = evaluate_minimal(RELATIVE, result.program, "100-120", samples=30, seed=0)
    assert longer.accuracy == 1.0


def test_minimal_sequential_absolute_parity_does_not_generalize():
    result = minimize(ABSOLUTE, "0-20", samples=300, seed=0)
    assert (result.rules_full, result.rules_minimal) == (7, 7)
    assert result.used.positions == 20
    seen = evaluate_minimal(ABSOLUTE, result.program, "0-20", samples=200, seed=1)
    assert seen.accuracy == 1.0
    # Positions 20.. get default embeddings: idx_left 0 matches several keys, nothing halts.
    unseen = evaluate_minimal(ABSOLUTE, result.program, "21-40", samples=200, seed=0)
    assert unseen.accuracy == 0.0 and unseen.failed == unseen.total


@pytest.mark.parametrize(("train", "rules"), [("0-10", 16), ("0-20", 31), ("0-40", 61)])
def test_minimal_sum_mod_2_rule_count_grows_with_training_lengths(train, rules):
    result = minimize(SUM_MOD_2, train, samples=1000, seed=0)
    assert result.rules_minimal == rules  # ALTA: 16 / 31 / 61
    hi = int(train.split("-")[1])
    # one update rule per odd number of ones seen, one reset per bucket seen
    assert len(result.program.rules) == (hi + 1) // 2
    assert len(result.used.resets) == hi + 1


def test_minimal_sum_mod_2_fails_only_with_more_ones_than_seen():
    result = minimize(SUM_MOD_2, "0-20", samples=1000, seed=0)
    texts, _ = SUM_MOD_2.inputs("21-40", 600, 0, "test")
    few = [t for t in texts if t.count("1") <= 20]
    many = [t for t in texts if t.count("1") > 20]
    assert len(few) > 100 and len(many) > 100
    assert score(SUM_MOD_2, result.program, few) == (len(few), 0)  # longer, but ones seen
    correct, failed = score(SUM_MOD_2, result.program, many)
    assert failed == 0 and 0.3 < correct / len(many) < 0.7  # unseen bucket: parity stays 0
    overall = evaluate_minimal(SUM_MOD_2, result.program, "21-40", samples=600, seed=0)
    assert 0.6 < overall.accuracy < 0.9


def test_minimal_addition_fits_alta_884_rules_and_generalizes():
    result = minimize(ADDITION, "1-3", samples=2000, seed=0)
    assert result.rules_full == 16_421 + 45
    assert result.rules_minimal <= 884  # ALTA: 884 (measured here: exactly 884)
    assert len(result.used.resets) == 40  # ptr heads never see '<end>'-side values
    evaluation = evaluate_minimal(ADDITION, result.program, "4-40", samples=300, seed=0)
    assert evaluation.accuracy == 1.0


def test_restrict_defaults_unseen_tokens_and_positions():
    program = ABSOLUTE.program()
    used = Usage(fired=frozenset({0}), resets=frozenset(), tokens=frozenset({1}), positions=2)
    small = restrict(program, used)
    assert small.rules == program.rules[:1]
    assert small.name == "parity_sequential_absolute_minimal"
    parity, idx, done = small.variables["parity"], small.variables["idx"], small.variables["done"]
    assert [parity.initial(t, 0) for t in (0, 1)] == [0, 1]
    assert [idx.initial(0, p) for p in range(4)] == [0, 1, 0, 0]
    assert [done.initial(0, p) for p in range(3)] == [1, 0, 0]
    restricted = restrict(SUM_MOD_2.program(), Usage(frozenset(), frozenset(), frozenset({2}), 1))
    assert restricted.token_table["start_or_one"] == (0, 0, 1)  # token 1 unseen: default 0


def test_usage_counts_fired_rules_and_resets():
    program = RELATIVE.program()
    used = usage(program, [RELATIVE.encode("1 1"), RELATIVE.encode("1 0"), RELATIVE.encode("1 1")])
    assert used.tokens == {0, 1, 2} and used.positions == 3
    assert used.fired == {0, 1, 2}  # done, parity 0 -> 1, parity 1 -> 0
    assert used.resets == {
        ("parity_left", 0),
        ("parity_left", 1),
        ("done_left", 0),
        ("done_left", 1),
    }
    assert rule_count(program) == 7


def test_failing_test_inputs_count_as_failed_and_the_others_are_scored():
    result = minimize(ABSOLUTE, "0-3", samples=None, seed=0)
    texts = ["1 0", "1 1 1 1 1", "1", "0 0 0 0 0 0"]
    batch = [ABSOLUTE.encode(t) for t in texts]
    run = interpret(result.program, batch, errors="mark")
    assert run.outputs == [[1, 1], None, [1], None]
    # unseen positions 4..: the minimal program's heads select nothing there, and its rules
    # read them (an error under the default undefined="raise"; before, the run never halted)
    assert "reads 'done_left', which is undefined at layer 1, position" in run.errors[1]
    assert score(ABSOLUTE, result.program, texts) == (2, 2)


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_cli_minimal_prints_one_json_object(capsys):
    code, out, _ = _cli(
        capsys,
        "minimal",
        "parity_sequential_relative",
        "--train-lengths",
        "0-6",
        "--test-lengths",
        "7-12",
        "--samples",
        "200",
        "--json",
    )
    assert code == 0
    record = json.loads(out)
    assert len(out.strip().splitlines()) == 1
    assert (record["rules_full"], record["rules_minimal"], record["test_accuracy"]) == (7, 7, 1.0)
    assert record["train_exhaustive"] is True and record["train_inputs"] == 127


@pytest.mark.parametrize(
    "args",
    [
        ["nope", "--train-lengths", "0-2", "--test-lengths", "3-4"],
        ["addition_alta", "--train-lengths", "0-3", "--test-lengths", "4-6"],
        ["parity_sum_mod_2", "--train-lengths", "5-2", "--test-lengths", "3-4"],
        ["parity_sum_mod_2", "--train-lengths", "x", "--test-lengths", "3-4"],
        ["parity_sum_mod_2", "--train-lengths", "0-2", "--test-lengths", "3-400"],
        ["parity_sum_mod_2", "--train-lengths", "0-2", "--test-lengths", "3-4", "--samples", "0"],
        [
            "parity_sum_mod_2",
            *("--train-lengths", "0-40", "--test-lengths", "3-4", "--samples", "10000000000"),
        ],
        ["scan", "-o", "split=mcd9"],
        ["scan", "-o", "split=length", "--train-lengths", "1-3"],
        ["parity_sum_mod_2", "-o", "split=length"],
        ["scan", "-o", "oops"],
        ["scan"],
    ],
)
def test_cli_minimal_bad_input_exits_2(capsys, args):
    code, out, err = _cli(capsys, "minimal", *args, "--json")
    assert code == 2 and out == ""
    assert err.startswith("rasplab: error:") and len(err.strip().splitlines()) == 1


def test_zero_samples_is_refused_not_defaulted():
    entry = get_program("parity_sum_mod_2")
    with pytest.raises(RasplabError, match="samples must be a positive int"):
        minimize(entry, "1-3", samples=0)
    with pytest.raises(RasplabError, match="samples must be a positive int"):
        evaluate_minimal(entry, entry.program(), "1-3", samples=0)
