"""The Chomsky-hierarchy family: every label checked by a reference written apart from the
generators (from the task's definition in docs/tasks.md), determinism, lengths, bad input."""

from __future__ import annotations

import math

import pytest

from rasplab.errors import RasplabError
from rasplab.seeding import generator
from rasplab.tasks import get_task, task_names
from rasplab.tasks.base import BOS, EOS, SEP

TASKS = (
    "even_pairs",
    "parity_check",
    "cycle_navigation",
    "modular_arithmetic_simple",
    "stack_manipulation",
    "reverse_string",
    "modular_arithmetic_brackets",
    "solve_equation",
    "duplicate_string",
    "missing_duplicate_string",
    "odds_first",
    "binary_addition",
    "binary_multiplication",
    "compute_sqrt",
    "bucket_sort",
)


def _mod5_eval(tokens: list[str]) -> int:
    """Python's own integer arithmetic on the expression, then modulo 5."""
    return eval("".join(tokens), {"__builtins__": {}}) % 5  # noqa: S307 (test-made digits/ops)


def _stack(x):
    split = next((i for i, s in enumerate(x) if s.startswith("p")), len(x))
    stack = list(x[:split])
    for a in x[split:]:
        if a == "pop":
            stack = stack[:-1]
        else:
            stack = stack + [a.removeprefix("push")]
    return list(reversed(stack))


def _solve(x):
    """Try every digit for x; exactly one must satisfy the equation."""
    eq = x.index("=")
    lhs, rhs = x[:eq], int(x[eq + 1])
    sols = [d for d in range(5) if _mod5_eval([str(d) if t == "x" else t for t in lhs]) == rhs]
    assert len(sols) == 1
    return [str(sols[0])]


def _missing(x):
    body = [s for s in x if s != "#"]
    half = len(body) // 2
    i = body.index("_")
    return [body[(i + half) % len(body)]]


def _binop(x, op):
    i = x.index(op)
    a, b = "".join(x[:i]), "".join(x[i + 1 :])
    for part in (a, b):  # no leading zeros except 0 itself
        assert part == "0" or part[0] == "1"
    v = int(a, 2) + int(b, 2) if op == "+" else int(a, 2) * int(b, 2)
    return list(bin(v)[2:])


REFERENCE = {
    "even_pairs": lambda x: [
        "1" if ("".join(x).count("ab") + "".join(x).count("ba")) % 2 == 0 else "0"
    ],
    "parity_check": lambda x: [str(int(x.count("b") % 2 == 0))],
    "cycle_navigation": lambda x: [str((x.count("1") - x.count("2")) % 5)],
    "modular_arithmetic_simple": lambda x: [str(_mod5_eval(x))],
    "stack_manipulation": _stack,
    "reverse_string": lambda x: list(reversed(x)),
    "modular_arithmetic_brackets": lambda x: [str(_mod5_eval(x))],
    "solve_equation": _solve,
    "duplicate_string": lambda x: x * 2,
    "missing_duplicate_string": _missing,
    "odds_first": lambda x: (
        [x[i] for i in range(len(x)) if i % 2 == 0] + [x[i] for i in range(len(x)) if i % 2 == 1]
    ),
    "binary_addition": lambda x: _binop(x, "+"),
    "binary_multiplication": lambda x: _binop(x, "*"),
    "compute_sqrt": lambda x: list(
        bin(math.isqrt(int("".join(x), 2)))[2:].zfill((len(x) + 1) // 2)
    ),
    "bucket_sort": lambda x: sorted(x),
}


def test_the_fifteen_tasks_are_registered():
    assert set(TASKS) <= set(task_names())
    assert {get_task(t).level for t in TASKS} == {"regular", "dcf", "cs"}


@pytest.mark.parametrize("name", TASKS)
def test_labels_match_the_reference(name):
    task = get_task(name)
    examples = task.dataset("train", n=300, seed=3) + task.dataset("test", "41-100", 60, seed=3)
    examples += task.dataset("test", "201-500", 8, seed=3)
    for ex in examples:
        sep = ex.tokens.index(SEP)
        x, answer = list(ex.tokens[1:sep]), list(ex.tokens[sep + 1 : -1])
        assert ex.tokens[0] == BOS and ex.tokens[-1] == EOS
        assert len(x) == ex.length and set(x) <= set(task.symbols)
        assert answer == REFERENCE[name](x), (name, ex.tokens)
        assert len(answer) <= task.answer_len(ex.length)
        assert len(ex.tokens) <= task.max_tokens(ex.length)


@pytest.mark.parametrize("name", TASKS)
def test_bins_and_determinism(name):
    task = get_task(name)
    assert (task.train_bin.hi, [str(b) for b in task.test_bins]) == (
        40,
        [str(task.train_bin), "41-100", "101-200", "201-500"],
    )
    a = task.dataset("test", "101-200", 20, seed=5)
    b = task.dataset("test", "101-200", 20, seed=5)
    assert [e.tokens for e in a] == [e.tokens for e in b]
    assert all(101 <= e.length <= 200 for e in a)
    assert [e.tokens for e in task.dataset("test", "101-200", 20, seed=6)] != [e.tokens for e in a]


def test_lengths_as_the_paper_counts_them():
    assert get_task("modular_arithmetic_simple").lengths("1-8") == [1, 3, 5, 7]
    assert get_task("solve_equation").lengths("1-5") == [3, 4, 5]
    assert get_task("missing_duplicate_string").train_bin.lo == 2
    ex = get_task("missing_duplicate_string").sample(generator(0, "t"), 9)
    assert ex.tokens[1:10].count("_") == 1 and ex.tokens[9] == "#"
    assert len(get_task("compute_sqrt").sample(generator(0, "t"), 9).tokens) == 1 + 9 + 1 + 5 + 1


def test_paper_positions_count_eos_only_with_a_termination_token():
    rng = generator(0, "t")
    cls = get_task("parity_check").sample(rng, 5)
    assert get_task("parity_check").paper_positions(cls) == [6]
    st = get_task("stack_manipulation")
    ex = st.sample(rng, 6)
    assert st.paper_positions(ex) == ex.scored_positions()
    rev = get_task("reverse_string")
    ex = rev.sample(rng, 4)
    assert rev.paper_positions(ex) == ex.scored_positions()[:4]


def test_bad_input_is_one_clear_error():
    with pytest.raises(RasplabError, match="does not accept options"):
        get_task("even_pairs", modulus=7)
    with pytest.raises(RasplabError, match="end at 500"):
        get_task("compute_sqrt").sample(generator(0, "t"), 501)
    with pytest.raises(RasplabError, match="start at 3"):
        get_task("binary_addition").dataset("test", "1-2", 5)
    with pytest.raises(RasplabError, match="no examples"):
        get_task("modular_arithmetic_simple").sample(generator(0, "t"), 4)


@pytest.mark.parametrize(
    "argv",
    [
        ["data", "compute_sqrt", "--split", "test", "--bin", "501-600", "--n", "3"],
        ["data", "binary_addition", "--split", "test", "--bin", "1-2", "--n", "3"],
        ["data", "even_pairs", "-o", "modulus=7", "--n", "1"],
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(argv, capsys):
    from rasplab.cli import main

    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    lines = [x for x in err.splitlines() if "Deprecat" not in x]
    assert done.value.code == 2 and out == "" and len(lines) == 1
