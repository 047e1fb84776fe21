"""SCAN: a shift-reduce parse of the command, then a decode of the parse tree (ALTA App. D.4).

Input: the command words, ``<eos>``, then ``slots`` (default 48, the longest output) empty
output slots. The parser (:mod:`rasplab.programs.scan_parse`) shifts one word per layer,
reducing first when the grammar says so, and leaves the clause nodes ``[S]`` or ``[J, S]`` on
the stack with their attributes (primitive = the node's own word, ``mod``, ``dir``, ``reps``)
and the conjunction in ``order``. The decoder then visits the clause nodes in output order
(``and``: left then right; ``after``: right then left), one *block* per layer: the actions of
the clause's phrase (1 to 8, e.g. ``jump around left`` is ``I_TURN_LEFT I_JUMP`` four times)
go into the slots right after the *frontier*, the slot holding the last action written (at
first ``<eos>``). A slot finds its offset ``k`` from the frontier with relative heads
(``f1``..``f8``); the slot at offset = block length becomes the new frontier. A clause with
``twice``/``thrice`` writes its block 2 or 3 times.

The decoder's rules are *factored* so that each reads one part of the grammar at a time: in
the block's layer a slot learns its kind (turn or own action, from the phrase's shape ``mod``,
whether its ``x`` has an action, and ``k``) and which clause node it belongs to (``pq``); one
layer later it writes the action its kind names, read from that node (the word's action, or
its direction's turn). So the rules that fire on ``jump twice`` and on ``walk around left``
together decode ``jump around left``: the minimal program recombines parts it has seen (MCD
splits), not only longer inputs. The parser is factored the same way (it reads the lookahead
by its role in the phrase, not its word class), so a lone primitive before ``and`` is reduced
by the rule that reduces it before ``twice``. Apart from the lookahead marker starting at
position 0, nothing depends on absolute positions.

Layers: ``words + 1`` to parse, one per block to decode, one to write the last block (at most
9 + 1 + 6 + 1 = 17). The answer is the slots' actions up to the first empty slot.

>>> from rasplab.lang.interpreter import interpret
>>> ids = SCAN.encode("jump twice after walk")
>>> run = interpret(SCAN.program(), [ids])
>>> SCAN.decode(ids, run.outputs[0]), run.layers
(['I_WALK', 'I_JUMP', 'I_JUMP'], [9])
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
    FLUSH,
    FREE,
    MODIFIERS,
    PARTS,
    PLAIN,
    RELS,
    ROLES,
    SLOT,
    SYMBOLS,
    TOKENS,
    token_class,
    token_role,
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
PRIMITIVE, TURN_WORD = 2, 1
"""``own`` of a word: walk/look/run/jump have an action of their own, turn has none."""
TURN_SLOT, OWN_SLOT = 1, 2
"""``pend`` of a slot: it will hold the clause's turn, or the clause's own action."""


def _offset(x) -> int | None:
    """For an empty output slot: its distance ``k`` (1..8) from the frontier, if any (the
    frontier is never left of ``<eos>``, so words and written slots find none)."""
    if x["phase"] != DECODE or x["act"] != EMPTY:
        return None
    for k in range(1, MAX_BLOCK + 1):
        if x[f"f{k}"] == 1:
            return k
    return None


def own_class(token: int) -> int:
    """``own`` of a token: PRIMITIVE for walk/look/run/jump, TURN_WORD for turn, else 0."""
    if token >= len(WORDS):
        return 0
    word = WORDS[token]
    return TURN_WORD if word == "turn" else PRIMITIVE if word in _ACT else 0


def node_action(token: int) -> int:
    """``nact`` of a token: the action of walk/look/run/jump (as ``act`` codes), else EMPTY."""
    return _ACT.get(WORDS[token], EMPTY) if token < len(WORDS) else EMPTY


def _block_length(x) -> int:
    """Actions of the current clause's phrase, from its shape (``cmod``) and whether its ``x``
    has an action (``cown``): 1 (u, turn d), 2 (x d, turn opposite d), 3 (x opposite d),
    4 (turn around d) or 8 (x around d); 0 where the clause pointer is on no phrase."""
    mod, own = x["cmod"], x["cown"]
    if own == 0:
        return 0
    if mod == 0:
        return 1
    has = int(own == PRIMITIVE)
    return (1 + has, 2 + has, 4 + 4 * has)[mod - 1]


def _kind_at(x, k: int) -> int:
    """Whether the ``k``-th action of the phrase is a turn (TURN_SLOT), the ``x``'s own action
    (OWN_SLOT) or past its end (0). Reads the shape and ``cown`` only: never the words."""
    if k > _block_length(x):
        return 0
    mod = x["cmod"]
    if mod == 0:
        return OWN_SLOT
    if mod == PLAIN:
        return TURN_SLOT if k == 1 else OWN_SLOT
    if mod == MODIFIERS["opposite"]:
        return TURN_SLOT if k <= 2 else OWN_SLOT
    if x["cown"] == TURN_WORD:
        return TURN_SLOT
    return TURN_SLOT if k % 2 else OWN_SLOT


def decode_kind(x):
    """An empty slot at offset ``k`` from the frontier learns what it will hold ..."""
    k = _offset(x)
    if k is not None:
        kind = _kind_at(x, k)
        if kind:
            x["pend"] = kind


def decode_pointer(x):
    """... and which clause node it belongs to (the clause pointer, a stack depth)."""
    if _offset(x) is not None:
        cq = x["cq"]
        if cq in (0, 1):
            x["pq"] = cq


def decode_write(x):
    """One layer later, a slot that knows its kind writes the action it names, read from its
    clause node: the node word's own action (``pown``) or the node's turn (``pdir``). Reads
    no ``phase``: only decoding sets ``pend``, so the rule that writes ``look`` in a block's
    layer also writes it in the last layer (FLUSH)."""
    if x["act"] == EMPTY:
        pend = x["pend"]
        if pend == TURN_SLOT:
            turn = _TURN.get(x["pdir"])
            if turn is not None:
                x["act"] = turn
        elif pend == OWN_SLOT:
            action = x["pown"]
            if action != EMPTY:
                x["act"] = action


def decode_frontier(x):
    """The frontier moves to the slot of the block's last action."""
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
    """After a clause's last block: on to the other clause if one is ``left``, else one more
    layer (FLUSH) for the last block's actions, then done."""
    if x["phase"] == DECODE and x["ri"] == x["creps"]:
        if x["left"] == 1:
            x["left"] = 0
        else:
            x["phase"] = FLUSH
    elif x["phase"] == FLUSH:
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
        "role": input_var(ROLES, token_role),
        "is_end": input_var(2, lambda t: int(t == EOS)),
        "rel": input_var(RELS, lambda t: 0 if t == EOS else FREE),
        "is_la": position_var(2, lambda p: int(p == 0)),
        "frontier": input_var(2, lambda t: int(t == EOS)),
        "own": input_var(3, own_class),
        "mod": var(4),
        "dir": var(3),
        "reps": var(3),
        "order": var(3),
        "phase": var(4),
        "cq": var(RELS),
        "ri": var(3),
        "left": var(2),
        "act": var(len(ACTION_TOKENS) + 1),
        "pend": var(3),
        "pq": var(RELS, default=FREE),
        "nact": input_var(len(ACTION_TOKENS) + 1, node_action),
        "one": var(2, default=1),
        "k0": var(RELS, default=0),
        "k1": var(RELS, default=1),
    }
    heads = {
        "la": qkv("one", "is_la", "role"),
        "la_end": qkv("one", "is_la", "is_end"),
        "la_left": v_relative("is_la", -1),
        "s0": qkv("k0", "rel", "sym"),
        "s1": qkv("k1", "rel", "sym"),
        "t0": qkv("k0", "rel", "tok"),
        "t1": qkv("k1", "rel", "tok"),
        "cx": qkv("cq", "rel", "tok"),
        "cmod": qkv("cq", "rel", "mod"),
        "cown": qkv("cq", "rel", "own"),
        "pown": qkv("pq", "rel", "nact"),
        "pdir": qkv("pq", "rel", "dir"),
        "cdir": qkv("cq", "rel", "dir"),
        "creps": qkv("cq", "rel", "reps"),
        **{f"f{k}": v_relative("frontier", -k) for k in range(1, MAX_BLOCK + 1)},
    }
    options = dict(
        output="act",
        input_range=TOKENS,
        position_range=MAX_WORDS + 1 + slots,
        halt=("phase", DONE),
        max_layers=MAX_WORDS + 1 + MAX_BLOCKS + 1,
        name="scan",
        undefined="no_match",  # la_left at position 0 is undefined and must match no rule
    )
    skeleton = program(variables, heads, [], **options)
    parts = (
        *PARTS,
        decode_kind,
        decode_pointer,
        decode_write,
        decode_frontier,
        decode_repeat,
        decode_clause,
        decode_switch,
    )
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
