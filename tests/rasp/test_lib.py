"""Every lib program against an independent reference function, on every short input."""

import itertools
from collections import Counter

import pytest

from rasplab.rasp import lib, rasp


def ref_frac(bools):
    return [sum(bools[: i + 1]) / (i + 1) for i in range(len(bools))]


def ref_dyck(xs, pairs):
    ok = True
    for o, c in pairs:
        bal = 0
        for x in xs:
            bal += (x == o) - (x == c)
            ok = ok and bal >= 0
        ok = ok and bal == 0
    return [ok] * len(xs)


def ref_sort_freq(xs):
    counts = Counter(xs)
    order = sorted(range(len(xs)), key=lambda i: (-counts[xs[i]], i))
    return [xs[i] for i in order]


def ref_pattern(xs, pat):
    k = len(pat)
    return [None if i < k - 1 else list(xs[i - k + 1 : i + 1]) == list(pat) for i in range(len(xs))]


CASES = {
    "make_length": (lambda: lib.make_length(), "abc", lambda xs: [len(xs)] * len(xs)),
    "make_reverse": (lambda: lib.make_reverse(rasp.tokens), "abc", lambda xs: list(xs)[::-1]),
    "make_hist": (lambda: lib.make_hist(), "abc", lambda xs: [list(xs).count(x) for x in xs]),
    "make_frac_prevs": (
        lambda: lib.make_frac_prevs(rasp.tokens == "a"), "ab",
        lambda xs: ref_frac([x == "a" for x in xs]),
    ),
    "make_pair_balance": (
        lambda: lib.make_pair_balance(rasp.tokens, "(", ")"), "()x",
        lambda xs: [a - b for a, b in zip(ref_frac([x == "(" for x in xs]),
                                          ref_frac([x == ")" for x in xs]))],
    ),
    "make_shuffle_dyck": (
        lambda: lib.make_shuffle_dyck(["()"]), "()", lambda xs: ref_dyck(xs, ["()"])
    ),
    "make_shuffle_dyck2": (
        lambda: lib.make_shuffle_dyck2(), "(){}", lambda xs: ref_dyck(xs, ["()", "{}"])
    ),
    "make_sort_unique": (
        lambda: lib.make_sort_unique(rasp.tokens, rasp.tokens), None, None
    ),
    "make_sort": (
        lambda: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1), (1, 2, 3),
        sorted,
    ),
    "make_sort_freq": (lambda: lib.make_sort_freq(5), (1, 2, 3), ref_sort_freq),
    "shift_by": (lambda: lib.shift_by(1, rasp.tokens), "ab", lambda xs: [None, *xs[:-1]]),
    "detect_pattern": (
        lambda: lib.detect_pattern(rasp.tokens, "ab"), "ab", lambda xs: ref_pattern(xs, "ab")
    ),
    "make_count_less_freq": (
        lambda: lib.make_count_less_freq(1), "ab",
        lambda xs: [sum(list(xs).count(y) <= 1 for y in xs)] * len(xs),
    ),
    "make_count": (
        lambda: lib.make_count(rasp.tokens, "a"), "ab", lambda xs: [list(xs).count("a")] * len(xs)
    ),
    "make_nary_sequencemap": (
        lambda: lib.make_nary_sequencemap(lambda a, b, c: f"{a}{b}{c}", rasp.tokens,
                                          rasp.indices, rasp.tokens), "ab",
        lambda xs: [f"{x}{i}{x}" for i, x in enumerate(xs)],
    ),
}  # fmt: skip


def test_every_tracr_lib_program_is_here():
    assert sorted(CASES) == sorted(lib.PROGRAMS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lib_program_matches_reference(name):
    build, vocab, ref = CASES[name]
    prog = build()
    if name == "make_sort_unique":  # unique keys only: every permutation of distinct tokens
        for n in range(1, 5):
            for xs in itertools.permutations(range(5), n):
                assert prog(list(xs)) == sorted(xs)
        return
    for n in range(1, 6):
        for xs in itertools.product(vocab, repeat=n):
            assert prog(list(xs)) == ref(list(xs)), xs
