"""SCAN: a shift-reduce parse of the command, then a decode of the parse tree (ALTA App. D.4).

Input: the command words, ``<eos>``, then ``slots`` (default 48, the longest output) empty
output slots. The parser (:mod:`rasplab.programs.scan_parse`) shifts one word per layer,
reducing first when the grammar says so, and leaves the clause nodes ``[S]`` or ``[J, S]`` on
the stack with their attributes (primitive = the node's own word, ``mod``, ``dir``, ``reps``)
and the conjunction in ``order``. The decoder then visits the clause nodes in output order
(``and``: left then right; ``after``: right then left) and writes one *block* per layer: the
actions of the clause's phrase (1 to 8 actions, e.g. ``jump around left`` is
``I_TURN_LEFT I_JUMP`` four times) into the slots right after the *frontier*, the slot holding
the last action written (at first ``<eos>``). A slot finds its offset ``k`` from the frontier
with relative heads (``f1``..``f8``) and writes the ``k``-th action of the block; the slot at
offset = block length becomes the new frontier. A clause with ``twice``/``thrice`` writes its
block 2 or 3 times. Apart from the lookahead marker starting at position 0, nothing depends
on absolute positions, so the rules that fire on short outputs are the rules long ones need.

Layers: ``words + 1`` to parse, one per block to decode (at most 9 + 1 + 6 = 16). The answer
is the slots' actions up to the first empty slot.

>>> from rasplab.lang.interpreter import interpret
>>> ids = SCAN.encode("jump twice after walk")
>>> run = interpret(SCAN.program(), [ids])
>>> SCAN.decode(ids, run.outputs[0]), run.layers
(['I_WALK', 'I_JUMP', 'I_JUMP'], [8])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang import input_var, position_var, program, qkv, rules_from_function, v_relative, var
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram, register_program
from rasplab.programs.scan_parse import (
    DECODE,
    DONE,
    EOS,
    FREE,
    PARTS,
    RELS,
    SLOT,
    SYMBOLS,
    TOKENS,
    token_class,
)
from rasplab.tasks.scan import ACTION_TOKENS, WORDS, all_commands, interpret

MAX_WORDS, MAX_BLOCKS, MAX_BLOCK = 9, 6, 8
"""Longest command (words), most blocks (2 clauses x 3 repetitions), longest block (actions)."""
SLOTS = 48
"""Default number of output slots: the longest SCAN output."""
EMPTY = 0
"""``act`` of a slot with no action; action ``i`` of ``ACTION_TOKENS`` is ``act = i + 1``."""
_ACT = {w: ACTION_TOKENS.index(f"I_{w.upper()}") + 1 for w in ("walk", "look", "run", "jump")}
_TURN = {1: ACTION_TOKENS.index("I_TURN_LEFT") + 1, 2: ACTION_TOKENS.index("I_TURN_RIGHT") + 1}
TURN = WORDS.index("turn")
_PRIMITIVES = ("walk", "look", "run", "jump", "turn")


def _offset(x) -> int | None:
    """For an empty output slot: its distance ``k`` (1..8) from the frontier, if any (the
    frontier is never left of ``<eos>``, so words and written slots find none)."""
    if x["phase"] != DECODE or x["act"] != EMPTY:
        return None
    for k in range(1, MAX_BLOCK + 1):
        if x[f"f{k}"] == 1:
            return k
    return None


def _own_action(x) -> int | None:
    """The current clause's primitive action (None for ``turn``)."""
    token = x["cx"]
    return _ACT.get(WORDS[token]) if token < len(WORDS) else None


def _block_length(x) -> int:
    """Actions in the current clause's phrase: 1 (u, turn d), 2 (x d, turn opposite d),
    3 (x opposite d), 4 (turn around d) or 8 (x around d)."""
    mod = x["cmod"]
    if mod == 0 and x["cdir"] == 0:
        return 1
    token = x["cx"]
    if token >= len(WORDS) or WORDS[token] not in _PRIMITIVES:
        return 0  # not a clause node's word: no block
    own = int(token != TURN)
    return (1 + own, 2 + own, 4 + 4 * own)[mod]


def _action_at(x, k: int) -> int | None:
    """The ``k``-th action (1-based) of the current clause's phrase, None past its end; reads
    the direction only for a turn and the primitive only where it matters."""
    mod = x["cmod"]
    if mod == 0:
        direction = x["cdir"]
        if direction == 0:  # u
            return _own_action(x) if k == 1 else None
        return _TURN.get(direction) if k == 1 else _own_action(x) if k == 2 else None
    if mod == 1:  # x opposite d
        return _TURN.get(x["cdir"]) if k <= 2 else _own_action(x) if k == 3 else None
    if k in (1, 3):  # x around d
        return _TURN.get(x["cdir"])
    if x["cx"] == TURN:  # turn around d: four turns
        return _TURN.get(x["cdir"]) if k <= 4 else None
    own = _own_action(x)
    return None if own is None else _TURN.get(x["cdir"]) if k % 2 else own


def decode_action(x):
    """An empty slot at offset ``k`` from the frontier writes the block's ``k``-th action."""
    k = _offset(x)
    if k is not None:
        action = _action_at(x, k)
        if action is not None:
            x["act"] = action


def decode_frontier(x):
    """The frontier moves to the slot holding the block's last action."""
    if x["phase"] != DECODE:
        return
    if x["frontier"] == 1:
        x["frontier"] = 0
        return
    k = _offset(x)
    if k is not None and k == _block_length(x):
        x["frontier"] = 1


