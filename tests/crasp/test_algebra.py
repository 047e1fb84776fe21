"""Minimal DFA, syntactic monoid, star-free and AC0: against brute force and the seed's Table 2."""

from __future__ import annotations

import functools
from itertools import product

import pytest

from rasplab.crasp.algebra import (
    compose,
    has_group_at_some_length,
    is_aperiodic,
    is_quasi_aperiodic,
    minimal_dfa,
    syntactic_monoid,
)
from rasplab.tasks.automata import Automaton
from rasplab.tasks.languages import LANGUAGES, PARITY_LANGUAGE

# Huang et al., Appendix E.1.2, Table 2: (star-free?, in AC0?) per language, PARITY included.
TABLE2 = {
    "tomita1": (True, True),
    "tomita2": (True, True),
    "tomita3": (False, True),
    "tomita4": (True, True),
    "tomita5": (False, False),
    "tomita6": (False, False),
    "tomita7": (True, True),
    "d2": (True, True),
    "d3": (True, True),
    "d4": (True, True),
    "d12": (True, True),
    "parity": (False, False),
    "aa_star": (False, True),
    "aaaa_star": (False, True),
    "abab_star": (False, True),
    "aa_bb_cc_dd_ee": (True, True),
    "ab_d_bc": (True, True),
    "zot_0_two": (True, True),
}
AUTOMATA = {**{n: a for n, (_, a) in LANGUAGES.items()}, "parity": PARITY_LANGUAGE[1]}


@functools.cache
def monoid_of(name):
    """The syntactic monoid of a language of the table (built once per test session)."""
    return syntactic_monoid(AUTOMATA[name])


def squaring(x, n):
    """x^n by repeated squaring (n >= 1): a second way to take powers."""
    out, base = None, x
    while n:
        if n & 1:
            out = base if out is None else compose(out, base)
        base, n = compose(base, base), n >> 1
    return out


def words(alphabet, max_len):
    """Every word over ``alphabet`` of length 0..max_len, shortest first."""
    for n in range(max_len + 1):
        yield from ("".join(w) for w in product(alphabet, repeat=n))


def test_table2_covers_every_language():
    assert set(TABLE2) == set(AUTOMATA)


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_star_free_and_ac0_match_table2(name):
    monoid = monoid_of(name)
    assert (is_aperiodic(monoid), is_quasi_aperiodic(monoid)) == TABLE2[name]


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_stable_semigroup_agrees_with_the_definition_length_by_length(name):
    monoid = monoid_of(name)
    assert is_quasi_aperiodic(monoid) == (not has_group_at_some_length(monoid))


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_aperiodic_agrees_with_x_to_the_size_of_the_monoid(name):
    monoid = monoid_of(name)
    n = len(monoid.elements)  # the index of any element is at most |M|
    brute = all(squaring(x, n) == squaring(x, n + 1) for x in monoid.elements)
    assert is_aperiodic(monoid) == brute


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_minimal_dfa_accepts_the_same_words_and_is_minimal(name):
    automaton = AUTOMATA[name]
    dfa = minimal_dfa(automaton)
    length = 8 if len(automaton.alphabet) <= 2 else 5
    for w in words(automaton.alphabet, length):
        q = 0
        for a in w:
            q = dfa.delta[q][dfa.alphabet.index(a)]
        assert (q in dfa.accepting) == automaton.accepts(w), w
    # Myhill-Nerode by brute force: the distinct residual languages of words reaching each
    # state of the given automaton (dead included), told apart by suffixes of length <= n - 2
    access = {0: ""}
    for w in words(automaton.alphabet, len(automaton.delta) + 1):
        access.setdefault(automaton.run(w)[-1], w)
    suffixes = list(words(automaton.alphabet, dfa.num_states - 2))
    residuals = {tuple(automaton.accepts(u + v) for v in suffixes) for u in access.values()}
    assert len(residuals) == dfa.num_states


SMALL = ["tomita1", "tomita2", "tomita4", "tomita5", "tomita6", "tomita7", "parity", "aa_star"]
SMALL += ["aaaa_star", "abab_star", "ab_d_bc", "zot_0_two", "tomita3"]


@pytest.mark.parametrize("name", SMALL)
def test_monoid_is_the_syntactic_congruence_by_brute_force(name):
    """Two words have the same transformation iff no context x_y tells them apart by
    membership (short contexts on each side), and every element is some word's image."""
    automaton = AUTOMATA[name]
    monoid = monoid_of(name)
    k = len(automaton.alphabet)
    context_len, word_len = {1: (6, 8), 2: (3, 6), 3: (2, 4)}.get(k, (2, 3))
    contexts = list(words(automaton.alphabet, context_len))
    ws = list(words(automaton.alphabet, word_len))
    congruence = {
        w: tuple(automaton.accepts(x + w + y) for x in contexts for y in contexts) for w in ws
    }
    images = {w: monoid.image(w) for w in ws}
    for u in ws:
        for v in ws:
            assert (images[u] == images[v]) == (congruence[u] == congruence[v]), (u, v)
    assert set(images.values()) == set(monoid.elements)


@pytest.mark.parametrize("name", sorted(TABLE2))
def test_length_images_by_enumerating_words_of_each_length(name):
    automaton = AUTOMATA[name]
    monoid = monoid_of(name)
    sets, start, period = monoid.length_images
    k = len(automaton.alphabet)
    for t in range(1, start + 2 * period):
        if k**t > 5_000:
            break
        direct = frozenset(monoid.image(w) for w in product(automaton.alphabet, repeat=t))
        expected = sets[t - 1] if t <= len(sets) else sets[(t - start) % period + start - 1]
        assert direct == expected, t
    s = monoid.stability_index  # the smallest s with eta(A^s) = eta(A^2s), by enumeration
    if k ** (2 * s) <= 5_000:
        direct = [
            frozenset(monoid.image(w) for w in product(automaton.alphabet, repeat=t))
            for t in range(1, 2 * s + 1)
        ]
        assert [u for u in range(1, s + 1) if direct[u - 1] == direct[2 * u - 1]][0] == s


def test_hand_made_monoids():
    """A cyclic group Z3 (star-free no, AC0 no); its length-tagged cousin (a letter of length
    3 is counted mod 3 only through positions) and a two-letter aperiodic language."""
    z3 = Automaton.build("a", {f"r{i}": {"a": f"r{(i + 1) % 3}"} for i in range(3)}, "r0", {"r0"})
    m = syntactic_monoid(z3)
    assert len(m.elements) == 3 and not is_aperiodic(m) and is_quasi_aperiodic(m)
    # mod-3 count of b's over {a, b}: a group on every length, hence not in AC0
    mod3 = Automaton.build(
        "ab", {f"r{i}": {"a": f"r{i}", "b": f"r{(i + 1) % 3}"} for i in range(3)}, "r0", {"r0"}
    )
    m = syntactic_monoid(mod3)
    assert not is_aperiodic(m) and not is_quasi_aperiodic(m) and has_group_at_some_length(m)
    # a*b: aperiodic (a^n = a^(n+1) for n >= 1)
    ab = Automaton.build("ab", {"s": {"a": "s", "b": "t"}}, "s", {"t"})
    m = syntactic_monoid(ab)
    assert is_aperiodic(m) and is_quasi_aperiodic(m)
    assert compose(m.image("a"), m.image("a")) == m.image("a")
