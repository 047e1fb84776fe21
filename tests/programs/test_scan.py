"""The SCAN program gives the canonical actions of every SCAN command, in few layers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.reference import run_reference
from rasplab.programs import get_program
from rasplab.programs.scan import EOS, SCAN, SLOT, SLOTS, all_inputs, input_count, random_input
from rasplab.seeding import generator
from rasplab.tasks import scan as scan_task

from .agreement import assert_interpreters_agree

torch.set_num_threads(1)


def _run(program, commands: list[str], chunk: int = 2500) -> tuple[list[list[str]], list[int]]:
    """Answers and layers of ``program`` on ``commands`` (batched interpreter, in chunks)."""
    answers, layers = [], []
    for i in range(0, len(commands), chunk):
        ids = [SCAN.encode(c) for c in commands[i : i + chunk]]
        run = interpret(program, ids)
        answers += [SCAN.decode(t, o) for t, o in zip(ids, run.outputs)]
        layers += run.layers
    return answers, layers


def _expected_layers(command: str) -> int:
    """One layer per word, one for <eos>, one per block (a clause's phrase, once per repetition),
    one to write the last block's actions."""
    clauses = command.replace(" after ", " and ").split(" and ")
    blocks = sum({"twice": 2, "thrice": 3}.get(c.split()[-1], 1) for c in clauses)
    return len(command.split()) + 1 + blocks + 1


def test_registered():
    assert get_program("scan") is SCAN


def test_every_command_gives_its_canonical_actions():
    commands = scan_task.all_commands()
    answers, layers = _run(SCAN.program(), commands)
    wrong = [c for c, a in zip(commands, answers) if a != scan_task.interpret(c)]
    assert wrong == []
    assert [_expected_layers(c) for c in commands] == layers
    assert (min(layers), max(layers)) == (4, 17)


def test_reference_interpreter_agrees():
    commands = ["turn left twice after jump", "walk opposite right and look"]
    assert_interpreters_agree(SCAN, commands)
    p = SCAN.program(slots=8)
    for command in commands:
        ids = SCAN.encode(command, slots=8)
        run = run_reference(p, ids)
        assert SCAN.decode(ids, run.output) == scan_task.interpret(command)
        assert run.layers == _expected_layers(command)


def test_rule_set_is_small():
    p = SCAN.program()
    assert len(p.rules) < 500
    assert len(p.heads) == 22  # 18 + cown, pown, pdir (factored decoder) + la_end (parser)


def test_encode_and_decode():
    ids = SCAN.encode("jump left")
    assert (
        ids == [scan_task.WORDS.index("jump"), scan_task.WORDS.index("left"), EOS] + [SLOT] * SLOTS
    )
    outputs = [0, 0, 0, 5, 4] + [0] * (SLOTS - 2)
    assert SCAN.decode(ids, outputs) == ["I_TURN_LEFT", "I_JUMP"]


@pytest.mark.parametrize("command", ["fly", "walk walk", "turn", "jump twice twice", "walk and"])
def test_malformed_commands_are_rejected(command):
    with pytest.raises(RasplabError):
        SCAN.encode(command)


def test_length_is_the_number_of_actions():
    train, test = scan_task.length_split()
    assert sum(input_count(n) for n in range(1, 23)) == len(train)
    assert sum(input_count(n) for n in range(23, SLOTS + 1)) == len(test)
    assert sorted(c for n in range(23, SLOTS + 1) for c in all_inputs(n)) == sorted(test)
    rng = generator(0, "test_scan")
    assert len(scan_task.interpret(random_input(rng, 23))) == 24  # no command has 23 actions
    for n in (1, 8, 48):
        assert len(scan_task.interpret(random_input(rng, n))) == n


@pytest.mark.slow
def test_minimal_program_of_the_length_split_generalises():
    """Rules fired on the 16,990 training commands (<= 22 actions) are at most 2,000 and
    suffice for every one of the 3,920 test commands (24-48 actions)."""
    train, test = scan_task.length_split()
    p = SCAN.program()
    fired: set[int] = set()
    for i in range(0, len(train), 1000):
        run = interpret(p, [SCAN.encode(c) for c in train[i : i + 1000]], fired=True)
        fired.update(np.flatnonzero(np.asarray(run.fired).any(axis=0)).tolist())
    assert len(fired) <= 2000
    minimal = p.with_rules([p.rules[i] for i in sorted(fired)], name="scan_minimal")
    answers, _ = _run(minimal, test)
    assert [a == scan_task.interpret(c) for c, a in zip(test, answers)] == [True] * len(test)
