"""Reports rebuilt from the results store: tables (CSV, Markdown) and plots (PNG).

:func:`build_report` reads a results database and writes ``runs.csv``, ``summary.csv``,
``summary.md``, ``accuracy_by_bin.png``, ``accuracy_table.png`` and ``training_curves.png``;
for runs sliced by ``eval.slices`` also ``slices.csv`` and ``accuracy_by_slice.png``
(:mod:`rasplab.reports.slices`).
Everything is computed before the first file is written, and each file is written atomically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rasplab.errors import RasplabError
from rasplab.files import atomic_write_text
from rasplab.harness.store import ResultsStore
from rasplab.reports import slices, tables
from rasplab.reports.aggregate import GroupSummary, Spread, spread, summarize


@dataclass
class Report:
    """What :func:`build_report` wrote: the output folder and the files in it."""

    out_dir: str
    files: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    runs: int = 0
    finished: int = 0


def build_report(
    db: str | Path,
    out_dir: str | Path,
    sweep: str | None = None,
    run_ids: set[str] | None = None,
) -> Report:
    """Rebuild the tables and plots of the runs in ``db`` into ``out_dir``.

    ``sweep`` keeps the runs stored under that sweep name; ``run_ids`` keeps only those runs
    (a sweep config's current grid, so that runs of an earlier version of the config, still
    in the database, do not mix into its tables).
    """
    from rasplab.reports import plots  # start-up time: matplotlib loads only to draw plots

    with ResultsStore(db, create=False) as store:
        records = store.runs(sweep=sweep)
        if sweep is not None and not records:
            known = sorted({r.sweep for r in store.runs() if r.sweep})
            raise RasplabError(
                f"results database {str(db)!r} has no sweep {sweep!r}; "
                + (f"choose one of: {', '.join(known)}" if known else "it holds no sweeps")
            )
    if run_ids is not None:
        records = [r for r in records if r.run_id in run_ids]
    groups = summarize(records)
    finished = [g for g in groups if g.seeds]
    out = Path(out_dir)
    figures = {}
    if finished:
        figures["accuracy_by_bin.png"] = plots.accuracy_by_bin_figure(finished, records)
        figures["accuracy_table.png"] = plots.accuracy_table_figure(finished)
    if any(r.curves for r in records):
        figures["training_curves.png"] = plots.training_curves_figure(records)
    sliced = finished and slices.slice_names(records)
    if sliced:
        figures["accuracy_by_slice.png"] = slices.accuracy_by_slice_figure(finished, records)
    texts = {
        "runs.csv": tables.runs_csv(records),
        "summary.csv": tables.summary_csv(finished),
        "summary.md": tables.summary_markdown(groups, records, str(db), list(figures)),
    }
    if sliced:
        texts["slices.csv"] = slices.slices_csv(records)
    written: list[str] = []
    created = [p for p in (out, *out.parents) if not p.exists()]  # removed again on failure
    try:
        for name, text in texts.items():
            atomic_write_text(out / name, text)
            written.append(str(out / name))
        for name, fig in figures.items():
            plots.save_figure(fig, out / name)
            written.append(str(out / name))
    except OSError as err:
        _undo(written if created else [], created)
        why = (
            "a file is in the way"
            if isinstance(err, (FileExistsError, NotADirectoryError))
            else None
        )
        raise RasplabError(
            f"cannot write the report to {str(out)!r}: {why or err.strerror or err}"
        ) from err
    return Report(
        out_dir=str(out),
        files=written,
        groups=groups,
        runs=len(records),
        finished=sum(r.status == "done" for r in records),
    )


def _undo(files: list[str], directories: list[Path]) -> None:
    """Remove what a failed report wrote into folders it created (innermost folder first)."""
    for name in files:
        Path(name).unlink(missing_ok=True)
    for path in directories:
        try:
            path.rmdir()
        except OSError:
            return


__all__ = ["GroupSummary", "Report", "Spread", "build_report", "spread", "summarize"]
