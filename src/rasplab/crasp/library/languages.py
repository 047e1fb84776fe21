"""C-RASP programs for the regular languages of Table 2 whose answer is "yes" (seed Appendix
E.1.2), each in the smallest class the seed names, plus the languages of Theorem 10.

Every language program accepts exactly the language (acceptance: the output ``accept`` at the
last position; at position i it is membership of the prefix read so far) and has a next-set
readout: ``next_<symbol>`` holds at i iff the symbol is a legal next symbol after the prefix
(some continuation through it ends in the language), ``<eos>`` iff the prefix is in the
language. That is the target of the next-symbol prediction task, so the programs are checked
position by position against the task's own labels. Each readout is built from ``live`` (the
prefix can still be extended into the language) and the counts the membership test uses.

>>> from rasplab.crasp.interpreter import run
>>> r = run(tomita2(), ["1 0 1 0", "1 0 1"])
>>> r.accept.tolist(), r.readout(1)
([True, False], [('1', '<eos>'), ('0',), ('1', '<eos>'), ('0',)])
"""

from __future__ import annotations

from collections.abc import Mapping

from rasplab.crasp.build import (
    Bool,
    Q,
    all_of,
    any_of,
    constant,
    count,
    crasp_program,
    exists,
    next_set,
    offset,
    periodic,
)
from rasplab.crasp.ir import CraspProgram

EOS = "<eos>"


def _language(
    name: str, alphabet: str, accept: Bool, nexts: Mapping[str, Bool], description: str
) -> CraspProgram:
    """A language program: ``accept`` last (named ``accept`` unless it has a name), readout
    ``next_<symbol>`` (likewise) and ``<eos>`` = accept."""
    table = {s: p if p.name else p.named(f"next_{s}") for s, p in nexts.items()}
    table[EOS] = accept if accept.name else accept.named("accept")
    return crasp_program(name, accept, alphabet, readout=next_set(table), description=description)


def _never_count(p: Bool, name: str) -> Bool:
    """``#[j <= i] p(j) == 0``: p has not held at any position so far (named ``name``)."""
    return (count(p, name=f"n_{name}") == 0).named(name)


def tomita1() -> CraspProgram:
    """Tomita 1 = 1*, C-RASP[]: flag a violation when a symbol other than 1 has occurred.

    ``live(i) := #[j <= i] Q_0(j) = 0``; accept = live; after a live prefix, 1 and <eos> are
    legal, 0 never (it can never be undone).

    >>> from rasplab.crasp.interpreter import run
    >>> run(tomita1(), ["1 1 1", "1 0 1", ""]).accept.tolist()
    [True, False, True]
    """
    live = _never_count(Q("0"), "live")
    return _language("tomita1", "01", live, {"0": constant(False), "1": live}, "1* (Tomita 1)")


def tomita2() -> CraspProgram:
    """Tomita 2 = (10)*, C-RASP[]: at each position either the symbol is 0 and the counts
    of ones and zeros are balanced, or it is 1 and there is one more 1 than 0s (seed E.1.2).

    >>> from rasplab.crasp.interpreter import run
    >>> run(tomita2(), ["1 0 1 0", "1 1 0 0", "0 1"]).accept.tolist()
    [True, False, False]
    """
    ones, zeros = count(Q("1"), name="ones"), count(Q("0"), name="zeros")
    balanced = (ones == zeros).named("balanced")
    bad = ((Q("0") & ~balanced) | (Q("1") & (ones != zeros + 1))).named("bad")
    live = _never_count(bad, "live")
    return _language(
        "tomita2",
        "01",
        live & balanced,
        {"0": live & ~balanced, "1": live & balanced},
        "(10)* (Tomita 2)",
    )


def tomita4() -> CraspProgram:
    """Tomita 4 = no substring 000, C-RASP[local]: a violation is a position holding 0 whose
    preceding position holds 0 and the one before that too (local relations j = i-1, i-2).

    >>> from rasplab.crasp.interpreter import run
    >>> run(tomita4(), ["0 0 1 0 0", "1 0 0 0 1"]).accept.tolist()
    [True, False]
    """
    prev0 = (count(Q("0"), offset(1), name="c_prev0") >= 1).named("prev0")
    prev2 = (count(Q("0"), offset(2), name="c_prev2") >= 1).named("prev2_0")
    triple = all_of(Q("0"), prev0, prev2, name="triple")
    live = _never_count(triple, "live")
    pair = (Q("0") & prev0).named("pair")
    return _language(
        "tomita4",
        "01",
        live,
        {"0": live & ~pair, "1": live},
        "no substring 000 (Tomita 4)",
    )


