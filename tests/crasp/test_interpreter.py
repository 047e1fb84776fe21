"""The batched interpreter against the naive reference of Definition 8, on random programs."""

import numpy as np
import pytest

from rasplab.crasp import Q, count, crasp_program, offset, periodic, reference_run, run
from rasplab.crasp.random_programs import random_program, random_strings
from rasplab.errors import RasplabError


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_match_the_reference_everywhere(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        p = random_program(
            rng, size=int(rng.integers(2, 16)), periodic=bool(rng.integers(2)), local=True
        )
        strings = random_strings(rng, p.alphabet, 12, 14)
        r = run(p, strings)
        for b, s in enumerate(strings):
            ref = reference_run(p, s)
            for op in p.ops:
                got = r.values[op.name][b, : len(s) + 1].tolist()
                assert got == ref[op.name], (p.listing(), s, op.name)


def test_every_kind_occurs_in_the_random_programs():
    rng = np.random.default_rng(0)
    kinds = {op.kind for _ in range(200) for op in random_program(rng, size=12).ops}
    rel = any(op.relation is not None for _ in range(50) for op in random_program(rng, size=12).ops)
    assert len(kinds) == 13 and rel


def test_counts_are_exact_integers_on_long_inputs():
    p = crasp_program("t", (count(Q("a"), name="c") - count(Q("b"), name="d")) > 0, alphabet="ab")
    s = ["a"] * 70_000 + ["b"] * 69_999
    r = run(p, [s])
    assert r.values["c"].dtype == np.int64 and r.values["c"][0, -1] == 70_000
    assert r.accept.tolist() == [True]


def test_keep_frees_values_but_keeps_output_and_readout():
    p = crasp_program("t", count(periodic(2, 0) & Q("a"), offset(1)) >= 1, alphabet="ab")
    r = run(p, ["a b a"], keep=())
    assert set(r.values) == {p.output}
    assert r.prefix_accept(0) == reference_run(p, ["a", "b", "a"])[p.output]


def test_inputs_are_checked_against_the_alphabet():
    p = crasp_program("t", count(Q("a")) > 0, alphabet="ab")
    with pytest.raises(RasplabError, match=r"input 2: symbol 'c' is not in the alphabet"):
        run(p, ["a", "a c"])
    with pytest.raises(RasplabError, match="<bos> is added by the interpreter"):
        run(p, ["<bos> a"])


def test_the_empty_string_has_one_position():
    p = crasp_program("t", count(Q("a")) == 0, alphabet="ab")
    r = run(p, ["", "b"])
    assert r.accept.tolist() == [True, True] and r.prefix_accept(0) == [True]


def test_counts_range_over_the_symbols_only_never_the_start_position():
    # Definition 8: a program runs over the string, so NOT a counts nothing on "a"
    not_a = count(~Q("a"), name="c")
    p = crasp_program("t", (not_a >= 1).named("out"), alphabet="ab")
    strings = [["a"], [], ["a", "a"], ["a", "b"]]
    assert run(p, strings).accept.tolist() == [False, False, False, True]
    assert [reference_run(p, s)["out"][-1] for s in strings] == [False, False, False, True]
    # a local count at the first symbol looks at j = 0, which is no symbol
    prev_not_a = count(~Q("a"), offset(1), name="prev")
    q = crasp_program("u", (prev_not_a >= 1).named("out"), alphabet="ab")
    assert run(q, ["a a", "b a"]).values["prev"].tolist() == [[0, 0, 0], [0, 0, 1]]


def test_periodic_positions_are_numbered_from_one_at_the_first_symbol():
    p = crasp_program("t", periodic(2, 0, name="even"), alphabet="a")
    r = run(p, ["a a a"])
    assert r.prefix_accept(0) == [True, False, True, False]  # positions 0 (start), 1, 2, 3


def test_the_start_symbol_is_not_an_initial_operation():
    with pytest.raises(RasplabError, match="reads <bos>, which is not a symbol of the string"):
        crasp_program("t", Q("<bos>") | Q("a"), alphabet="ab")
