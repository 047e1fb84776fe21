"""The standard SCAN splits beyond ``simple`` and ``length``, generated from the grammar.

* Add-primitive (Lake and Baroni 2018): ``add_jump`` and ``add_turn_left``. The test set holds
  every command using the primitive phrase (``jump`` as the ``x`` of any phrase; the phrase
  ``turn left`` exactly); training holds the rest plus the primitive's lone command. The
  published files repeat the lone command in training (``jump`` 1,467 times, ``turn left``
  2,189 times: 14,670 and 21,890 lines); here every command appears once, and samplers that
  want the published weighting can repeat it.
* Template splits (Loula et al. 2018): ``jump_around_right``, ``around_right``,
  ``opposite_right`` and ``right``. The test set holds every command with a clause whose phrase
  matches the template (``x around right`` etc. for x in walk/look/run/jump; ``turn`` phrases
  stay in training, and ``jump_around_right`` holds out the one phrase). The published files
  hold 19,701 commands, not 20,910: their counts (1,173 and 4,476 test commands) are exactly
  those of this construction over 99 clauses instead of 102, i.e. one phrase fewer, which the
  files do not name; here the whole grammar is used, so the test sets have 1,209 and 4,620.

Every split is a pure function of the grammar (and, for MCD, of its seed): see
:mod:`rasplab.tasks.scan_mcd` for MCD1-3.

>>> train, test = add_primitive_split("jump")
>>> (len(train), len(test), "jump" in train)
(13204, 7706, True)
>>> [len(template_split(name)[1]) for name in TEMPLATES]
[1209, 4620, 4620, 4620]
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from rasplab.errors import RasplabError
from rasplab.tasks.scan import CONJUNCTIONS, PRIMITIVES, REPEATS, all_commands


class Clause(NamedTuple):
    """One clause S of a command: its phrase's ``x``, modifier (``""``, ``opposite``,
    ``around``), direction (``""``, ``left``, ``right``) and repetitions (1-3)."""

    x: str
    modifier: str
    direction: str
    reps: int


def clauses(command: str) -> tuple[Clause, ...]:
    """The clauses of a (well-formed) command, in the order written.

    >>> clauses("jump around right twice after turn left")
    (Clause(x='jump', modifier='around', direction='right', reps=2), Clause(x='turn', modifier='', direction='left', reps=1))
    """
    words = command.split()
    parts, current = [], []
    for w in words:
        if w in CONJUNCTIONS:
            parts.append(current)
            current = []
        else:
            current.append(w)
    parts.append(current)
    out = []
    for part in parts:
        reps = REPEATS.get(part[-1], 0) if len(part) > 1 else 0
        if reps:
            part = part[:-1]
        reps = reps or 1
        modifier = part[1] if len(part) == 3 else ""
        direction = part[-1] if len(part) > 1 else ""
        out.append(Clause(part[0], modifier, direction, reps))
    return tuple(out)


ADD_PRIMITIVES = {"jump": "add_jump", "turn_left": "add_turn_left"}
"""Add-primitive split names by primitive."""


def _uses_primitive(clause: Clause, primitive: str) -> bool:
    if primitive == "jump":
        return clause.x == "jump"
    return (clause.x, clause.modifier, clause.direction) == ("turn", "", "left")


def add_primitive_split(primitive: str) -> tuple[list[str], list[str]]:
    """``(train, test)`` of the add-primitive split for ``jump`` or ``turn_left``, each in
    :func:`~rasplab.tasks.scan.all_commands` order."""
    if primitive not in ADD_PRIMITIVES:
        raise RasplabError(
            f"add-primitive splits exist for {', '.join(ADD_PRIMITIVES)}; got {primitive!r}"
        )
    return _add_primitive(primitive)


@cache
def _add_primitive(primitive: str) -> tuple[list[str], list[str]]:
    lone = primitive.replace("_", " ")
    train, test = [], []
    for c in all_commands():
        held = c != lone and any(_uses_primitive(k, primitive) for k in clauses(c))
        (test if held else train).append(c)
    return train, test


TEMPLATES = {
    "jump_around_right": (("jump",), "around", "right"),
    "around_right": (PRIMITIVES, "around", "right"),
    "opposite_right": (PRIMITIVES, "opposite", "right"),
    "right": (PRIMITIVES, "", "right"),
}
"""Template split name -> (the ``x`` it holds out, modifier, direction)."""


def template_split(name: str) -> tuple[list[str], list[str]]:
    """``(train, test)`` of a Loula et al. template split, each in command order."""
    if name not in TEMPLATES:
        raise RasplabError(f"template splits are {', '.join(TEMPLATES)}; got {name!r}")
    return _template(name)


@cache
def _template(name: str) -> tuple[list[str], list[str]]:
    xs, modifier, direction = TEMPLATES[name]
    train, test = [], []
    for c in all_commands():
        held = any(
            k.x in xs and k.modifier == modifier and k.direction == direction for k in clauses(c)
        )
        (test if held else train).append(c)
    return train, test