def tomita7() -> CraspProgram:
    """Tomita 7 = 0*1*0*1*, C-RASP[]: it is the strings without subsequence 1010, a piecewise
    testable language (Appendix C.1.5): chain "a 1", "a 0 after a 1", "a 1 after that", "a 0
    after that" with existential counts (a symbol differs from its predecessor in the chain,
    so counting up to and including i is the same as strictly before i).

    >>> from rasplab.crasp.interpreter import run
    >>> run(tomita7(), ["0 1 1 0 1", "1 0 1 0", "0 0 1 0 1 1"]).accept.tolist()
    [True, False, True]
    """
    s1 = exists(Q("1"), name="seen_1")
    s10 = exists(Q("0") & s1, name="seen_10")
    s101 = exists(Q("1") & s10, name="seen_101")
    s1010 = exists(Q("0") & s101, name="seen_1010")
    live = (~s1010).named("live")
    return _language(
        "tomita7",
        "01",
        live,
        {"0": live & ~s101, "1": live},
        "0*1*0*1* (Tomita 7), as 'no subsequence 1010'",
    )


def tomita7_bigrams() -> CraspProgram:
    """Tomita 7 by bigram counts, C-RASP[local] (the seed's second construction): a string is
    in 0*1*0*1* iff the bigram 10 occurs at most once (two 10s spell the subsequence 1010).

    >>> from rasplab.crasp.interpreter import run
    >>> run(tomita7_bigrams(), ["0 1 1 0 1", "1 0 1 0"]).accept.tolist()
    [True, False]
    """
    prev1 = (count(Q("1"), offset(1), name="c_prev1") >= 1).named("prev1")
    tens = count(Q("0") & prev1, name="tens")
    live = (tens <= 1).named("live")
    return _language(
        "tomita7_bigrams",
        "01",
        live,
        {"0": live & ~(Q("1") & (tens == 1)), "1": live},
        "0*1*0*1* (Tomita 7) by counting the bigram 10",
    )


def dyck(depth: int) -> CraspProgram:
    """D_depth (Dyck-1 over a = open, b = close, nesting depth <= depth), C-RASP[] ("similar
    to Tomita 2"): the depth after i symbols is #a - #b; a violation is a prefix whose depth
    leaves 0..depth; accept = no violation and depth 0.

    >>> from rasplab.crasp.interpreter import run
    >>> run(dyck(2), ["a a b b", "a a a b b b", "a b b a"]).accept.tolist()
    [True, False, False]
    """
    d = (count(Q("a"), name="opens") - count(Q("b"), name="closes")).named("depth")
    live = _never_count((d < 0) | (d > depth), "live")
    return _language(
        f"d{depth}",
        "ab",
        live & (d == 0),
        {"a": live & (d < depth), "b": live & (d > 0)},
        f"D_{depth}: Dyck-1 of depth <= {depth}",
    )


def aa_bb_cc_dd_ee() -> CraspProgram:
    """aa*bb*cc*dd*ee*, C-RASP[]: every letter is present, and every letter is preceded only
    by itself or earlier letters (seed E.1.2).

    >>> from rasplab.crasp.interpreter import run
    >>> run(aa_bb_cc_dd_ee(), ["a b c d e", "a a b c c d e e", "a b c e d", "a b c d"]).accept.tolist()
    [True, True, False, False]
    """
    letters = "abcde"
    has = {x: exists(Q(x), name=f"has_{x}") for x in letters}
    later = {
        x: exists(any_of(*(Q(y) for y in letters[k + 1 :])), name=f"after_{x}")
        for k, x in enumerate(letters[:-1])
    }
    # a letter after which a later letter already occurred is out of order
    disorder = any_of(*(Q(x) & later[x] for x in letters[:-1]), name="disorder")
    ordered = _never_count(disorder, "ordered")
    gap = any_of(*(has[y] & ~has[x] for x, y in zip(letters, letters[1:])), name="gap")
    live = (ordered & ~gap).named("live")
    # the next letter may repeat the last one or move on by one, and a needs no b yet
    nexts = {"a": live & ~has["b"], "e": live & has["d"]}
    for x, y, z in zip(letters, letters[1:], letters[2:]):
        nexts[y] = live & has[x] & ~has[z]
    return _language(
        "aa_bb_cc_dd_ee",
        letters,
        all_of(ordered, *has.values()),
        nexts,
        "aa*bb*cc*dd*ee*",
    )


