"""The shift-reduce parser half of the ``scan`` program: stack, grammar, and its MLP parts.

The stack lives in the input positions (ALTA's representation, but with relative addresses):
every word that has been shifted carries ``rel``, its distance from the top of the stack
(0 = top); reduced-away words are ``DEAD`` and unread words, ``<eos>`` and the output slots
are ``FREE``, except that ``<eos>`` starts as the stack bottom (``rel = 0``). Heads with the
constant queries ``k0``/``k1`` read the top two stack symbols and words; the lookahead is the
position marked ``is_la`` (the first unread word), which moves one position right on each
shift. A reduce writes the new nonterminal into the leftmost position of its span and marks
the rest ``DEAD``, so a stack entry is always the position of the first word it covers.

Grammar (each layer does at most one reduce, chosen from the top two symbols and the
lookahead's *role*, followed by the shift of the lookahead; so ``n`` words take ``n + 1``
layers)::

    S -> X | X D | X M D          (lookahead closes the phrase: twice/thrice/and/after/<eos>)
    S -> S R                      (lookahead and/after/<eos>)
    J -> S K                      (lookahead a primitive)

with word classes X (walk look run jump turn), D (left right), M (opposite around),
R (twice thrice) and K (and after). The lookahead is read only by its role in the phrase
(``la``: it opens one, continues one, or closes one, ``<eos>`` included), never by its word
class, and a phrase and a repeated phrase are the same symbol ``S``: so ``walk`` is reduced
before ``and`` by the very rule that reduces it before ``twice``, and a rule seen on one
clause shape serves every other (the minimal program of an MCD split, whose training set may
hold no lone-primitive clause at all, still parses ``walk and jump``). Reduces synthesise the
attributes the decoder needs into the node: ``mod`` (the phrase's shape: 0 for ``u``, PLAIN
for ``X D``, else from the M word) and ``dir`` (from the D word), ``reps`` (from R) and, for
the whole command, the broadcast ``order`` (from K). The parse ends on ``<eos>`` with the
stack ``[S]`` or ``[J, S]``: the clause nodes of the parse tree, left to right.

>>> sorted(WORD_CLASS.items())[:3]
[('after', 5), ('and', 5), ('around', 3)]
>>> _action({"la": CLOSES, "s0": D, "s1": M})
('S_XMD', 3, 7)
>>> _action({"la": CLOSES, "s0": X})  # walk | twice, walk | and, walk | <eos>: one reduce
('S_X', 1, 7)
"""

from __future__ import annotations

from rasplab.tasks.scan import WORDS

NONE, X, D, M, R, K, END, S, J = range(9)
"""Stack symbols (``sym``): word classes, ``<eos>`` (also the stack bottom), nonterminals."""
SYMBOLS = 9
OPENS, CONTINUES, CLOSES = 1, 2, 3
"""Roles of the lookahead (``role``, read by the ``la`` head; 0 for slots): it opens a phrase
(X), continues one (D, M) or closes one (R, K and ``<eos>``). Whether it is ``<eos>`` (no shift,
the parse ends) is read apart, by the ``la_end`` head."""
ROLES = 4
FREE, DEAD = 6, 5
"""``rel`` of positions off the stack; stack entries have ``rel`` 0..4."""
RELS = 7
PARSE, DECODE, DONE, FLUSH = 0, 1, 2, 3
"""Values of the broadcast ``phase`` (the program halts when every position is DONE; FLUSH is
the one layer after the last block, in which its actions are written)."""
PLAIN = 1
"""``mod`` of an ``X D`` phrase (0 is a lone ``u``): ``mod`` is the phrase's shape."""
MODIFIERS = {"opposite": 2, "around": 3}
DIRECTIONS = {"left": 1, "right": 2}
REPEATS = {"twice": 1, "thrice": 2}
CONJUNCTIONS = {"and": 1, "after": 2}
WORD_CLASS = {
    **{w: X for w in ("walk", "look", "run", "jump", "turn")},
    **{w: D for w in DIRECTIONS},
    **{w: M for w in MODIFIERS},
    **{w: R for w in REPEATS},
    **{w: K for w in CONJUNCTIONS},
}
EOS, SLOT = len(WORDS), len(WORDS) + 1
"""Token ids: the words in ``rasplab.tasks.scan.WORDS`` order, then ``<eos>`` and ``<slot>``."""
TOKENS = len(WORDS) + 2

_REDUCES = {  # (s0, s1 or None) -> (rule, span length, left-hand side), lookahead closing
    (X, None): ("S_X", 1, S),
    (D, X): ("S_XD", 2, S),
    (D, M): ("S_XMD", 3, S),
    (R, None): ("S_SR", 2, S),
}
_ROLE = {X: OPENS, D: CONTINUES, M: CONTINUES, R: CLOSES, K: CLOSES, END: CLOSES}


def token_class(token: int) -> int:
    """The initial stack symbol of a token id (its word class, END, or NONE for slots)."""
    if token < len(WORDS):
        return WORD_CLASS[WORDS[token]]
    return END if token == EOS else NONE


