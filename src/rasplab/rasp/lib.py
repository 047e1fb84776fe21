"""Tracr's library of RASP programs, under Tracr's names, each with a doctest.

Programs that read the whole sequence (``make_length``, ``make_reverse``, the sorts and
histograms, ``make_shuffle_dyck``) need a non-causal model; ``make_frac_prevs``,
``make_pair_balance``, ``shift_by`` and ``detect_pattern`` look only backwards and also
compile with ``causal=True``.

>>> make_length()("abcd")
[4, 4, 4, 4]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rasplab.rasp import rasp


def make_length() -> rasp.SOp:
    """The sequence length at every position: the width of a select-everything selector.

    >>> make_length()([5, 6, 7])
    [3, 3, 3]
    """
    everything = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)
    return rasp.SelectorWidth(everything.named("all_true_selector")).named("length")


length = make_length()


def make_reverse(sop: rasp.SOp) -> rasp.SOp:
    """``sop`` read back to front: position i reads position ``length - i - 1``.

    >>> make_reverse(rasp.tokens)("abc")
    ['c', 'b', 'a']
    """
    opposite = (length - rasp.indices).named("opp_idx")
    opposite = (opposite - 1).named("opp_idx-1")
    mirror = rasp.Select(rasp.indices, opposite, rasp.Comparison.EQ).named("reverse_selector")
    return rasp.Aggregate(mirror, sop).named("reverse")


def make_frac_prevs(bools: rasp.SOp) -> rasp.SOp:
    """At position i, the fraction of positions ``0..i`` where ``bools`` holds.

    >>> make_frac_prevs(rasp.tokens == "l")("hello")
    [0.0, 0.0, 0.3333333333333333, 0.5, 0.4]
    """
    bools = rasp.numerical(bools)
    up_to_here = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return rasp.numerical(rasp.Aggregate(up_to_here, bools, default=0)).named("frac_prevs")


def make_pair_balance(sop: rasp.SOp, open_token: Any, close_token: Any) -> rasp.SOp:
    """Fraction of ``open_token`` minus fraction of ``close_token`` among positions ``0..i``.

    >>> make_pair_balance(rasp.tokens, "(", ")")("(()")
    [1.0, 1.0, 0.3333333333333333]
    """
    opens = rasp.numerical(sop == open_token).named("bools_open")
    opens = rasp.numerical(make_frac_prevs(opens)).named("opens")
    closes = rasp.numerical(sop == close_token).named("bools_close")
    closes = rasp.numerical(make_frac_prevs(closes)).named("closes")
    balance = rasp.numerical(rasp.LinearSequenceMap(opens, closes, 1, -1))
    return balance.named("pair_balance")


def make_shuffle_dyck(pairs: Sequence[str]) -> rasp.SOp:
    """1 everywhere if every bracket pair (e.g. ``"()"``) is balanced on its own, else 0.

    Balanced means no prefix closes more than it opened, and the whole sequence closes all.

    >>> make_shuffle_dyck(["()", "{}"])("({)}")
    [True, True, True, True]
    >>> make_shuffle_dyck(["()", "{}"])("(){)}")
    [False, False, False, False, False]
    """
    if not pairs or any(len(p) != 2 for p in pairs):
        raise rasp.RaspError(f"make_shuffle_dyck needs bracket pairs like '()', got {pairs!r}")
    balances = [make_pair_balance(rasp.tokens, p[0], p[1]).named(f"balance_{p}") for p in pairs]
    negative = balances[0] < 0
    for b in balances[1:]:
        negative = negative | (b < 0)
    negative = rasp.numerical(rasp.Map(lambda x: x, negative)).named("any_negative")
    everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE).named("select_all")
    has_negative = rasp.numerical(rasp.Aggregate(everything, negative, default=0))
    has_negative = has_negative.named("has_neg")
    zero = balances[0] == 0
    for b in balances[1:]:
        zero = zero & (b == 0)
    last = rasp.Select(rasp.indices, length - 1, rasp.Comparison.EQ).named("select_last")
    last_zero = rasp.Aggregate(last, zero).named("last_zero")
    never_negative = (~has_negative).named("not_has_neg")
    return (last_zero & never_negative).named("shuffle_dyck")


def make_shuffle_dyck2() -> rasp.SOp:
    """:func:`make_shuffle_dyck` for the pairs ``()`` and ``{}``.

    >>> make_shuffle_dyck2()("{()}")
    [True, True, True, True]
    """
    return make_shuffle_dyck(["()", "{}"]).named("shuffle_dyck2")


def make_hist() -> rasp.SOp:
    """How often each position's token occurs in the whole sequence.

    >>> make_hist()("abac")
    [2, 1, 2, 1]
    """
    same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ).named("same_tok")
    return rasp.SelectorWidth(same).named("hist")


def make_sort_unique(vals: rasp.SOp, keys: rasp.SOp) -> rasp.SOp:
    """``vals`` ordered by ``keys`` ascending; the keys must all differ.

    A position's target is the number of smaller keys; position i reads the value whose
    target is i.

    >>> make_sort_unique(rasp.tokens, rasp.tokens)([2, 4, 3, 1])
    [1, 2, 3, 4]
    """
    smaller = rasp.Select(keys, keys, rasp.Comparison.LT).named("smaller")
    target = rasp.SelectorWidth(smaller).named("target_pos")
    placed = rasp.Select(target, rasp.indices, rasp.Comparison.EQ)
    return rasp.Aggregate(placed, vals).named("sort")


def make_sort(vals: rasp.SOp, keys: rasp.SOp, *, max_seq_len: int, min_key: float) -> rasp.SOp:
    """``vals`` ordered by numerical ``keys``, ties kept in input order.

    Each key gets ``min_key * i / max_seq_len`` added at position i, which breaks ties
    without reordering distinct keys when keys differ by at least ``min_key``.

    >>> make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1)([2, 4, 1, 2])
    [1, 2, 2, 4]
    """
    keys = rasp.SequenceMap(lambda x, i: x + min_key * i / max_seq_len, keys, rasp.indices)
    return make_sort_unique(vals, keys)


def make_sort_freq(max_seq_len: int) -> rasp.SOp:
    """Tokens ordered by how often they occur, most frequent first, ties in input order.

    >>> make_sort_freq(5)([2, 4, 2, 1])
    [2, 2, 4, 1]
    """
    hist = -1 * make_hist().named("hist")
    return make_sort(rasp.tokens, hist, max_seq_len=max_seq_len, min_key=1).named("sort_freq")


def shift_by(offset: int, /, sop: rasp.SOp) -> rasp.SOp:
    """``sop`` moved ``offset`` positions right; the first ``offset`` positions are None.

    >>> shift_by(2, rasp.tokens)("abcd")
    [None, None, 'a', 'b']
    """
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + offset)
    return rasp.Aggregate(back, sop, default=None).named(f"shift_by({offset})")


def detect_pattern(sop: rasp.SOp, pattern: Sequence[Any]) -> rasp.SOp:
    """True where ``pattern`` ends at this position, False elsewhere, None where it cannot
    have started yet (the first ``len(pattern) - 1`` positions).

    >>> detect_pattern(rasp.tokens, "abc")("abcabc")
    [None, None, True, False, False, True]
    """
    if len(pattern) < 1:
        raise rasp.RaspError(f"detect_pattern needs a pattern of length >= 1, got {pattern!r}")
    found = []
    for back, element in enumerate(reversed(pattern)):
        here = sop == element
        found.append(here if back == 0 else shift_by(back, here))
    detected = found.pop()
    while found:
        detected = detected & found.pop()
    return detected.named(f"detect_pattern({pattern})")


def make_count_less_freq(n: int) -> rasp.SOp:
    """How many positions hold a token occurring at most ``n`` times (Tracr's ``<=``).

    >>> make_count_less_freq(2)(["a", "a", "a", "b", "b", "c"])
    [3, 3, 3, 3, 3, 3]
    """
    hist = make_hist().named("hist")
    rare = rasp.Select(hist, hist, lambda k, q: k <= n).named("select_less")
    return rasp.SelectorWidth(rare).named("count_less_freq")


def make_count(sop: rasp.SOp, token: Any) -> rasp.SOp:
    """How many positions of ``sop`` hold ``token``, at every position.

    >>> make_count(rasp.tokens, "a")(["c", "a", "b", "a"])
    [2, 2, 2, 2]
    """
    hits = rasp.Select(sop, sop, lambda k, q: k == token)
    return rasp.SelectorWidth(hits).named(f"count_{token}")


def make_nary_sequencemap(f: Callable[..., Any], *sops: rasp.SOp) -> rasp.SOp:
    """``f`` of n SOps at every position, built from binary SequenceMaps over tuples.

    >>> make_nary_sequencemap(lambda a, b, c: a + b * c, rasp.tokens, rasp.indices,
    ...                       rasp.indices)([10, 20, 30])
    [10, 21, 34]
    """
    if not sops:
        raise rasp.RaspError("make_nary_sequencemap needs at least one SOp")
    joined, *rest = sops
    for sop in rest:
        joined = rasp.SequenceMap(
            lambda acc, y: (*acc, y) if isinstance(acc, tuple) else (acc, y), joined, sop
        )
    return rasp.Map(lambda args: f(*args), joined)


PROGRAMS: dict[str, Callable[..., rasp.SOp]] = {
    "make_length": make_length,
    "make_reverse": make_reverse,
    "make_pair_balance": make_pair_balance,
    "make_shuffle_dyck": make_shuffle_dyck,
    "make_shuffle_dyck2": make_shuffle_dyck2,
    "make_hist": make_hist,
    "make_sort_unique": make_sort_unique,
    "make_sort": make_sort,
    "make_sort_freq": make_sort_freq,
    "make_frac_prevs": make_frac_prevs,
    "shift_by": shift_by,
    "detect_pattern": detect_pattern,
    "make_count_less_freq": make_count_less_freq,
    "make_count": make_count,
    "make_nary_sequencemap": make_nary_sequencemap,
}
"""Every program of Tracr's ``compiler/lib.py``, by name."""
