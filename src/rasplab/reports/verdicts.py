"""Verdicts: does a task length-generalize under a variant, judged only once it was learned.

A failure to generalize means something only if the model fitted the training lengths: a run
that never reached 100% in distribution "fails" longer lengths for a reason that has nothing
to do with length. :func:`verdict` therefore judges a (task, variant) setting only when at
least ``min_fitted`` of its seeds fitted (default: 60% of the seeds in the store, finished
or not, i.e. 3 of 5, the bar of seed 003's "average of 5 successful runs" scaled to the
seeds run), and then reads the fitted seeds' mean accuracy on the longer bins:

* ``generalizes``: at least ``good`` (90%) on every longer bin;
* ``partly``: at least ``good`` on the first longer bin only;
* ``fails``: below ``good`` on the first longer bin;
* ``unfinished``: too few fitted seeds yet, but enough seeds still to finish (pending,
  running or failed) to reach the bar — no verdict until they do;
* ``not fitted``: too few fitted seeds, even if every unfinished one fitted — no verdict
  on generalization;
* ``not run``: no finished seeds.

A verdict reached while some seeds are unfinished says so in its reason ("4 of 5 seeds
finished"), so a partly run sweep's report never reads as the whole one's.

The first (shortest) bin is taken as the in-distribution one, the others as longer ones.
The thresholds are rasplab's reading of Figure 1's green/red split, not the paper's numbers.

**Beside the C-RASP prediction.** Huang et al., "A formal framework for understanding length
generalization in transformers", give Figure 1's per-bin accuracies only as a plot, so the
report quotes no paper numbers; it shows instead, for the tasks of the paper's Tables 2 and 3
(:mod:`rasplab.crasp.expressibility`; "–" for any other task), the prediction
("guaranteed (NoPE)", "guaranteed (APE)", "not guaranteed") and how the verdict stands
against it (:func:`as_predicted`, by :func:`rasplab.crasp.expressibility.agreement`). The
setting's encoding is its runs' resolved ``model.pe`` (so the variant ``ape_reg``, APE +
regularizer, counts as APE): with ``ape`` length generalization is guaranteed under either
"guaranteed" prediction, with ``nope`` only under "guaranteed (NoPE)"; there the verdict is
"yes" or "no"; where nothing is guaranteed a failure is "consistent" and a success "no
prediction" (the theory does not rule it out). Only "generalizes" counts as
generalizing: "partly" (a drop on a later longer bin) is a failure to length-generalize, as
is "fails". "unfinished", "not fitted" and "not run" give "no verdict"; another encoding
(RoPE, ALiBi, ...), a task outside the tables or a prediction "not known" give "–". The
verdicts' fitted bar (100% in distribution, 3 of 5 seeds) is stricter than ``rasplab crasp
table``'s (90%, one seed), so the two can differ on the same store.

>>> from rasplab.reports.aggregate import Spread
>>> def group(fitted, n, accs, unfinished=0):
...     s = {b: Spread(a, 0.0, a, a, fitted) for b, a in accs.items()}
...     return GroupSummary("t", "ape", "ape", "h", tuple(accs), tuple(range(n)),
...                         tuple(range(fitted)), s, s, None, {}, unfinished)
>>> verdict(group(5, 5, {"1-50": 1.0, "51-100": 0.97, "101-150": 0.95})).word
'generalizes'
>>> verdict(group(2, 5, {"1-50": 1.0, "51-100": 0.2})).word
'not fitted'
>>> verdict(group(1, 1, {"1-50": 1.0, "51-100": 0.2}, unfinished=4)).reason
'1 of 5 seeds finished, 1 fitted (needs 3)'
>>> as_predicted("guaranteed (APE)", "ape", "generalizes")
'yes'
>>> as_predicted("guaranteed (APE)", "nope", "partly")
'consistent'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rasplab.bins import is_bin
from rasplab.crasp.expressibility import NOT_KNOWN, PERIODIC_LOCAL, PLAIN, PREDICTIONS, agreement
from rasplab.reports.aggregate import GroupSummary

if TYPE_CHECKING:
    from rasplab.crasp.expressibility import ExpressibilityRow

GOOD = 0.9
FITTED_SHARE = 0.6
NONE = "–"
JUDGED = ("generalizes", "partly", "fails")
"""Verdict words that judge generalization ("unfinished", "not fitted", "not run" do not)."""
PREDICTED_ENCODINGS = ("ape", "nope")
"""The ``model.pe`` values the C-RASP prediction speaks about."""


@dataclass(frozen=True)
class Verdict:
    """The verdict on one setting: the word, fitted/finished seeds, and why."""

    word: str
    fitted: int
    finished: int
    reason: str


def verdict(group: GroupSummary, good: float = GOOD, min_fitted: int | None = None) -> Verdict:
    """The :class:`Verdict` of one (task, setting) summary (see the module docstring)."""
    finished, fitted, waiting = len(group.seeds), len(group.fitted_seeds), group.unfinished
    planned = finished + waiting
    need = min_fitted if min_fitted is not None else max(1, math.ceil(FITTED_SHARE * planned))
    if not finished:
        return Verdict("not run", 0, 0, "no finished seeds yet")
    of_planned = f"{finished} of {planned} seeds finished"
    if fitted < need:
        if fitted + waiting >= need:
            reason = f"{of_planned}, {fitted} fitted (needs {need})"
            return Verdict("unfinished", fitted, finished, reason)
        reason = f"{fitted}/{finished} seeds fitted the training lengths (needs {need})"
        if waiting:
            reason += f"; {of_planned}"
        return Verdict("not fitted", fitted, finished, reason)
    longer = [b for b in group.bins if is_bin(b)][1:]
    accs = [group.fitted[b].mean for b in longer if group.fitted.get(b) is not None]
    if not accs:
        return Verdict("not fitted", fitted, finished, "no longer bins were evaluated")
    shown = ", ".join(f"{b}: {100 * a:.1f}%" for b, a in zip(longer, accs))
    if waiting:
        shown += f" ({of_planned})"
    if all(a >= good for a in accs):
        word = "generalizes"
    elif accs[0] >= good:
        word = "partly"
    else:
        word = "fails"
    return Verdict(word, fitted, finished, f"fitted seeds' mean {shown}")


def crasp_row(task: str) -> ExpressibilityRow | None:
    """The C-RASP expressibility row measured by ``task`` (None for a task outside the
    paper's Tables 2 and 3).

    >>> crasp_row("tomita4").prediction, crasp_row("rasp_sort")
    ('guaranteed (APE)', None)
    """
    from rasplab.crasp import expressibility  # pure data; imported only when a report is made

    if task not in {t.measured_task for t in expressibility.TASKS if t.measured_task}:
        return None
    return expressibility.row(task)


def as_predicted(prediction: str, pe: str | None, word: str) -> str:
    """How verdict ``word`` of a setting with encoding ``pe`` stands against
    ``prediction``: "yes" / "no" (guaranteed), "consistent" / "no prediction" (not
    guaranteed; failed / generalized), "no verdict" (not fitted / not run) or "–" (no
    prediction for this task or encoding). See the module docstring for the rule."""
    if prediction not in PREDICTIONS or prediction == NOT_KNOWN or pe not in PREDICTED_ENCODINGS:
        return NONE
    if word not in JUDGED:
        return "no verdict"
    return agreement(prediction, pe, word == "generalizes")


def crasp_summary(task: str) -> str | None:
    """One line on ``task``'s C-RASP prediction and the two verdicts it rests on (None for
    a task outside the tables).

    >>> print(crasp_summary("parity"))
    C-RASP prediction: not guaranteed (C-RASP[]: no (Lemma 41); C-RASP[periodic,local]: no (Lemma 41)).
    """
    row = crasp_row(task)
    if row is None:
        return None
    return (
        f"C-RASP prediction: {row.prediction} ({PLAIN}: {row.crasp.text()}; "
        f"{PERIODIC_LOCAL}: {row.crasp_periodic_local.text()})."
    )


def verdict_markdown(groups: list[GroupSummary]) -> list[str]:
    """Markdown lines: one verdict table row per (task, setting), with the C-RASP prediction
    and whether the verdict matches it."""
    lines = [
        "## Verdicts",
        "",
        "A setting is judged only when enough seeds fitted the training lengths (60% of them,",
        f"3 of 5); then by the fitted seeds' mean on the longer bins (>= {100 * GOOD:.0f}%).",
        '"unfinished": too few fitted yet, with enough seeds still to finish to reach the bar.',
        "",
        'Huang et al. ("A formal framework for understanding length generalization in',
        'transformers") give the per-bin accuracies of their Figure 1 only as a plot, so this',
        "report quotes no paper numbers; it shows instead their C-RASP prediction for the tasks",
        'of their Tables 2 and 3 ("–" for other tasks). **as predicted?** reads the `model.pe`',
        "of the setting: with `ape` length generalization is guaranteed under either",
        '"guaranteed" prediction, with `nope` only under "guaranteed (NoPE)"; there the verdict',
        'is "yes" or "no". Where nothing is guaranteed a failure is "consistent" and a success',
        '"no prediction" (the theory does not rule it out). Only "generalizes" counts as',
        'generalizing ("partly" does not); "unfinished", "not fitted", "not run" give "no',
        'verdict"; other encodings "–".',
        "",
        "| task | variant | verdict | fitted | why | C-RASP prediction | as predicted? |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = {t: crasp_row(t) for t in {g.task for g in groups}}
    for g in groups:
        v = verdict(g)
        row = rows[g.task]
        prediction = row.prediction if row is not None else NONE
        lines.append(
            f"| {g.task} | {g.label} | {v.word} | {v.fitted}/{v.finished} | {v.reason} "
            f"| {prediction} | {as_predicted(prediction, g.pe, v.word)} |"
        )
    return [*lines, ""]