def token_role(token: int) -> int:
    """The role of a token id as the lookahead (OPENS, CONTINUES, CLOSES; 0 for slots)."""
    return _ROLE.get(token_class(token), 0)


def _action(x) -> tuple[str, int, int] | None:
    """The reduce before this layer's shift, as ``(rule, span, lhs)`` (``("shift", 0, NONE)``
    for none); reads the lookahead's role and as few stack symbols as it needs. ``None`` for a
    configuration no SCAN command reaches."""
    la = x["la"]
    if la == CONTINUES:
        return ("shift", 0, NONE)
    if la == OPENS:
        s0 = x["s0"]
        return ("J_SK", 2, J) if s0 == K else ("shift", 0, NONE) if s0 == END else None
    if la != CLOSES:
        return None
    s0 = x["s0"]
    return _REDUCES.get((s0, x["s1"]) if s0 == D else (s0, None))


def parse_rel(x):
    """Stack addresses: the span's leftmost entry becomes the LHS, the rest die, entries
    below move up by ``span - 1``, and the shift pushes the lookahead (everything moves down 1)."""
    if x["phase"] != PARSE:
        return
    act = _action(x)
    if act is None:
        return
    _, span, _ = act
    shift = 1 - x["la_end"]
    r = x["rel"]
    if r == FREE:
        if shift and x["is_la"] == 1:
            x["rel"] = 0
        return
    if r == DEAD:
        return
    if r < span:
        x["rel"] = shift if r == span - 1 else DEAD
    elif r - max(span - 1, 0) + shift <= 4:  # deeper entries cannot occur
        x["rel"] = r - max(span - 1, 0) + shift


def _at_lhs(x):
    """The applied rule if this position is the leftmost entry of the reduced span, else None."""
    if x["phase"] != PARSE:
        return None
    act = _action(x)
    if act is None or act[1] == 0 or x["rel"] != act[1] - 1:
        return None
    return act[0]


_LEFTMOST = {"S_X": X, "S_XD": X, "S_XMD": X, "S_SR": S, "J_SK": S}
"""The symbol a rule's leftmost entry holds before the reduce."""


def parse_sym(x):
    """The reduced span's leftmost entry takes the rule's left-hand side."""
    rule = _at_lhs(x)
    if rule is not None and x["sym"] == _LEFTMOST[rule]:
        x["sym"] = {"S": S, "J": J}[rule[0]]


def _word(x, head: str) -> str:
    """The command word a token head read ("" for ``<eos>``/slots)."""
    token = x[head]
    return WORDS[token] if token < len(WORDS) else ""


def parse_attributes(x):
    """Synthesised attributes: ``dir`` from the D word on top, ``reps`` from the R word."""
    rule = _at_lhs(x)
    if rule in ("S_XD", "S_XMD"):
        word = _word(x, "t0")
        if word in DIRECTIONS and x["dir"] == 0:
            x["dir"] = DIRECTIONS[word]
    elif rule == "S_SR":
        word = _word(x, "t0")
        if word in REPEATS and x["reps"] == 0:
            x["reps"] = REPEATS[word]


def parse_modifier(x):
    """``mod`` of an ``X M D`` node, from the M word at stack depth 1."""
    if _at_lhs(x) == "S_XMD":
        word = _word(x, "t1")
        if word in MODIFIERS and x["mod"] == 0:
            x["mod"] = MODIFIERS[word]


def parse_shape(x):
    """``mod`` of an ``X D`` node is PLAIN: read from the rule alone, not from its words."""
    if _at_lhs(x) == "S_XD" and x["mod"] == 0:
        x["mod"] = PLAIN


def parse_lookahead(x):
    """Every shift moves the lookahead marker one position right."""
    if x["phase"] != PARSE or x["la_end"] == 1:
        return
    if x["is_la"] == 1:
        x["is_la"] = 0
    elif x["la_left"] == 1:  # undefined (matches nothing) at position 0
        x["is_la"] = 1


def parse_order(x):
    """``J -> S K`` records the conjunction for the whole command (broadcast)."""
    if x["phase"] == PARSE and x["la"] == OPENS and x["s0"] == K:
        word = _word(x, "t0")
        if word in CONJUNCTIONS and x["order"] == 0:
            x["order"] = CONJUNCTIONS[word]


def parse_finish(x):
    """On ``<eos>`` the last reduce leaves ``[S]`` or ``[J, S]``: start decoding at the clause
    whose actions come first (``J`` at depth 1 for ``and``, the top ``S`` otherwise)."""
    if x["phase"] == PARSE and x["la_end"] == 1:
        x["phase"] = DECODE
        order = x["order"]
        if order:
            x["left"] = 1
            if order == CONJUNCTIONS["and"]:
                x["cq"] = 1


PARTS = (
    parse_rel,
    parse_sym,
    parse_attributes,
    parse_modifier,
    parse_shape,
    parse_lookahead,
    parse_order,
    parse_finish,
)
"""The parser's MLP functions (each writes its own variables)."""
