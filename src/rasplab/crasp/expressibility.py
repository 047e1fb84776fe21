"""The expressibility table of Huang et al. (Tables 2 and 3): one row per task, and its prediction.

A row has the task's C-RASP[] and C-RASP[periodic,local] verdicts, its algebra and the
prediction the seed draws from them:

* **C-RASP verdicts** come from the program library when it holds a verified program for the
  task in that class ("yes", named after the program; the class is the program's *computed*
  class), otherwise from the recorded "no" / "none found" entries below, each with the
  seed's citation. A recorded "no" next to a library program for the same class is a
  contradiction and an error.
* **star-free** and **AC0** are computed from the language's automaton
  (:mod:`rasplab.crasp.algebra`) for the 17 languages and PARITY; for the algorithmic tasks
  (not regular languages in their task formats) star-free does not apply and AC0 is cited
  from Table 3. **dot-depth** is cited from Table 2 (not computed).
* **prediction**, what Theorems 7 and 9 of Huang et al. guarantee and nothing more:
  ``"guaranteed (NoPE)"`` when a C-RASP[] program exists (length generalization is
  guaranteed even without positional encodings, hence with APE too), ``"guaranteed (APE)"``
  when only a C-RASP[periodic,local] program exists (guaranteed with APE; for NoPE the theory
  gives no guarantee), ``"not guaranteed"`` when both are "no" or "none found": the theorems
  then say nothing. The seed is explicit that this is not a prediction of failure: Theorem 7
  "does not rule out length generalization for inexpressible problems" (after Theorem 7), and
  "it is open if problems not expressible in C-RASP cannot in principle show length
  generalization", though "experimental results suggest that such an implication might hold
  in many cases" (Appendix A, FAQ 2). :func:`guarantees` and :func:`agreement` turn a prediction into what a measured
  run is scored against: a guaranteed encoding agrees ("yes") or not ("no"); an unguaranteed
  one that fails is "consistent" with the theory, one that generalizes is "no prediction"
  (the theory does not rule it out).

Any other registered task gets a row too: a language task (one with an ``automaton``) has
its star-free and AC0 columns computed; a C-RASP column without a library program and
without a recorded verdict is ``"not known"``, and so is the prediction then.

>>> r = row("aa_star")
>>> r.crasp.answer, r.crasp_periodic_local.program, r.star_free, r.ac0, r.prediction
('no', 'aa_star', False, True, 'guaranteed (APE)')
>>> agreement(r.prediction, "ape", True), agreement(r.prediction, "nope", False)
('yes', 'consistent')
>>> row("copy_repeat").crasp_periodic_local.reason
'Corollary 13'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from rasplab import tasks as registry
from rasplab.crasp import chomsky_verdicts, library
from rasplab.crasp.algebra import is_aperiodic, is_quasi_aperiodic, syntactic_monoid
from rasplab.errors import unknown_name
from rasplab.tasks.languages import PARITY_LANGUAGE

PLAIN, PERIODIC_LOCAL = "C-RASP[]", "C-RASP[periodic,local]"
GUARANTEED_NOPE, GUARANTEED_APE, NOT_GUARANTEED = (
    "guaranteed (NoPE)",
    "guaranteed (APE)",
    "not guaranteed",
)
NOT_KNOWN = "not known"
PREDICTIONS = (GUARANTEED_NOPE, GUARANTEED_APE, NOT_GUARANTEED, NOT_KNOWN)
AGREEMENTS = ("yes", "no", "consistent", "no prediction")
"""What a measured verdict is against a prediction (see :func:`agreement`)."""


def guarantees(prediction: str, encoding: str) -> bool | None:
    """Whether ``prediction`` guarantees length generalization for ``encoding`` ("ape" or
    "nope", any case; APE with the paper's regularizer is APE): True, False (no guarantee:
    the theory says nothing) or None (prediction "not known").

    >>> guarantees("guaranteed (APE)", "APE"), guarantees("guaranteed (APE)", "NoPE")
    (True, False)
    """
    if prediction not in PREDICTIONS:
        raise ValueError(f"unknown prediction {prediction!r}; one of: {', '.join(PREDICTIONS)}")
    if prediction == NOT_KNOWN:
        return None
    if encoding.lower() == "nope":
        return prediction == GUARANTEED_NOPE
    return prediction in (GUARANTEED_NOPE, GUARANTEED_APE)


def agreement(prediction: str, encoding: str, generalizes: bool) -> str | None:
    """A measured outcome against the prediction: "yes"/"no" where length generalization is
    guaranteed (it did / did not generalize), "consistent" where it is not guaranteed and the
    run failed, "no prediction" where it is not guaranteed and the run generalized (the theory
    does not rule that out); None when the prediction is "not known".

    >>> agreement("not guaranteed", "ape", False), agreement("not guaranteed", "ape", True)
    ('consistent', 'no prediction')
    """
    g = guarantees(prediction, encoding)
    if g is None:
        return None
    if g:
        return "yes" if generalizes else "no"
    return "no prediction" if generalizes else "consistent"


@dataclass(frozen=True)
class Verdict:
    """One C-RASP column of a row: ``answer`` is "yes", "no" or "none found"; ``program`` the
    library program for a "yes"; ``reason`` a short citation (or the program's source) and
    ``detail`` one sentence of the seed's argument."""

    answer: str
    program: str | None
    reason: str
    detail: str = ""

    def text(self) -> str:
        """``yes (tomita4)``, ``no (Lemma 38)``, ``none found (App. E.2.2)``."""
        return f"{self.answer} ({self.program or self.reason})"


@dataclass(frozen=True)
class TaskInfo:
    """What the seed says about a task besides its programs: its label in the tables, the
    task measured for it (None: no registered task), and the cited columns."""

    name: str
    label: str
    kind: str  # "language" | "algorithmic" | "other" (a registered task outside the tables)
    measured_task: str | None
    dot_depth: int | None = None  # Table 2 (star-free languages only)
    ac0_cited: bool | None = None  # Table 3 (algorithmic tasks only)


def _lang(name: str, label: str, dot_depth: int | None = None, task: str | None = "") -> TaskInfo:
    return TaskInfo(name, label, "language", name if task == "" else task, dot_depth)


def _alg(name: str, label: str, ac0: bool) -> TaskInfo:
    return TaskInfo(name, label, "algorithmic", name, None, ac0)


TASKS: tuple[TaskInfo, ...] = (
    _lang("tomita1", "Tomita 1", 1),
    _lang("tomita2", "Tomita 2", 1),
    _lang("tomita3", "Tomita 3"),
    _lang("tomita4", "Tomita 4", 1),
    _lang("tomita5", "Tomita 5"),
    _lang("tomita6", "Tomita 6"),
    _lang("tomita7", "Tomita 7", 1),
    _lang("d2", "D_2", 2),
    _lang("d3", "D_3", 3),
    _lang("d4", "D_4", 4),
    _lang("d12", "D_12", 12),
    _lang("parity_language", "PARITY", task=None),
    _lang("aa_star", "(aa)*"),
    _lang("aaaa_star", "(aaaa)*"),
    _lang("abab_star", "(abab)*"),
    _lang("aa_bb_cc_dd_ee", "aa*bb*cc*dd*ee*", 1),
    _lang("ab_d_bc", "{a,b}*d{b,c}*", 1),
    _lang("zot_0_two", "{0,1,2}*02*", 2),
    _alg("binary_majority", "Binary Majority", False),
    _alg("binary_majority_interleave", "Binary Majority Interleave", False),
    _alg("majority", "Majority", False),
    _alg("sort", "Sort", True),
    _alg("copy_unique", "Copy (unique)", True),
    _alg("copy_repeat", "Copy (repeat)", True),
    _alg("parity", "Parity", False),
    _alg("addition", "Addition", True),
)
"""Table 2 (languages, PARITY in its place between #11 and #12), then Table 3."""
_INFO = {t.name: t for t in TASKS}

_PARITY = "Lemma 41", "PARITY is not in C-RASP[periodic,local] (Huang et al. Lemma 11, App. C.3.3)"
_KREBS = (
    "App. E.1.2",
    "regular languages in C-RASP[] lie in a class excluding it (Krebs 2008 Thms 6.10, 6.12; "
    "Tesson & Thérien 2002 Thm 2c), as sketched in Huang et al. App. E.1.2",
)
_LENGTH = "Lemma 38", "no C-RASP[] program tests the length modulo a fixed integer"
_COPY = "Corollary 13", "copying arbitrary strings has no Limit Transformer (App. B.3, E.2.2)"

#: (task, class) -> (answer, short citation, one sentence): the "no" and "none found" entries
RECORDED: dict[tuple[str, str], tuple[str, str, str]] = {
    ("tomita3", PLAIN): (
        "no",
        "Lemma 38",
        "outputs converge on long strings, by the argument for (aa)* in Lemma 38 (App. E.1.2)",
    ),
    ("tomita3", PERIODIC_LOCAL): (
        "no",
        "App. E.1.2",
        "periodic and local predicates can be compiled away into an extended alphabet, where "
        "the language is not in C-RASP[] for the same reason as Tomita 4 (App. E.1.2)",
    ),
    ("tomita4", PLAIN): ("no", *_KREBS),
    ("tomita5", PLAIN): ("no", "Lemma 41", "PARITY restricted to even lengths (App. E.1.2)"),
    ("tomita5", PERIODIC_LOCAL): ("no", "Lemma 41", "PARITY restricted to even lengths"),
    ("tomita6", PLAIN): (
        "no",
        "Lemma 41, 42",
        "counting mod 3 as PARITY (Lemma 41), via a length-preserving morphism (Lemma 42)",
    ),
    ("tomita6", PERIODIC_LOCAL): (
        "no",
        "Lemma 41, 42",
        "counting mod 3 as PARITY (Lemma 41), via a length-preserving morphism (Lemma 42)",
    ),
    ("parity_language", PLAIN): ("no", *_PARITY),
    ("parity_language", PERIODIC_LOCAL): ("no", *_PARITY),
    ("aa_star", PLAIN): ("no", *_LENGTH),
    ("aaaa_star", PLAIN): ("no", *_LENGTH),
    ("abab_star", PLAIN): ("no", _LENGTH[0], "analogous to (aa)* (App. E.1.2)"),
    ("zot_0_two", PLAIN): (
        "no",
        "Lemma 36",
        "equivalent to Σ*be* over a renamed alphabet, not in C-RASP[periodic,local] (Lemma 36)",
    ),
    ("zot_0_two", PERIODIC_LOCAL): (
        "no",
        "Lemma 36",
        "equivalent to Σ*be* over a renamed alphabet, not in C-RASP[periodic,local] (Lemma 36)",
    ),
    ("binary_majority_interleave", PLAIN): (
        "none found",
        "App. E.2.2",
        "no program found and no proof of nonexistence; even checking that the length is a "
        "multiple of 3 is impossible in C-RASP[] (Lemma 38)",
    ),
    ("copy_unique", PLAIN): (
        "no",
        "App. C.2.2",
        "the induction-head formulation is in C-RASP[periodic,local] but not in C-RASP[]",
    ),
    ("copy_repeat", PLAIN): ("no", *_COPY),
    ("copy_repeat", PERIODIC_LOCAL): ("no", *_COPY),
    ("parity", PLAIN): ("no", *_PARITY),
    ("parity", PERIODIC_LOCAL): ("no", *_PARITY),
    ("addition", PLAIN): ("no", "Corollary 13", "adding zero is copying (App. E.2.2)"),
    ("addition", PERIODIC_LOCAL): ("no", "Corollary 13", "adding zero is copying (App. E.2.2)"),
}


@dataclass(frozen=True)
class ExpressibilityRow:
    """One task's row: verdicts, algebra (computed or cited) and the prediction."""

    info: TaskInfo
    crasp: Verdict
    crasp_periodic_local: Verdict
    star_free: bool | None  # None: not a regular language in its task format
    ac0: bool | None  # None: not known (a user's non-language task)
    ac0_source: str  # "computed" | "Table 3" | "not known"
    monoid_size: int | None

    @property
    def task(self) -> str:
        """The row's name (a registered task, or ``parity_language``)."""
        return self.info.name

    @property
    def paper_row(self) -> str:
        """Where the row is in the paper: ``"T2 #k"`` for the k-th of Table 2's 17 numbered
        languages, ``"T2"`` for PARITY (listed there without a number), ``"T3"`` for the
        algorithmic tasks of Table 3, ``"–"`` for any other task."""
        if self.info.kind == "algorithmic":
            return "T3"
        numbered = [t.name for t in TASKS if t.kind == "language" and t.measured_task]
        if self.task in numbered:
            return f"T2 #{numbered.index(self.task) + 1}"
        return "T2" if self.task in _INFO else "–"

    @property
    def dot_depth(self) -> int | None:
        """Dot-depth as cited from Table 2 (None when not star-free or not a language)."""
        return self.info.dot_depth

    @property
    def prediction(self) -> str:
        """``"guaranteed (NoPE)"``, ``"guaranteed (APE)"``, ``"not guaranteed"`` or
        ``"not known"`` (see the module docstring)."""
        if self.crasp.answer == "yes":
            return GUARANTEED_NOPE
        if self.crasp_periodic_local.answer == "yes":
            return GUARANTEED_APE
        answers = (self.crasp.answer, self.crasp_periodic_local.answer)
        return NOT_KNOWN if NOT_KNOWN in answers else NOT_GUARANTEED


def verdict(task: str, crasp_class: str) -> Verdict:
    """The C-RASP verdict for ``task`` in ``crasp_class`` (library first, then the records)."""
    programs = [e for e in library.for_task(task) if e.program().within(crasp_class)]
    recorded = RECORDED.get((task, crasp_class)) or _family_recorded(task, crasp_class)
    if programs and recorded:
        raise AssertionError(f"{task}: library program {programs[0].name} contradicts {recorded}")
    if programs:
        e = programs[0]
        return Verdict("yes", e.name, e.source, f"verified library program ({e.crasp_class})")
    if recorded is None:
        if task in _INFO:
            raise AssertionError(f"{task}: no library program and no recorded verdict")
        return Verdict(NOT_KNOWN, None, "no library program", "no program and no recorded proof")
    answer, reason, detail = recorded
    return Verdict(answer, None, reason, detail)


@functools.cache
def _algebra(info: TaskInfo) -> tuple[bool | None, bool | None, str, int | None]:
    """(star-free, AC0, where AC0 comes from, syntactic monoid size) of a task (computed
    once per process: the automata are fixed data)."""
    if info.kind != "language":
        known = info.ac0_cited is not None
        return None, info.ac0_cited, "Table 3" if known else NOT_KNOWN, None
    if info.name == "parity_language":
        automaton = PARITY_LANGUAGE[1]
    else:
        automaton = registry.get_task(info.name).automaton
    monoid = syntactic_monoid(automaton)
    return is_aperiodic(monoid), is_quasi_aperiodic(monoid), "computed", len(monoid.elements)


def _info(task: str) -> TaskInfo:
    """The seed's facts about ``task``, or those of another registered task (its automaton
    decides whether it is a language; nothing is cited for it)."""
    if task in _INFO:
        return _INFO[task]
    if task not in registry.task_names():
        raise unknown_name("task for the C-RASP table", task, {*_INFO, *registry.task_names()})
    is_language = hasattr(registry.get_task(task), "automaton")
    return TaskInfo(task, task, "language" if is_language else "other", task)


def row(task: str) -> ExpressibilityRow:
    """The row of ``task``: one of :func:`task_names` or any other registered task."""
    info = _info(task)
    star_free, ac0, source, size = _algebra(info)
    return ExpressibilityRow(
        info, verdict(task, PLAIN), verdict(task, PERIODIC_LOCAL), star_free, ac0, source, size
    )


def task_names() -> list[str]:
    """Every row name, in table order."""
    return [t.name for t in TASKS]


FAMILIES = ("huang", "chomsky")
"""The task families ``rasplab crasp table --family`` knows: Huang et al.'s Tables 2-3 (the
default) and Delétang et al.'s Chomsky-hierarchy benchmark (:mod:`rasplab.crasp.chomsky_verdicts`)."""


def family_tasks(family: str) -> list[str]:
    """The rows of ``family`` (one of :data:`FAMILIES`), in its table order.

    >>> family_tasks("chomsky")[:2], len(family_tasks("huang"))
    (['even_pairs', 'modular_arithmetic_simple'], 26)
    """
    if family == "huang":
        return task_names()
    if family == "chomsky":
        return chomsky_verdicts.task_names()
    raise unknown_name("task family", family, FAMILIES)


def _family_recorded(task: str, crasp_class: str) -> tuple[str, str, str] | None:
    """A recorded verdict of another family (the Chomsky-hierarchy tasks), if any."""
    return chomsky_verdicts.RECORDED.get((task, crasp_class))


def rows(tasks: list[str] | None = None) -> list[ExpressibilityRow]:
    """The rows of ``tasks`` (default: the 26 of the paper's tables): those in table order,
    then other registered tasks in the order given; unknown names are an error."""
    wanted = task_names() if not tasks else list(dict.fromkeys(tasks))
    infos = {t: _info(t) for t in wanted}  # raises on an unknown name before any work
    ordered = [t for t in task_names() if t in infos] + [t for t in wanted if t not in _INFO]
    return [row(t) for t in ordered]


__all__ = [
    "AGREEMENTS",
    "GUARANTEED_APE",
    "GUARANTEED_NOPE",
    "NOT_GUARANTEED",
    "PREDICTIONS",
    "RECORDED",
    "TASKS",
    "ExpressibilityRow",
    "TaskInfo",
    "Verdict",
    "agreement",
    "guarantees",
    "row",
    "rows",
    "task_names",
    "verdict",
]
