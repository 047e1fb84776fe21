"""SCAN: the grammar's 20,910 commands, their actions, the splits and the task format."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks import get_task
from rasplab.tasks.scan import all_commands, canonical_line, interpret, length_split, simple_split


def test_exactly_20910_unique_commands_in_fixed_order():
    commands = all_commands()
    assert len(commands) == 20910 and len(set(commands)) == 20910
    assert commands[:4] == ["walk", "walk twice", "walk thrice", "look"]
    assert commands[101] == "turn around right thrice"
    assert (
        commands[102] == "walk and walk"
        and commands[-1] == "turn around right thrice after turn around right thrice"
    )
    assert all_commands() == commands


@pytest.mark.parametrize(
    "command, actions",
    [
        ("jump", "I_JUMP"),
        ("turn left", "I_TURN_LEFT"),
        ("walk opposite right", "I_TURN_RIGHT I_TURN_RIGHT I_WALK"),
        (
            "look around left",
            "I_TURN_LEFT I_LOOK I_TURN_LEFT I_LOOK I_TURN_LEFT I_LOOK I_TURN_LEFT I_LOOK",
        ),
        ("turn around right", "I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT"),
        ("turn opposite left twice", "I_TURN_LEFT I_TURN_LEFT I_TURN_LEFT I_TURN_LEFT"),
        ("run thrice and jump", "I_RUN I_RUN I_RUN I_JUMP"),
        ("run after jump left", "I_TURN_LEFT I_JUMP I_RUN"),
        ("jump twice after walk right", "I_TURN_RIGHT I_WALK I_JUMP I_JUMP"),
    ],
)
def test_interpret_known_commands(command, actions):
    assert interpret(command) == actions.split()
    assert canonical_line(command) == f"IN: {command} OUT: {actions}"


def test_composition_laws_hold_for_every_command():
    clauses = all_commands()[:102]
    meaning = {c: interpret(c) for c in clauses}
    for a in clauses[::7]:
        for b in clauses[::11]:
            assert interpret(f"{a} and {b}") == meaning[a] + meaning[b]
            assert interpret(f"{a} after {b}") == meaning[b] + meaning[a]
    for c in clauses:
        if c.endswith(" twice"):
            assert meaning[c] == meaning[c[: -len(" twice")]] * 2


@pytest.mark.parametrize(
    "bad", ["turn", "jump jump", "walk left and", "walk sideways", "look and run and jump", ""]
)
def test_malformed_commands_are_errors(bad):
    with pytest.raises(RasplabError):
        interpret(bad)


def test_length_split():
    train, test = length_split()
    assert (len(train), len(test)) == (16990, 3920)
    assert max(len(interpret(c)) for c in train) == 22 and min(len(interpret(c)) for c in test) > 22
    assert set(train) | set(test) == set(all_commands())


def test_simple_split_is_seeded_80_20():
    train, test = simple_split(0)
    assert (len(train), len(test)) == (16728, 4182) and not set(train) & set(test)
    assert simple_split(0) == (train, test) and simple_split(1)[0] != train


def test_scan_task_format_and_splits():
    task = get_task("scan")
    ex = task.example("walk left twice")
    assert ex.tokens == (
        "<bos>",
        "walk",
        "left",
        "twice",
        "<sep>",
        "I_TURN_LEFT",
        "I_WALK",
        "I_TURN_LEFT",
        "I_WALK",
        "<eos>",
    )
    assert ex.length == 3 and ex.scored_positions() == list(range(4, 9))
    assert set(ex.tokens) <= set(task.vocab)
    test = task.dataset("test")
    assert len(test) == 3920 and all(len(e.tokens) - 3 - e.length > 22 for e in test)
    some = task.dataset("train", "1-4", n=50, seed=0)
    assert (
        len(some) == 50
        and all(e.length <= 4 for e in some)
        and some == task.dataset("train", "1-4", n=50, seed=0)
    )
    train = set(length_split()[0])
    rng = generator(0)
    assert all(" ".join(task.sample(rng, n).tokens[1 : n + 1]) in train for n in range(1, 10))
    simple = get_task("scan", split="simple")
    assert len(simple.dataset("train")) == 16728
    assert task.num_positions() == 9 + 3 + 48
    with pytest.raises(RasplabError, match="split must be one of"):
        get_task("scan", split="mcd9")
    with pytest.raises(RasplabError, match="split_seed"):
        get_task("scan", split="simple", split_seed=-1)
