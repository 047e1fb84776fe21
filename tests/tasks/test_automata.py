"""The automaton behind every regular language: malformed tables, strings outside the alphabet,
empty languages and ranks out of range are refused; uniform draws below a huge bound stay
below it and use all its bits."""

from __future__ import annotations

import numpy as np
import pytest

from rasplab.tasks.automata import DEAD, Automaton, uniform_below

AB = Automaton.build("ab", {"s": {"a": "t"}, "t": {"b": "s"}}, start="s", accepting={"s"})


@pytest.mark.parametrize(
    ("delta", "accepting", "message"),
    [
        (((0,),), frozenset({0}), "malformed transition row (0,) for alphabet ('a', 'b')"),
        (((0, 5),), frozenset({0}), "malformed transition row (0, 5) for alphabet ('a', 'b')"),
        (((0, 0),), frozenset({1}), "accepting states [1] outside 0..0"),
    ],
)
def test_a_malformed_automaton_is_refused(delta, accepting, message):
    with pytest.raises(ValueError) as caught:
        Automaton(("a", "b"), delta, accepting)
    assert str(caught.value) == message


def test_strings_and_ranks_outside_the_language_are_refused():
    with pytest.raises(ValueError, match="symbol 'c' is not in the alphabet"):
        AB.run("abc")
    with pytest.raises(ValueError, match="index 1 outside 0..0 for length 2"):
        AB.unrank(2, 1)
    with pytest.raises(ValueError, match=r"no strings of some requested lengths \[1, 2\]"):
        AB.sample_batch(np.random.default_rng(0), [1, 2])
    assert AB.next_set(DEAD) == ()


def test_an_empty_language_has_no_reachable_live_state():
    never = Automaton(("a",), ((0,),), frozenset())
    assert never.reachable == () and never.classes == () and never.count(3) == 0


def test_uniform_draws_below_a_huge_bound():
    rng = np.random.default_rng(0)
    m = 3 * 2**70 + 1  # beyond numpy's integers: drawn from random bits with rejection
    draws = [uniform_below(rng, m) for _ in range(400)]
    assert all(0 <= x < m for x in draws)
    # about 2/3 of [0, m) lies at or above 2**70, so the top bits are used; 4 sigma bounds
    high = sum(x >= 2**70 for x in draws) / len(draws)
    assert abs(high - 2 / 3) < 4 * (2 / 9 / len(draws)) ** 0.5
    with pytest.raises(ValueError, match="no integers below 0"):
        uniform_below(rng, 0)
