"""The C-RASP table: for every task, what the theory predicts and what training measured.

:func:`build_table` reads top to bottom as its steps:

1. the expressibility rows (:mod:`rasplab.crasp.expressibility`: C-RASP verdicts with
   programs or citations, star-free and AC0 computed from the automata, dot-depth cited, the
   prediction "guaranteed (NoPE)" / "guaranteed (APE)" / "not guaranteed");
2. with a results store, the measurements per task and encoding
   (:mod:`rasplab.reports.crasp_table.measure`: per-bin means over all and over fitted seeds, and whether
   the encoding generalizes at the given threshold); the encodings are APE and NoPE, and a
   third, APE+reg (APE trained with the positional penalty ``train.pe_penalty > 0``), only
   when the store holds such runs for the table's tasks;
3. the comparison, only where the theory speaks: length generalization is guaranteed for APE
   when the prediction is "guaranteed (NoPE)" or "guaranteed (APE)", for NoPE only when it is
   "guaranteed (NoPE)"; APE+reg is predicted as APE: Theorem 7 of Huang et al. is about APE
   trained under an idealized procedure (Definition 6) that fits the training lengths while
   minimizing a regularizer, and the penalty is that regularizer's positional term (8) made
   a training loss, so the prediction is the same and APE+reg is the closer of the two runs to
   the theorem's setting. A guaranteed encoding agrees ("yes") or not ("no"); an unguaranteed
   one is not scored: "consistent" when it failed, "no prediction" when it generalized
   (:func:`rasplab.crasp.expressibility.agreement`). An encoding with no fitted seed is
   "inconclusive", one without runs "not measured". A row disagrees when any encoding
   disagrees, agrees when every guaranteed encoding agrees (at least one), and when nothing is
   guaranteed it is "consistent" if every measured encoding failed.

:func:`write_table` renders Markdown, CSV and a PNG figure (:mod:`rasplab.reports.crasp_table.text`,
:mod:`rasplab.reports.crasp_table.plot`) in memory first and then writes each file atomically.

>>> t = build_table(tasks=["tomita4"])
>>> r = t.rows[0]
>>> r.row.prediction, r.expected("APE"), r.expected("APE+reg"), r.expected("NoPE")
('guaranteed (APE)', True, True, False)
>>> r.agreement("APE"), t.encodings
('not measured', ('APE', 'NoPE'))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rasplab.crasp.expressibility import ExpressibilityRow, agreement, guarantees, rows
from rasplab.errors import RasplabError
from rasplab.files import (
    atomic_write_bytes,
    atomic_write_text,
    check_output_folder,
    make_output_folder,
)
from rasplab.reports.crasp_table.ladder import generalizing, ladder, scores_of, trend_text
from rasplab.reports.crasp_table.measure import REGULARIZED, Measurement, check_threshold, measure

ENCODING_NAMES = ("APE", "NoPE")
"""The encodings of every measured table."""

WITH_REGULARIZED = (*ENCODING_NAMES, REGULARIZED)
"""The encodings of a table whose store holds APE+reg runs: ("APE", "NoPE", "APE+reg")."""


@dataclass(frozen=True)
class TableRow:
    """One task: its expressibility row and, when a store was read, its measurements."""

    row: ExpressibilityRow
    measurements: dict = field(default_factory=dict)  # "APE" | "NoPE" | "APE+reg" -> Measurement
    encodings: tuple = ENCODING_NAMES  # the table's encoding columns
    ladders: dict = field(default_factory=dict)  # encoding -> {rung: Measurement} (ladder)

    def trend(self, encoding: str) -> str:
        """The budget ladder's trend for ``encoding`` with its numbers
        (:mod:`rasplab.reports.crasp_table.ladder`), or ``not measured``."""
        rungs = self.ladders.get(encoding, {})
        return trend_text(scores_of(rungs), generalizing(rungs))

    def expected(self, encoding: str) -> bool | None:
        """Whether the prediction guarantees that ``encoding`` length-generalizes on this task:
        True, False (no guarantee: the theory says nothing) or None (no prediction). APE+reg
        is predicted as APE (Theorem 7 idealizes the regularizer)."""
        return guarantees(self.row.prediction, encoding)

    def measurement(self, encoding: str) -> Measurement | None:
        """The measurement of ``encoding``, None when the store has no run of it."""
        return self.measurements.get(encoding)

    def agreement(self, encoding: str) -> str:
        """``"yes"``/``"no"`` (guaranteed; did / did not generalize), ``"consistent"`` /
        ``"no prediction"`` (not guaranteed; failed / generalized), ``"inconclusive"`` (no
        fitted seed, no longer bins, or no prediction) or ``"not measured"``."""
        m = self.measurement(encoding)
        if m is None or not m.seeds:
            return "not measured"
        if m.status not in ("generalizes", "does not generalize"):
            return "inconclusive"
        out = agreement(self.row.prediction, encoding, m.status == "generalizes")
        return "inconclusive" if out is None else out

    @property
    def agree(self) -> str:
        """The row's agreement: "no" if a guaranteed encoding disagrees, "yes" if every
        guaranteed encoding agrees (at least one is guaranteed), "consistent" if nothing is
        guaranteed and every measured encoding failed, "no prediction" if nothing is
        guaranteed and one generalized; "not measured" if none was measured, else
        "inconclusive"."""
        each = [self.agreement(e) for e in self.encodings]
        scored = [a for e, a in zip(self.encodings, each) if self.expected(e)]
        if "no" in each:
            return "no"
        if scored and all(a == "yes" for a in scored):
            return "yes"
        if all(a == "not measured" for a in each):
            return "not measured"
        if not scored and self.expected(self.encodings[0]) is False:
            measured = [a for a in each if a != "not measured"]
            if measured and all(a == "consistent" for a in measured):
                return "consistent"
            if "no prediction" in measured and "inconclusive" not in measured:
                return "no prediction"
        return "inconclusive"


@dataclass(frozen=True)
class CraspTable:
    """The table's rows and how it was made (store, config, threshold, encoding columns)."""

    rows: list
    threshold: float
    db: str | None = None
    config: str | None = None
    encodings: tuple = ENCODING_NAMES
    ladder: str | None = None  # the budget-ladder store, when one was read

    @property
    def measured(self) -> bool:
        """Whether a results store was read."""
        return self.db is not None

    def tally(self) -> dict:
        """How many rows agree, disagree, are consistent (nothing guaranteed, every measured
        encoding failed), have no prediction, are inconclusive or not measured."""
        out = {"yes": 0, "no": 0, "consistent": 0, "no prediction": 0}
        out |= {"inconclusive": 0, "not measured": 0}
        for r in self.rows:
            out[r.agree] += 1
        return out


