"""C-RASP programs for the algorithmic tasks of Table 3 whose answer is "yes" (seed Appendix
E.2.2), in their next-token formulation, plus the induction head of Appendix C.2.2.

A task sequence is ``<bos> INPUT <sep> ANSWER <eos>``; the program reads ``INPUT <sep> ANSWER``
(the interpreter adds ``<bos>``) and its token readout ``next_<token>`` holds at position i iff
that token comes next. Scored are the ``<sep>`` position and the answer positions: there the
readout must name exactly the task's target. At input positions nothing is predicted. Counts
of input symbols are taken over the positions before the first ``<sep>`` (``in_input``), so
that answer tokens fed back (teacher forcing or generation) are not counted as input.

>>> from rasplab.crasp.interpreter import run
>>> run(binary_majority(), ["0 1 1 <sep> 1"]).readout(0)
[None, None, None, None, '1', '<eos>']
"""

from __future__ import annotations

from collections.abc import Sequence

from rasplab.crasp.build import (
    Bool,
    Q,
    all_of,
    any_of,
    cond,
    constant,
    count,
    crasp_program,
    exists,
    next_set,
    next_token,
    offset,
    periodic,
)
from rasplab.crasp.ir import CraspProgram

SEP, EOS = "<sep>", "<eos>"
VOCAB_150 = tuple(str(k) for k in range(150))
LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")


def _input_part() -> tuple[Bool, Bool]:
    """``(in_input, answering)``: no <sep> up to i; some <sep> up to i."""
    seps = count(Q(SEP), name="seps")
    return (seps == 0).named("in_input"), (seps >= 1).named("answering")


def binary_majority() -> CraspProgram:
    """Binary majority, C-RASP[]: at <sep>, predict the bit with the larger count; then <eos>.

    >>> from rasplab.crasp.interpreter import run
    >>> run(binary_majority(), ["0 0 1 <sep>"]).readout(0)[-1]
    '0'
    """
    zeros, ones = count(Q("0"), name="zeros"), count(Q("1"), name="ones")
    table = {
        "0": (Q(SEP) & (ones < zeros)).named("next_0"),
        "1": (Q(SEP) & (zeros < ones)).named("next_1"),
        EOS: (exists(Q(SEP)) & ~Q(SEP)).named("next_eos"),
    }
    return crasp_program(
        "binary_majority",
        table[EOS],
        ("0", "1", SEP),
        readout=next_token(table),
        description="majority bit: compare the counts of 0 and 1 at <sep>",
    )


def binary_majority_interleave(streams: int = 3) -> CraspProgram:
    """Binary majority interleave, C-RASP[periodic]: stream s occupies the positions
    i = s+1 (mod streams); its majority is answered at the position s after <sep>, which has
    the same residue (the input length is a multiple of ``streams``). So at an answer
    position, compare the counts of 0 and 1 at input positions with the current residue
    (periodic predicates implement "each count operation separately", seed E.2.2).

    >>> from rasplab.crasp.interpreter import run
    >>> run(binary_majority_interleave(), ["0 1 1 0 1 1 <sep> 0 1 1"]).readout(0)[7:]
    ['0', '1', '1', '<eos>']
    """
    in_input, _ = _input_part()
    after = count(~in_input, name="after_sep")  # 1 at <sep>, 2 at the first answer, ...
    answering = ((after >= 1) & (after <= streams)).named("answering_bits")
    one_wins = []
    for r in range(streams):
        here = periodic(streams, r, name=f"res{r}")
        z = count(all_of(Q("0"), here, in_input), name=f"zeros{r}")
        o = count(all_of(Q("1"), here, in_input), name=f"ones{r}")
        one_wins.append(here & (z < o))
    ones_here = any_of(*one_wins, name="one_wins_here")
    table = {
        "0": (answering & ~ones_here).named("next_0"),
        "1": (answering & ones_here).named("next_1"),
        EOS: (after == streams + 1).named("next_eos"),
    }
    return crasp_program(
        "binary_majority_interleave",
        table[EOS],
        ("0", "1", SEP),
        readout=next_token(table),
        description="majority bit of each of 3 interleaved streams, by residue mod 3",
    )


def majority(letters: Sequence[str] = LETTERS) -> CraspProgram:
    """Majority over many letters, C-RASP[] ("similar to binary majority"): at <sep>, predict
    the letter whose count exceeds every other count; then <eos>.

    >>> from rasplab.crasp.interpreter import run
    >>> run(majority(), ["c b a b <sep> b"]).readout(0)[-2:]
    ['b', '<eos>']
    """
    counts = {x: count(Q(x), name=f"C_{x}") for x in letters}
    table = {
        x: all_of(Q(SEP), *(counts[y] < counts[x] for y in letters if y != x), name=f"next_{x}")
        for x in letters
    }
    table[EOS] = (exists(Q(SEP)) & ~Q(SEP)).named("next_eos")
    return crasp_program(
        "majority",
        table[EOS],
        (*letters, SEP),
        readout=next_token(table),
        description="most frequent letter: its count exceeds every other count at <sep>",
    )