def ab_d_bc() -> CraspProgram:
    """{a,b}* d {b,c}*, C-RASP[]: there is a single d; a only before it, c only after it.

    >>> from rasplab.crasp.interpreter import run
    >>> run(ab_d_bc(), ["a b d b c", "d", "a d a", "b c d", "a d d"]).accept.tolist()
    [True, True, False, False, False]
    """
    ds = count(Q("d"), name="ds")
    bad = any_of(Q("a") & (ds >= 1), Q("c") & (ds == 0), ds >= 2, name="bad")
    live = _never_count(bad, "live")
    no_d = (ds == 0).named("no_d")
    return _language(
        "ab_d_bc",
        "abcd",
        live & (ds == 1),
        {"a": live & no_d, "b": live, "c": live & ~no_d, "d": live & no_d},
        "{a,b}* d {b,c}*",
    )


def a_power_star(k: int) -> CraspProgram:
    """(a^k)* over {a}, C-RASP[periodic] (Appendix C.2.3 for k = 2): the length read so far is
    the position i, so accept iff i mod k = 0.

    >>> from rasplab.crasp.interpreter import run
    >>> run(a_power_star(2), ["a a", "a a a", ""]).accept.tolist()
    [True, False, True]
    """
    name = {2: "aa_star", 4: "aaaa_star"}.get(k, f"a{k}_star")
    accept = periodic(k, 0, name="length_ok")
    return _language(name, "a", accept, {"a": constant(True)}, f"({'a' * k})*")


def abab_star() -> CraspProgram:
    """(abab)*, C-RASP[periodic] ("analogous to (aa)*"): a at odd positions, b at even ones,
    and the length a multiple of 4.

    >>> from rasplab.crasp.interpreter import run
    >>> run(abab_star(), ["a b a b", "a b", "a b b a"]).accept.tolist()
    [True, False, False]
    """
    odd = periodic(2, 1, name="odd")
    bad = ((Q("a") & ~odd) | (Q("b") & odd)).named("bad")
    live = _never_count(bad, "live")
    return _language(
        "abab_star",
        "ab",
        live & periodic(4, 0, name="length_ok"),
        {"a": live & ~odd, "b": live & odd},
        "(abab)*",
    )


def majority_ab() -> CraspProgram:
    """MAJORITY over {a, b} (Theorem 10.1, Appendix C.1.1): at least as many a's as b's.

    >>> from rasplab.crasp.interpreter import run
    >>> run(majority_ab(), ["a b b", "b a a", "a b"]).accept.tolist()
    [False, True, True]
    """
    c_a, c_b = count(Q("a"), name="C_a"), count(Q("b"), name="C_b")
    return crasp_program(
        "majority_ab", (c_b <= c_a).named("M"), "ab", description="at least as many a as b"
    )


def dyck1() -> CraspProgram:
    """DYCK-1 over ( and ) (Theorem 10.2, Appendix C.1.2): no prefix closes more than it
    opened, and the whole string is balanced.

    >>> from rasplab.crasp.interpreter import run
    >>> run(dyck1(), ["( ( ) )", "( ) ) (", "( ( )"]).accept.tolist()
    [True, False, False]
    """
    opens, closes = count(Q("("), name="opens"), count(Q(")"), name="closes")
    valid = _never_count(closes > opens, "valid")
    return crasp_program(
        "dyck1", (valid & (opens == closes)).named("D"), "()", description="balanced brackets"
    )


def anbn() -> CraspProgram:
    """a^n b^n (Theorem 10.3, Appendix C.1.3): equal counts and no a after a b.

    >>> from rasplab.crasp.interpreter import run
    >>> run(anbn(), ["a a b b", "a b a b", "a a b"]).accept.tolist()
    [True, False, False]
    """
    c_a, c_b = count(Q("a"), name="C_a"), count(Q("b"), name="C_b")
    ordered = _never_count(Q("a") & (c_b >= 1), "ordered")
    return crasp_program(
        "anbn", (ordered & (c_a == c_b)).named("L"), "ab", description="a^n b^n (n >= 0)"
    )
