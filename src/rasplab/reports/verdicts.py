"""Verdicts: does a task length-generalize under a variant, judged only once it was learned.

A failure to generalize means something only if the model fitted the training lengths: a run
that never reached 100% in distribution "fails" longer lengths for a reason that has nothing
to do with length. :func:`verdict` therefore judges a (task, variant) setting only when at
least ``min_fitted`` of its finished seeds fitted (default: 60% of them, i.e. 3 of 5, the
bar of seed 003's "average of 5 successful runs" scaled to the seeds run), and then reads
the fitted seeds' mean accuracy on the longer bins:

* ``generalizes``: at least ``good`` (90%) on every longer bin;
* ``partly``: at least ``good`` on the first longer bin only;
* ``fails``: below ``good`` on the first longer bin;
* ``not fitted``: too few fitted seeds — no verdict on generalization;
* ``not run``: no finished seeds.

The first (shortest) bin is taken as the in-distribution one, the others as longer ones.
The thresholds are rasplab's reading of Figure 1's green/red split, not the paper's numbers.

>>> from rasplab.reports.aggregate import Spread
>>> def group(fitted, n, accs):
...     s = {b: Spread(a, 0.0, a, a, fitted) for b, a in accs.items()}
...     return GroupSummary("t", "ape", "ape", "h", tuple(accs), tuple(range(n)),
...                         tuple(range(fitted)), s, s, None, {}, 0)
>>> verdict(group(5, 5, {"1-50": 1.0, "51-100": 0.97, "101-150": 0.95})).word
'generalizes'
>>> verdict(group(2, 5, {"1-50": 1.0, "51-100": 0.2})).word
'not fitted'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rasplab.reports.aggregate import GroupSummary, is_bin

GOOD = 0.9
FITTED_SHARE = 0.6


@dataclass(frozen=True)
class Verdict:
    """The verdict on one setting: the word, fitted/finished seeds, and why."""

    word: str
    fitted: int
    finished: int
    reason: str


def verdict(group: GroupSummary, good: float = GOOD, min_fitted: int | None = None) -> Verdict:
    """The :class:`Verdict` of one (task, setting) summary (see the module docstring)."""
    finished, fitted = len(group.seeds), len(group.fitted_seeds)
    need = min_fitted if min_fitted is not None else max(1, math.ceil(FITTED_SHARE * finished))
    if not finished:
        return Verdict("not run", 0, 0, "no finished seeds yet")
    if fitted < need:
        reason = f"{fitted}/{finished} seeds fitted the training lengths (needs {need})"
        return Verdict("not fitted", fitted, finished, reason)
    longer = [b for b in group.bins if is_bin(b)][1:]
    accs = [group.fitted[b].mean for b in longer if group.fitted.get(b) is not None]
    if not accs:
        return Verdict("not fitted", fitted, finished, "no longer bins were evaluated")
    shown = ", ".join(f"{b}: {100 * a:.1f}%" for b, a in zip(longer, accs))
    if all(a >= good for a in accs):
        word = "generalizes"
    elif accs[0] >= good:
        word = "partly"
    else:
        word = "fails"
    return Verdict(word, fitted, finished, f"fitted seeds' mean {shown}")


def verdict_markdown(groups: list[GroupSummary]) -> list[str]:
    """Markdown lines: one verdict table row per (task, setting)."""
    lines = [
        "## Verdicts",
        "",
        "A setting is judged only when enough seeds fitted the training lengths (60% of them,",
        f"3 of 5); then by the fitted seeds' mean on the longer bins (>= {100 * GOOD:.0f}%).",
        "",
        "| task | variant | verdict | fitted | why |",
        "|---|---|---|---|---|",
    ]
    for g in groups:
        v = verdict(g)
        lines.append(f"| {g.task} | {g.label} | {v.word} | {v.fitted}/{v.finished} | {v.reason} |")
    return [*lines, ""]