def sort(tokens: Sequence[str] = VOCAB_150) -> CraspProgram:
    """Sort distinct tokens, C-RASP[] (seed E.2.2 after Zhou et al.): predict the smallest
    input token larger than the current one. ``tokens`` lists the vocabulary in order.

    ``below_v`` holds at input positions with a token < v; ``A_v = #[j <= i] below_v(j)``
    counts input tokens < v; ``le_cur`` (a chain of conditionals on the current token) is
    ``A_{c+1}`` for the current token c (0 at <sep>). Then v comes next iff
    ``A_v <= le_cur < A_{v+1}`` (no input token strictly between c and v, and v present);
    <eos> iff ``le_cur = A_top`` (nothing larger is left).

    >>> from rasplab.crasp.interpreter import run
    >>> run(sort(("0", "1", "2", "3")), ["2 0 3 <sep> 0 2 3"]).readout(0)[4:]
    ['0', '2', '3', '<eos>']
    """
    in_input, answering = _input_part()
    acc = [constant(0, name="A_0")]
    below = None
    for k, v in enumerate(tokens):
        here = Q(v) & in_input
        below = here if below is None else (below | here)
        acc.append(count(below, name=f"A_{k + 1}"))
    le_cur = constant(0, name="zero")
    for k in reversed(range(len(tokens))):
        le_cur = cond(Q(tokens[k]), acc[k + 1], le_cur, name=f"le_{k}")
    table = {
        v: all_of(answering, acc[k] <= le_cur, le_cur < acc[k + 1], name=f"next_{k}")
        for k, v in enumerate(tokens)
    }
    table[EOS] = (answering & (le_cur == acc[-1])).named("next_eos")
    return crasp_program(
        "sort",
        table[EOS],
        (*tokens, SEP),
        readout=next_token(table),
        description="next = the smallest input token above the current one (counts only)",
    )


def copy_unique(tokens: Sequence[str] = VOCAB_150) -> CraspProgram:
    """Copy distinct tokens, C-RASP[local]: the induction head of Appendix C.2.2, with the
    bigram table stored in binary.

    ``after_k(j)`` (local relation j' = j-1) says the token before j is k (the start of the
    string and <sep> are one key, "start"; j follows the start iff it is position 1). Input position j (up to and including the first <sep>) records
    bit b of the code of its own token (tokens 1..n, <sep> = n+1) in ``H_{k,b} = #[j <= i]
    (source(j) and after_k(j) and bit_b(j)) >= 1``. At an answer position holding key k,
    output bit b is ``H_{k,b}``: the code of the token that followed k in the input (unique
    tokens: at most one). The token with that code comes next; the code of <sep> means <eos>.
    This keeps |V| log|V| counts instead of the |V|^2 bigram counts of the literal
    construction (:func:`induction_head`), and agrees with it whenever tokens do not repeat.

    >>> from rasplab.crasp.interpreter import run
    >>> run(copy_unique(("a", "b", "c")), ["c a b <sep> c a b"]).readout(0)[4:]
    ['c', 'a', 'b', '<eos>']
    """
    seps = count(Q(SEP), name="seps")
    source = (seps - cond(Q(SEP), 1, 0) == 0).named("source")  # no <sep> strictly before j
    answering = (seps >= 1).named("answering")
    values = (*tokens, SEP)
    code = {v: k + 1 for k, v in enumerate(values)}
    nbits = max(code.values()).bit_length()
    bit = [
        any_of(*(Q(v) for v in values if code[v] >> b & 1), name=f"bit{b}") for b in range(nbits)
    ]
    keys = {"start": Q(SEP)} | {v: Q(v) for v in tokens}
    after = {
        k: (count(q, offset(1), name=f"c_after_{_ident(k)}") >= 1).named(f"after_{_ident(k)}")
        for k, q in keys.items()
        if k != "start"
    }
    # the first symbol follows the start of the string: j = 1, i.e. #[j' <= j] TRUE == 1
    first = (count(constant(True), name="length") == 1).named("first")
    after_sep = (count(Q(SEP), offset(1), name="c_after_sep") >= 1).named("after_sep")
    after["start"] = (first | after_sep).named("after_start")
    out_bits = []
    for b in range(nbits):
        terms = []
        for kname, kq in keys.items():
            held = exists(all_of(source, after[kname], bit[b]), name=f"H_{_ident(kname)}_{b}")
            current = Q(SEP) if kname == "start" else kq
            terms.append(current & held)
        out_bits.append(any_of(*terms, name=f"out_bit{b}"))
    table = {}
    for v in values:
        lits = [out_bits[b] if code[v] >> b & 1 else ~out_bits[b] for b in range(nbits)]
        sym = EOS if v == SEP else v
        table[sym] = all_of(answering, *lits, name=f"next_{_ident(sym)}")
    return crasp_program(
        "copy_unique",
        table[EOS],
        (*tokens, SEP),
        readout=next_token(table),
        description="induction head: next = the token that followed the current one",
    )


def induction_head(alphabet: Sequence[str] = ("a", "b", "c")) -> CraspProgram:
    """The induction head of Appendix C.2.2 (all possible next symbols), C-RASP[local],
    literally: ``B_{s,t}(i) = #[j <= i] (Q_t(j) and after_s(j)) >= 1`` (bigram s t seen so far)
    and ``next_t(i) = OR_s (Q_s(i) and B_{s,t}(i))``: t may follow the current symbol iff it
    followed that symbol before.

    >>> from rasplab.crasp.interpreter import run
    >>> run(induction_head(), ["a b a c a"]).readout(0)[-1]
    ('b', 'c')
    """
    after = {
        s: (count(Q(s), offset(1), name=f"c_after_{s}") >= 1).named(f"after_{s}") for s in alphabet
    }
    table = {}
    for t in alphabet:
        seen = [Q(s) & exists(Q(t) & after[s], name=f"B_{s}_{t}") for s in alphabet]
        table[t] = any_of(*seen, name=f"next_{t}")
    last = table[alphabet[-1]]
    return crasp_program(
        "induction_head",
        last,
        tuple(alphabet),
        readout=next_set(table),
        description="next symbols = those that followed the current symbol before",
    )


def _ident(symbol: str) -> str:
    """A symbol as part of an operation name (``<eos>`` -> ``eos``)."""
    return symbol.strip("<>")
