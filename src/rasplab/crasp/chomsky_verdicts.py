"""C-RASP verdicts for Delétang et al.'s Chomsky-hierarchy tasks: the rows of
``rasplab crasp table --family chomsky`` that have no library program.

None of these is stated by Huang et al. (their tables do not cover these tasks); each is
rasplab's own argument from the seed's results, written out in ``docs/crasp_table.md``
(Chomsky hierarchy). "no" means an argument from a cited lemma; "none found" means no program
was found and no proof of nonexistence is given. The two tasks with programs (``bucket_sort``
in C-RASP[], ``even_pairs`` in C-RASP[local]) take their "yes" from the library.

>>> RECORDED[("parity_check", PERIODIC_LOCAL)][:2]
('no', 'rasplab, from Lemma 41')
>>> [t for t, _ in TASKS if (t, PLAIN) not in RECORDED]
['bucket_sort']
"""

from __future__ import annotations

PLAIN, PERIODIC_LOCAL = "C-RASP[]", "C-RASP[periodic,local]"

TASKS: tuple[tuple[str, str], ...] = (
    ("even_pairs", "Even Pairs"),
    ("modular_arithmetic_simple", "Modular Arithmetic (Simple)"),
    ("parity_check", "Parity Check"),
    ("cycle_navigation", "Cycle Navigation"),
    ("stack_manipulation", "Stack Manipulation"),
    ("reverse_string", "Reverse String"),
    ("modular_arithmetic_brackets", "Modular Arithmetic (Brackets)"),
    ("solve_equation", "Solve Equation"),
    ("duplicate_string", "Duplicate String"),
    ("missing_duplicate_string", "Missing Duplicate"),
    ("odds_first", "Odds First"),
    ("binary_addition", "Binary Addition"),
    ("binary_multiplication", "Binary Multiplication"),
    ("compute_sqrt", "Compute Sqrt"),
    ("bucket_sort", "Bucket Sort"),
)
"""(task, label) in the paper's order: regular, deterministic context-free, context-sensitive."""

_MOD5 = (
    "no",
    "rasplab, from Lemma 41, 42",
    "counting modulo 5 as Tomita 6 counts modulo 3: PARITY's argument (Lemma 41) through a "
    "length-preserving morphism (Lemma 42)",
)
_COPY = (
    "no",
    "rasplab, from Corollary 13",
    "contains copying arbitrary strings, which Huang et al. rule out (Corollary 13, App. E.2.2)",
)
_REVERSE = (
    "none found",
    "rasplab, from Theorem 12",
    "no program found; reversing an arbitrary string looks as hard as copying it (Theorem 12's "
    "communication bound), but no reduction to copying is proved here",
)


def _both(verdict: tuple[str, str, str]) -> dict[tuple[str, str], tuple[str, str, str]]:
    """The same verdict for C-RASP[] and C-RASP[periodic,local]."""
    return {PLAIN: verdict, PERIODIC_LOCAL: verdict}


_BY_TASK: dict[str, dict[str, tuple[str, str, str]]] = {
    "even_pairs": {
        PLAIN: (
            "none found",
            "rasplab",
            "the answer at <sep> needs the last input symbol, read here through a local "
            "relation; no C-RASP[] program found",
        )
    },
    "parity_check": _both(
        ("no", "rasplab, from Lemma 41", "PARITY (Lemma 41), with the answer read at <sep>")
    ),
    "cycle_navigation": _both(_MOD5),
    "modular_arithmetic_simple": _both(
        (
            "no",
            "rasplab, from Lemma 41, 42",
            "on digits 0/1 joined by + it counts the 1s modulo 5 (morphism x -> 'x +', "
            "Lemma 42), which PARITY's argument rules out (Lemma 41)",
        )
    ),
    "stack_manipulation": _both(
        (
            "none found",
            "rasplab, from Theorem 12",
            "no program found; with no net effect of the actions the answer is the given "
            "stack reversed, as hard as reverse_string",
        )
    ),
    "reverse_string": _both(_REVERSE),
    "modular_arithmetic_brackets": _both(
        (
            "none found",
            "rasplab, from Lemma 41",
            "no program found; it needs sums modulo 5, but the bracket structure blocks the "
            "morphism argument used for the simple variant",
        )
    ),
    "solve_equation": _both(
        (
            "none found",
            "rasplab, from Lemma 41",
            "no program found; as modular_arithmetic_brackets (sums modulo 5 under brackets)",
        )
    ),
    "duplicate_string": _both(_COPY),
    "missing_duplicate_string": _both(
        (
            "none found",
            "rasplab",
            "no program found; the missing symbol is a iff the count of a is odd, a parity of "
            "a count over these restricted inputs, which Lemma 41 does not cover",
        )
    ),
    "odds_first": _both(
        (
            "none found",
            "rasplab, from Theorem 12",
            "no program found; the answer rearranges the whole input by position, as in "
            "copying, but no reduction to copying is proved here",
        )
    ),
    "binary_addition": _both(
        (
            "no",
            "rasplab, from Corollary 13",
            "adding 0 is copying, as for Huang et al.'s addition (App. E.2.2)",
        )
    ),
    "binary_multiplication": _both(
        ("no", "rasplab, from Corollary 13", "multiplying by 1 is copying")
    ),
    "compute_sqrt": _both(
        (
            "none found",
            "rasplab, from Theorem 12",
            "no program found; the root fixes about half of the input's leading bits, which "
            "suggests the communication bound, not proved here",
        )
    ),
}

RECORDED: dict[tuple[str, str], tuple[str, str, str]] = {
    (task, cls): verdict for task, by_class in _BY_TASK.items() for cls, verdict in by_class.items()
}
"""(task, class) -> (answer, short citation, one sentence): every verdict without a program."""


def task_names() -> list[str]:
    """The family's rows, in the paper's order."""
    return [t for t, _ in TASKS]