def decode_repeat(x):
    """After each block: count the repetition (``ri`` runs 0..reps, then starts again)."""
    if x["phase"] == DECODE:
        ri, reps = x["ri"], x["creps"]
        if ri <= reps:
            x["ri"] = ri + 1 if ri < reps else 0


def decode_clause(x):
    """After a clause's last block: on to the other clause if one is ``left``, else done."""
    if x["phase"] == DECODE and x["ri"] == x["creps"]:
        if x["left"] == 1:
            x["left"] = 0
        else:
            x["phase"] = DONE


def decode_switch(x):
    """The other clause is the other of the two top stack entries."""
    if x["phase"] == DECODE and x["ri"] == x["creps"] and x["left"] == 1:
        cq = x["cq"]
        if cq in (0, 1):
            x["cq"] = 1 - cq


def build_scan(slots: int = SLOTS) -> Program:
    """The SCAN program with ``slots`` output slots (commands with longer outputs are cut)."""
    if not isinstance(slots, int) or slots < 1:
        raise RasplabError(f"slots must be a positive int, got {slots!r}")
    variables = {
        "tok": input_var(TOKENS),
        "sym": input_var(SYMBOLS, token_class),
        "rel": input_var(RELS, lambda t: 0 if t == EOS else FREE),
        "is_la": position_var(2, lambda p: int(p == 0)),
        "frontier": input_var(2, lambda t: int(t == EOS)),
        "mod": var(3),
        "dir": var(3),
        "reps": var(3),
        "order": var(3),
        "phase": var(3),
        "cq": var(RELS),
        "ri": var(3),
        "left": var(2),
        "act": var(len(ACTION_TOKENS) + 1),
        "one": var(2, default=1),
        "k0": var(RELS, default=0),
        "k1": var(RELS, default=1),
    }
    heads = {
        "la": qkv("one", "is_la", "sym"),
        "la_left": v_relative("is_la", -1),
        "s0": qkv("k0", "rel", "sym"),
        "s1": qkv("k1", "rel", "sym"),
        "t0": qkv("k0", "rel", "tok"),
        "t1": qkv("k1", "rel", "tok"),
        "cx": qkv("cq", "rel", "tok"),
        "cmod": qkv("cq", "rel", "mod"),
        "cdir": qkv("cq", "rel", "dir"),
        "creps": qkv("cq", "rel", "reps"),
        **{f"f{k}": v_relative("frontier", -k) for k in range(1, MAX_BLOCK + 1)},
    }
    options = dict(
        output="act",
        input_range=TOKENS,
        position_range=MAX_WORDS + 1 + slots,
        halt=("phase", DONE),
        max_layers=MAX_WORDS + 1 + MAX_BLOCKS,
        name="scan",
        undefined="no_match",  # la_left at position 0 is undefined and must match no rule
    )
    skeleton = program(variables, heads, [], **options)
    parts = (*PARTS, decode_action, decode_frontier, decode_repeat, decode_clause, decode_switch)
    rules = [
        r
        for part in parts
        for r in rules_from_function(part, skeleton.variables, skeleton.all_variables)
    ]
    return program(variables, heads, rules, **options)


def encode(command: str, slots: int = SLOTS) -> list[int]:
    """Command words, ``<eos>``, then ``slots`` empty slots (a malformed command is an error)."""
    words = command.split()
    bad = [w for w in words if w not in WORDS]
    if bad:
        raise RasplabError(
            f"SCAN command has word {bad[0]!r} outside its vocabulary {' '.join(WORDS)}"
        )
    interpret(command)  # raises on a command the grammar does not generate
    return [WORDS.index(w) for w in words] + [EOS] + [SLOT] * slots


def decode(ids: Sequence[int], outputs: Sequence[int]) -> list[str]:
    """The action tokens in the slots after ``<eos>``, up to the first empty slot."""
    ids = list(ids)
    if EOS not in ids:
        raise RasplabError("SCAN token ids hold no <eos> token")
    actions = []
    for act in outputs[ids.index(EOS) + 1 :]:
        if act == EMPTY:
            break
        actions.append(ACTION_TOKENS[int(act) - 1])
    return actions


@lru_cache(maxsize=1)
def _by_output_length() -> dict[int, tuple[str, ...]]:
    """Every command, grouped by the number of actions it produces."""
    groups: dict[int, list[str]] = defaultdict(list)
    for command in all_commands():
        groups[len(interpret(command))].append(command)
    return {n: tuple(c) for n, c in sorted(groups.items())}


def all_inputs(length: int) -> tuple[str, ...]:
    """The commands with exactly ``length`` actions (none for 23, 29, 31, ...)."""
    return _by_output_length().get(length, ())


def input_count(length: int) -> int:
    """How many commands have exactly ``length`` actions."""
    return len(all_inputs(length))


def random_input(rng: np.random.Generator, length: int) -> str:
    """A random command with ``length`` actions; where no command has exactly that many
    (23, 29, 31, ...), one with the next longer existing length (else the longest)."""
    groups = _by_output_length()
    if length < 1:
        raise RasplabError(f"SCAN outputs have at least 1 action, got length {length}")
    n = min((k for k in groups if k >= length), default=max(groups))
    return groups[n][int(rng.integers(0, len(groups[n])))]


SCAN = register_program(
    LibraryProgram(
        name="scan",
        description="SCAN commands to actions: shift-reduce parse, then decode the parse tree (ALTA App. D.4)",
        build=build_scan,
        encode=encode,
        decode=decode,
        reference=interpret,
        random_input=random_input,
        length_unit="output actions",
        min_length=1,
        max_length=SLOTS,
        all_inputs=all_inputs,
        input_count=input_count,
    )
)