def build_table(
    db: str | Path | None = None,
    config: str | Path | None = None,
    tasks: list[str] | None = None,
    threshold: float = 0.9,
    ladder_db: str | Path | None = None,
) -> CraspTable:
    """The table for ``tasks`` (default: all 26 rows); measured from ``db`` when given; with
    a budget-ladder store ``ladder_db``, each row also gets a trend per encoding."""
    check_threshold(threshold)
    if config is not None and db is None:
        raise RasplabError("--config selects runs of a results store; give --db RESULTS too")
    expressibility = rows(tasks)
    measured = {}
    if db is not None:
        names = [r.info.measured_task for r in expressibility if r.info.measured_task]
        measured = measure(db, config=config, tasks=names, threshold=threshold)
    ladders: dict = {}
    if ladder_db is not None:
        names = [r.info.measured_task for r in expressibility if r.info.measured_task]
        ladders = ladder(ladder_db, names, threshold)
    regularized = any(e == REGULARIZED for _, e in (*measured, *ladders))
    encodings = WITH_REGULARIZED if regularized else ENCODING_NAMES
    table_rows = [
        TableRow(
            r,
            {
                e: measured[(r.info.measured_task, e)]
                for e in encodings
                if (r.info.measured_task, e) in measured
            },
            encodings,
            {
                e: ladders[(r.info.measured_task, e)]
                for e in encodings
                if (r.info.measured_task, e) in ladders
            },
        )
        for r in expressibility
    ]
    return CraspTable(
        table_rows,
        threshold,
        None if db is None else str(db),
        None if config is None else str(config),
        encodings,
        None if ladder_db is None else str(ladder_db),
    )


def write_table(table: CraspTable, out_dir: str | Path) -> list[Path]:
    """Write ``crasp_table.md``, ``crasp_table.csv`` and ``crasp_table.png`` into ``out_dir``
    (everything rendered before the first file is written; each file written atomically)."""
    # import cycle: plot and text import this module (plot also loads matplotlib)
    from rasplab.reports.crasp_table.plot import table_figure_png
    from rasplab.reports.crasp_table.text import csv_text, markdown

    names = ("crasp_table.md", "crasp_table.csv", "crasp_table.png")
    out = check_output_folder(out_dir, names)  # a file, FIFO or device in the way: refused
    rendered = {
        out / "crasp_table.md": markdown(table),
        out / "crasp_table.csv": csv_text(table),
        out / "crasp_table.png": table_figure_png(table),
    }
    make_output_folder(out)
    check_output_folder(out, names)
    for path, content in rendered.items():
        if isinstance(content, bytes):
            atomic_write_bytes(path, content)
        else:
            atomic_write_text(path, content)
    return list(rendered)


__all__ = [
    "ENCODING_NAMES",
    "WITH_REGULARIZED",
    "CraspTable",
    "TableRow",
    "build_table",
    "write_table",
]
