"""The add-primitive, template and MCD splits of SCAN, checked against independent counts."""

from __future__ import annotations

import re

import pytest

from rasplab.errors import RasplabError
from rasplab.tasks import get_task
from rasplab.tasks.scan import all_commands, interpret, split_commands
from rasplab.tasks.scan_mcd import (
    ATOM_ALPHA,
    COMPOUND_ALPHA,
    divergence,
    mcd_split,
    parse_atoms,
    parse_compounds,
    split_divergences,
)
from rasplab.tasks.scan_splits import TEMPLATES, add_primitive_split, template_split


def _partition(train, test):
    assert not set(train) & set(test)
    assert sorted(train + test) == sorted(all_commands())


def test_add_jump_matches_the_published_test_set_size_and_keeps_the_lone_command():
    train, test = add_primitive_split("jump")
    _partition(train, test)
    assert len(test) == 7706  # the published addprim_jump test set
    assert "jump" in train and all("jump" not in c.split() for c in train if c != "jump")
    assert all("jump" in c.split() for c in test)


def test_add_turn_left_holds_out_the_phrase_not_the_action():
    train, test = add_primitive_split("turn_left")
    _partition(train, test)
    assert len(test) == 1208  # the published addprim_turn_left test set
    assert all(re.search(r"\bturn left\b", c) for c in test)
    # I_TURN_LEFT is still learnable in training from other phrases
    assert any("I_TURN_LEFT" in interpret(c) for c in train if "turn" not in c)
    assert "turn left" in train and "turn opposite left" in train


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_template_splits_hold_out_exactly_the_template(name):
    train, test = template_split(name)
    _partition(train, test)
    xs, modifier, direction = TEMPLATES[name]
    phrase = (
        r"\b(" + "|".join(xs) + r") " + (modifier + " " if modifier else "") + direction + r"\b"
    )
    assert all(re.search(phrase, c) for c in test)
    assert not any(re.search(phrase, c) for c in train)
    # the test size follows 12s - 15 (one phrase) or 48s - 276 (four) for s = 102 clauses
    assert len(test) == (1209 if name == "jump_around_right" else 4620)


def test_every_split_is_deterministic_and_named_on_the_task():
    for name in ("add_jump", "around_right"):
        task = get_task("scan", split=name)
        assert task.pool("train") == split_commands(name)[0]
        assert len(task.dataset("test")) == len(split_commands(name)[1])


def test_bad_split_names_are_one_clear_error():
    with pytest.raises(RasplabError, match="add-primitive"):
        add_primitive_split("walk")
    with pytest.raises(RasplabError, match="template"):
        template_split("left")
    with pytest.raises(RasplabError, match="sizes"):
        mcd_split(1, train_size=20000, test_size=2000)


def test_atoms_and_compounds_of_a_parse():
    atoms = parse_atoms("look opposite left thrice and turn right")
    assert atoms.count("S -> V thrice") == 1 and "X -> turn" in atoms and "D -> left" in atoms
    compounds = parse_compounds("jump around right")
    assert "V -> X around D [X -> U | D -> right]" in compounds
    assert "V -> X around D [X -> U [U -> jump] | D -> right]" in compounds


def test_divergence_formula():
    assert divergence([1, 2, 3], [2, 4, 6], 0.5) == pytest.approx(0.0)
    assert divergence([1, 0], [0, 1], 0.1) == pytest.approx(1.0)
    # 1 - sum p^a q^(1-a) by hand
    p, q = [0.25, 0.75], [0.5, 0.5]
    hand = 1 - (0.25**0.1 * 0.5**0.9 + 0.75**0.1 * 0.5**0.9)
    assert divergence(p, q, 0.1) == pytest.approx(hand)


def test_small_mcd_split_reaches_high_compound_and_low_atom_divergence():
    split = mcd_split(7, train_size=800, test_size=100)
    assert len(split.train) == 800 and len(split.test) == 100
    assert not set(split.train) & set(split.test)
    da, dc = split_divergences(split.train, split.test)
    assert (da, dc) == (split.atom_divergence, split.compound_divergence)
    assert da <= 0.025
    # a random split of the same sizes has far lower compound divergence
    commands = all_commands()
    rand_train, rand_test = commands[::20][:800], commands[7::20][:100]
    _, dc_random = split_divergences(rand_train, rand_test)
    assert dc > dc_random + 0.2
    assert mcd_split(7, train_size=800, test_size=100) == split
    assert ATOM_ALPHA == 0.5 and COMPOUND_ALPHA == 0.1
