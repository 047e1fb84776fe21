"""Algebra of a regular language: minimal DFA, syntactic monoid, star-free and AC0 tests.

From an :class:`~rasplab.tasks.automata.Automaton` (a partial DFA):

1. :func:`minimal_dfa` completes it with a sink state, keeps the reachable states and merges
   equivalent ones (Moore's partition refinement): the minimal complete DFA.
2. :func:`syntactic_monoid` is the transition monoid of that DFA (each word acts on the states
   as a transformation; the monoid is every transformation a word induces, found breadth
   first from the identity). It is isomorphic to the syntactic monoid of the language.
3. :func:`is_aperiodic`: every element x has some n with x^n = x^(n+1). By Schützenberger's
   theorem a regular language is **star-free** iff its syntactic monoid is aperiodic.
4. :func:`is_quasi_aperiodic`: the syntactic morphism eta is quasi-aperiodic when no set
   eta(A^t) of images of the words of one length t contains a nontrivial group. By
   Barrington, Compton, Straubing and Thérien (1992, "Regular languages in NC^1") a regular
   language is in **AC0** iff its syntactic morphism is quasi-aperiodic. The sets eta(A^t) are
   eventually periodic in t; for s a multiple of their period past their preperiod,
   S = eta(A^s) = eta(A^2s) is a semigroup (the *stable semigroup*), and eta is quasi-aperiodic
   iff S is aperiodic. :func:`is_quasi_aperiodic` decides that way;
   :func:`has_group_at_some_length` checks the definition length by length (the tests compare
   the two).

>>> from rasplab.tasks.automata import Automaton
>>> aa = Automaton.build("a", {"e": {"a": "o"}, "o": {"a": "e"}}, "e", {"e"})   # (aa)*
>>> m = syntactic_monoid(aa)
>>> len(m.elements), is_aperiodic(m), is_quasi_aperiodic(m)
(2, False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rasplab.tasks.automata import DEAD, Automaton

Transformation = tuple[int, ...]
"""A map from states to states: ``f[q]`` is where state ``q`` goes."""


@dataclass(frozen=True)
class MinimalDFA:
    """A complete minimal DFA: state 0 is the start, ``delta[q][a]`` always a state."""

    alphabet: tuple[str, ...]
    delta: tuple[tuple[int, ...], ...]
    accepting: frozenset[int]

    @property
    def num_states(self) -> int:
        """Number of states (the sink included when the language needs one)."""
        return len(self.delta)


def _complete_reachable(automaton: Automaton) -> tuple[list[list[int]], set[int]]:
    """The reachable part of ``automaton`` with a sink for its missing transitions."""
    sink = automaton.num_states
    full = [[sink if t == DEAD else t for t in row] for row in automaton.delta]
    full.append([sink] * len(automaton.alphabet))
    seen, todo = {0}, [0]
    while todo:
        for t in full[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    order = sorted(seen)  # the start (0) stays first
    index = {q: i for i, q in enumerate(order)}
    delta = [[index[t] for t in full[q]] for q in order]
    return delta, {index[q] for q in automaton.accepting if q in index}


def minimal_dfa(automaton: Automaton) -> MinimalDFA:
    """The minimal complete DFA of ``automaton``'s language (Moore's refinement).

    >>> from rasplab.tasks.languages import language
    >>> minimal_dfa(language("tomita1")).num_states      # 1*: the state and the sink
    2
    """
    delta, accepting = _complete_reachable(automaton)
    block = [int(q in accepting) for q in range(len(delta))]
    while True:
        signature = [(block[q], *(block[t] for t in delta[q])) for q in range(len(delta))]
        numbering: dict[tuple, int] = {}
        refined = [numbering.setdefault(sig, len(numbering)) for sig in signature]
        if len(numbering) == len(set(block)):
            break
        block = refined
    # renumber so that the start's block is 0, others in first-seen order
    order = {b: i for i, b in enumerate(dict.fromkeys([block[0], *block]))}
    rep = {}
    for q in range(len(delta)):
        rep.setdefault(order[block[q]], q)
    new_delta = tuple(tuple(order[block[t]] for t in delta[rep[b]]) for b in range(len(rep)))
    new_accepting = frozenset(order[block[q]] for q in accepting)
    return MinimalDFA(tuple(automaton.alphabet), new_delta, new_accepting)


def compose(f: Transformation, g: Transformation) -> Transformation:
    """The action of word ``u`` then word ``v`` given ``f`` = action of u, ``g`` = of v.

    >>> compose((1, 0), (1, 1))
    (1, 1)
    """
    return tuple(g[q] for q in f)


def power(f: Transformation, n: int) -> Transformation:
    """``f`` composed with itself ``n`` times (``n >= 1``)."""
    out = f
    for _ in range(n - 1):
        out = compose(out, f)
    return out


def index_and_period(f: Transformation) -> tuple[int, int]:
    """The smallest ``(i, p)`` with ``f^i = f^(i+p)``, ``i, p >= 1`` (powers of ``f``).

    >>> index_and_period((1, 2, 0)), index_and_period((1, 1))
    ((1, 3), (1, 1))
    """
    seen: dict[Transformation, int] = {}
    x, k = f, 1
    while x not in seen:
        seen[x] = k
        x, k = compose(x, f), k + 1
    return seen[x], k - seen[x]


@dataclass(frozen=True, eq=False)
class SyntacticMonoid:
    """The transition monoid of a minimal DFA: ``generators[a]`` is the action of symbol a,
    ``elements`` every action of a word (the identity, the empty word's, first)."""

    dfa: MinimalDFA
    generators: tuple[Transformation, ...]
    elements: tuple[Transformation, ...]

    @cached_property
    def identity(self) -> Transformation:
        """The action of the empty word."""
        return tuple(range(self.dfa.num_states))

    def image(self, word: str) -> Transformation:
        """The action of ``word`` (a string of one-character symbols or a symbol sequence)."""
        out = self.identity
        for symbol in word:
            out = compose(out, self.generators[self.dfa.alphabet.index(symbol)])
        return out

    def multiply(self, left: frozenset, right: frozenset) -> frozenset:
        """The set product ``{x y : x in left, y in right}``."""
        return frozenset(compose(x, y) for x in left for y in right)

    @cached_property
    def length_images(self) -> tuple[list[frozenset], int, int]:
        """``(sets, start, period)``: ``sets[t-1]`` = eta(A^t) for t = 1..start+period-1,
        and eta(A^t) = eta(A^(t+period)) for every t >= start (the sequence's cycle)."""
        letters = frozenset(self.generators)
        sets, first = [letters], {letters: 1}
        while True:
            nxt = self.multiply(sets[-1], letters)
            if nxt in first:
                start = first[nxt]
                return sets, start, len(sets) + 1 - start
            first[nxt] = len(sets) + 1
            sets.append(nxt)

    @cached_property
    def stability_index(self) -> int:
        """The smallest s >= 1 with eta(A^s) = eta(A^2s): the smallest multiple of the
        period of the sets eta(A^t) that is at least their preperiod."""
        _, start, period = self.length_images
        return period * -(-start // period)

    @cached_property
    def stable_semigroup(self) -> frozenset:
        """S = eta(A^s) for s the :attr:`stability_index`."""
        sets, start, period = self.length_images
        stable = sets[(self.stability_index - start) % period + start - 1]
        if self.multiply(stable, stable) != stable:  # eta(A^s) eta(A^s) = eta(A^2s) = S
            raise AssertionError("stable semigroup is not closed under multiplication")
        return stable


def syntactic_monoid(automaton: Automaton) -> SyntacticMonoid:
    """The transition monoid of the minimal DFA of ``automaton``'s language."""
    dfa = minimal_dfa(automaton)
    n, k = dfa.num_states, len(dfa.alphabet)
    generators = tuple(tuple(dfa.delta[q][a] for q in range(n)) for a in range(k))
    identity = tuple(range(n))
    elements, seen = [identity], {identity}
    for x in elements:  # breadth first; the list grows while it is walked
        for g in generators:
            y = compose(x, g)
            if y not in seen:
                seen.add(y)
                elements.append(y)
    return SyntacticMonoid(dfa, generators, tuple(elements))


def is_group_free(elements) -> bool:
    """Whether every element x of a finite semigroup has x^n = x^(n+1) for some n (period 1).

    A finite semigroup has a nontrivial subgroup iff some element has period > 1."""
    return all(index_and_period(x)[1] == 1 for x in elements)


def is_aperiodic(monoid: SyntacticMonoid) -> bool:
    """Whether the syntactic monoid is aperiodic: the language is star-free (Schützenberger)."""
    return is_group_free(monoid.elements)


def is_quasi_aperiodic(monoid: SyntacticMonoid) -> bool:
    """Whether the syntactic morphism is quasi-aperiodic (its stable semigroup is
    aperiodic): the language is in AC0 (Barrington, Compton, Straubing, Thérien 1992)."""
    return is_group_free(monoid.stable_semigroup)


def has_group_at_some_length(monoid: SyntacticMonoid) -> bool:
    """The definition read literally: is there a length t >= 1 and a nontrivial group inside
    eta(A^t)? (A nontrivial group in a set contains the cyclic group of a non-identity
    element, so it suffices to look for an element x of period p > 1 lying in its own cyclic
    group, x = x^(p+1), whose powers x, x^2, ..., x^p all lie in the same set.) Every distinct
    set eta(A^t) occurs for some t < start + period, so those lengths cover all t."""
    sets, _, _ = monoid.length_images
    for images in sets:
        for x in images:
            _, p = index_and_period(x)
            if (
                p > 1
                and power(x, p + 1) == x
                and all(power(x, k) in images for k in range(2, p + 1))
            ):
                return True
    return False


__all__ = [
    "MinimalDFA",
    "SyntacticMonoid",
    "compose",
    "has_group_at_some_length",
    "index_and_period",
    "is_aperiodic",
    "is_group_free",
    "is_quasi_aperiodic",
    "minimal_dfa",
    "power",
    "syntactic_monoid",
]
