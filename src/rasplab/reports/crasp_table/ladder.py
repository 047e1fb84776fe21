"""The budget ladder: does a disagreeing row's longer-bin accuracy rise with the training budget?

A ladder store holds runs of one task and encoding at several budgets ("rungs"), named by
the suffix of their variant: ``x1``, ``x2``, ``x4`` (training steps times 1, 2, 4 of a grid's
count) and ``w2`` (width times 2 at ``x1`` steps), e.g. variant ``ape_reg_x4``
(``configs/probes/fig1_ladder_cpu.yaml``). The encoding is read from the stored resolved
config (:func:`~rasplab.reports.crasp_table.measure.encoding_of`), never from the name.

Per rung, the *score* is the mean over seeds of the mean accuracy on the longer bins (those
outside the training lengths), over the seeds that every rung of the (task, encoding) has
finished, so that the rungs are compared on the same seeds (a partly run ladder compares
fewer seeds, never different ones). The **trend** compares the step rungs: ``rising``
when the score at the largest step rung is at least :data:`TREND_MARGIN` above ``x1``'s,
``falling`` when at least that much below, ``flat`` otherwise; ``not measured`` without at
least two step rungs. Rising is what under-training predicts; flat or falling at every budget
tried is evidence against it (within the budgets tried, never proof), unless the encoding
already generalizes there: the trend's text also names the rungs at which it generalizes by
the table's own rule (:func:`generalizing`), so that a ladder flat at 100% is not read as a
ladder flat at failure.

>>> rungs = {"x1": 0.52, "x2": 0.60, "x4": 0.71, "w2": 0.55}
>>> trend_word(rungs), trend_text(rungs)
('rising', 'rising (x1 52.0, x2 60.0, x4 71.0; w2 55.0)')
>>> trend_text({"x1": 1.0, "x2": 0.92, "x4": 1.0}, ("x1", "x4"))
'flat (x1 100.0, x2 92.0, x4 100.0; generalizes at x1, x4)'
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from rasplab.harness.store import ResultsStore
from rasplab.reports.crasp_table.measure import Measurement, encoding_of, summarize_runs

STEP_RUNGS = ("x1", "x2", "x4")
RUNGS = (*STEP_RUNGS, "w2")
TREND_MARGIN = 0.05
"""Score difference (5 points of accuracy) between the largest and the first step rung that
counts as rising or falling: rasplab's choice, about the seed-to-seed spread of 3 seeds."""


def rung_of(variant: str) -> str | None:
    """The rung a variant name ends with (``ape_reg_x4`` -> ``x4``), or None.

    >>> rung_of("ape_reg_x4"), rung_of("nope_w2"), rung_of("ape")
    ('x4', 'w2', None)
    """
    suffix = variant.rsplit("_", 1)[-1]
    return suffix if "_" in variant and suffix in RUNGS else None


def score(m: Measurement) -> float | None:
    """Mean over all finished seeds of the mean longer-bin accuracy (None: no longer bin)."""
    values = [m.all[b] for b in m.ood_bins if b in m.all]
    return sum(values) / len(values) if values else None


def trend_word(scores: dict[str, float]) -> str:
    """``rising``, ``flat``, ``falling`` or ``not measured`` from per-rung scores."""
    steps = [r for r in STEP_RUNGS if r in scores]
    if len(steps) < 2:
        return "not measured"
    delta = scores[steps[-1]] - scores[steps[0]]
    if delta >= TREND_MARGIN:
        return "rising"
    return "falling" if delta <= -TREND_MARGIN else "flat"


def trend_text(scores: dict[str, float], generalizes: tuple[str, ...] = ()) -> str:
    """The trend with the ladder's numbers (percent), e.g. ``flat (x1 80.0, x2 81.5, ...)``,
    and the rungs ``generalizes`` names (see :func:`generalizing`)."""
    word = trend_word(scores)
    if not scores:
        return word
    parts = [", ".join(f"{r} {100 * scores[r]:.1f}" for r in STEP_RUNGS if r in scores)]
    parts += [f"{r} {100 * scores[r]:.1f}" for r in RUNGS[3:] if r in scores]
    parts += [generalizes_text(generalizes)]
    return f"{word} ({'; '.join(p for p in parts if p)})"


def generalizes_text(rungs: tuple[str, ...]) -> str:
    """``generalizes at x1, x4`` for the rungs :func:`generalizing` names, or ``""``."""
    return f"generalizes at {', '.join(rungs)}" if rungs else ""


def generalizing(rungs: dict[str, Measurement]) -> tuple[str, ...]:
    """The rungs at which the encoding generalizes by the table's rule
    (:attr:`Measurement.status`: a seed fitted, and the fitted seeds' mean is at least the
    threshold on every longer bin), in rung order."""
    return tuple(r for r in RUNGS if r in rungs and rungs[r].status == "generalizes")


def ladder(
    db: str | Path, tasks: list[str] | None = None, threshold: float = 0.9
) -> dict[tuple[str, str], dict[str, Measurement]]:
    """``{(task, encoding): {rung: Measurement}}`` for the ladder runs in ``db`` (runs whose
    variant names no rung are left out)."""
    with ResultsStore(db, create=False) as store:
        records = store.runs()
    groups: dict = defaultdict(list)
    for r in records:
        encoding, rung = encoding_of(r.config), rung_of(r.variant)
        if encoding is None or rung is None or (tasks is not None and r.task not in tasks):
            continue
        groups[(r.task, encoding, rung)].append(r)
    done: dict = defaultdict(list)  # (task, encoding) -> the finished seeds of each rung
    for (task, encoding, _), runs in groups.items():
        done[(task, encoding)].append({r.seed for r in runs if r.status == "done" and r.metrics})
    out: dict = defaultdict(dict)
    for (task, encoding, rung), runs in sorted(groups.items()):
        seeds = set.intersection(*[x for x in done[(task, encoding)] if x] or [set()])
        kept = [r for r in runs if r.seed in seeds]
        out[(task, encoding)][rung] = summarize_runs(task, encoding, kept, threshold)
    return dict(out)


def scores_of(rungs: dict[str, Measurement]) -> dict[str, float]:
    """Per rung, its :func:`score` (rungs without a finished run or longer bin left out)."""
    out = {}
    for rung in RUNGS:
        m = rungs.get(rung)
        s = None if m is None or not m.seeds else score(m)
        if s is not None:
            out[rung] = s
    return out


__all__ = [
    "RUNGS",
    "STEP_RUNGS",
    "TREND_MARGIN",
    "generalizes_text",
    "generalizing",
    "ladder",
    "rung_of",
    "score",
    "scores_of",
    "trend_text",
    "trend_word",
]
