"""C-RASP programs for Delétang et al.'s Chomsky-hierarchy tasks, in their next-token
formulation (``INPUT <sep> ANSWER``; the ``next_<token>`` readout names the next token at
``<sep>`` and at every answer position, as in :mod:`rasplab.crasp.library.algorithmic`).

Two of the fifteen tasks have a program; the verdicts and arguments for the others are in
:mod:`rasplab.crasp.chomsky_verdicts`. Neither program counts ``<bos>``: the first input
symbol is found as the position where the count of input symbols is 1.

>>> from rasplab.crasp.interpreter import run
>>> run(bucket_sort(), ["c a c <sep> a c c"]).readout(0)[4:]
['a', 'c', 'c', '<eos>']
>>> run(even_pairs(), ["a b b a <sep> 1"]).readout(0)[5:]
['1', '<eos>']
"""

from __future__ import annotations

from rasplab.crasp.build import Q, all_of, any_of, count, crasp_program, exists, next_token, offset
from rasplab.crasp.ir import CraspProgram

SEP, EOS = "<sep>", "<eos>"
BUCKETS = ("a", "b", "c", "d", "e")


def bucket_sort(symbols: tuple[str, ...] = BUCKETS) -> CraspProgram:
    """Bucket sort, C-RASP[]: with ``I_x`` the count of x in the input and ``O_x`` its count in
    the answer so far, the next token is the first x (in order) with ``O_x < I_x``, every
    earlier y having ``O_y = I_y``; ``<eos>`` once every count is matched.

    >>> from rasplab.crasp.interpreter import run
    >>> run(bucket_sort(), ["e d <sep> d"]).readout(0)[3:]
    ['d', 'e']
    """
    seps = count(Q(SEP), name="seps")
    in_input, answering = (seps == 0).named("in_input"), (seps >= 1).named("answering")
    given = {x: count(Q(x) & in_input, name=f"I_{x}") for x in symbols}
    written = {x: count(Q(x) & answering, name=f"O_{x}") for x in symbols}
    done = {x: (written[x] == given[x]).named(f"done_{x}") for x in symbols}
    table = {}
    for k, x in enumerate(symbols):
        earlier = [done[y] for y in symbols[:k]]
        table[x] = all_of(answering, *earlier, written[x] < given[x], name=f"next_{x}")
    table[EOS] = all_of(answering, *done.values(), name="next_eos")
    return crasp_program(
        "bucket_sort",
        table[EOS],
        (*symbols, SEP),
        readout=next_token(table),
        description="next = the first symbol whose count in the answer is below its input count",
    )


def even_pairs() -> CraspProgram:
    """Even pairs, C-RASP[local]: the number of ``ab`` and ``ba`` pairs is even iff the first
    and the last input symbols are equal. The first is where the count of input symbols is 1
    (no ``<bos>`` needed); the last is read at ``<sep>`` through the local relation j = i - 1.

    >>> from rasplab.crasp.interpreter import run
    >>> run(even_pairs(), ["b a a <sep>"]).readout(0)[-1]
    '0'
    """
    first = (count(Q("a") | Q("b"), name="read") == 1).named("is_first")
    first_a = exists(Q("a") & first, name="first_a")
    last_a = (count(Q("a"), offset(1), name="a_before") >= 1).named("last_a")
    same = any_of(first_a & last_a, ~first_a & ~last_a, name="same_ends")
    table = {
        "1": (Q(SEP) & same).named("next_1"),
        "0": (Q(SEP) & ~same).named("next_0"),
        EOS: (exists(Q(SEP)) & ~Q(SEP)).named("next_eos"),
    }
    return crasp_program(
        "even_pairs",
        table[EOS],
        ("a", "b", SEP, "0", "1"),
        readout=next_token(table),
        description="even number of ab/ba pairs iff the first and last symbols agree",
    )
