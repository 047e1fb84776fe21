"""Programs of Huang et al. Appendix C, written operation by operation as the seed states them,
checked against the registered tasks' own labels: the language's semantics is the paper's
(counts over the string's symbols only, positions numbered from 1).

The seed text held by the project lost its formulas; each program follows the seed's prose for
it line by line (quoted in the test), in the seed's operations and names.
"""

from __future__ import annotations

import numpy as np

from rasplab.crasp import run
from rasplab.crasp.check import check_program
from rasplab.crasp.ir import CraspProgram, Op, Periodic
from rasplab.tasks import get_task


def _exists(name: str, arg: str) -> list[Op]:
    """C.1.4: ``∃[j <= i] P(j)`` is the macro ``#[j <= i] P(j) >= 1``."""
    return [Op(f"C_{name}", "count", (arg,)), Op(name, "compare_const", (f"C_{name}",),
                                                 comparison=">=", value=1)]  # fmt: skip


def test_c23_aa_star_agrees_with_the_task_labels():
    # C.2.3: a periodic function tests the parity of the position; the last operation "is
    # true if the string is of even length and contains only a's"
    p = CraspProgram(
        "c23_aa_star",
        ("a",),
        (
            Op("Q_a", "initial", symbol="a"),
            Op("E", "periodic", period=Periodic(2, frozenset({0}))),
            Op("N", "not", ("Q_a",)),
            Op("C_N", "count", ("N",)),
            Op("O_a", "compare_const", ("C_N",), comparison="==", value=0),
            Op("O", "and", ("E", "O_a")),
        ),
    )
    assert p.crasp_class == "C-RASP[periodic]"
    result = check_program(p, "aa_star", lengths="1-200", samples=300, seed=0)
    assert result.total >= 300 and result.ok, result.first_disagreement
    # the negated count sees no symbol on a string of a's (the start position is not one)
    assert run(p, ["a a", "a", "a a a a", ""]).accept.tolist() == [True, False, True, True]


def test_c15_piecewise_testable_tomita7_agrees_with_the_task_labels():
    # C.1.5 with C.1.4: Tomita 7 = 0*1*0*1* is the strings without the subsequence 1010
    # (E.1.2): chain "a 1", "a 0 after a 1", ... with existential counts; accept = NOT L_4
    ops = [Op("Q_0", "initial", symbol="0"), Op("Q_1", "initial", symbol="1")]
    ops += _exists("L_1", "Q_1")
    prev = "L_1"
    for k, sym in ((2, "0"), (3, "1"), (4, "0")):
        ops.append(Op(f"P_{k}", "and", (f"Q_{sym}", prev)))
        ops += _exists(f"L_{k}", f"P_{k}")
        prev = f"L_{k}"
    ops.append(Op("A", "not", ("L_4",)))
    p = CraspProgram("c15_tomita7", ("0", "1"), tuple(ops))
    assert p.crasp_class == "C-RASP[]"
    result = check_program(p, "tomita7", lengths="1-200", samples=300, seed=0)
    assert result.total >= 300 and result.ok, result.first_disagreement


def test_c12_dyck1_agrees_with_the_rasp_dyck1_labels_at_every_prefix():
    # C.1.2: no prefix has more closing than opening brackets, and as many of each in all
    p = CraspProgram(
        "c12_dyck1",
        ("(", ")"),
        (
            Op("Q_open", "initial", symbol="("),
            Op("Q_close", "initial", symbol=")"),
            Op("C_open", "count", ("Q_open",)),
            Op("C_close", "count", ("Q_close",)),
            Op("V", "compare", ("C_close", "C_open"), comparison=">"),
            Op("C_V", "count", ("V",)),
            Op("N_V", "compare_const", ("C_V",), comparison="==", value=0),
            Op("B", "compare", ("C_open", "C_close"), comparison="=="),
            Op("D", "and", ("N_V", "B")),
        ),
    )
    task = get_task("rasp_dyck1")  # per prefix: T balanced, P may still close, F failed
    rng = np.random.default_rng(0)
    examples = [task.sample(rng, 15) for _ in range(400)]
    strings = [ex.tokens[1:] for ex in examples]
    r = run(p, strings)
    balanced = 0
    for b, ex in enumerate(examples):
        want = [t == "T" for t in ex.targets[1:]]
        assert r.prefix_accept(b)[1:] == want, ex.tokens
        balanced += sum(want)
    assert balanced > 100  # the sample holds many balanced prefixes, not only failures
