"""``rasplab report``: rebuild the tables and plots of a results store.

``runs.csv``, ``summary.md``/``summary.csv`` and the PNG plots, of every run, of one sweep
(``--sweep``) or of a sweep config's current grid (``--config``).
"""

from __future__ import annotations

from pathlib import Path

import typer

from rasplab.cli.options import DEFAULT_DB, grid_ids
from rasplab.cli.output import say


def report_command(
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
    out: str = typer.Option(None, "--out", help="output folder (default: next to the db)"),
    sweep: str = typer.Option(None, "--sweep", help="only the runs of this sweep"),
    config: str = typer.Option(
        None, "--config", help="only the runs of this sweep config's current grid"
    ),
) -> None:
    """Rebuild runs.csv, summary.md/csv and the PNG plots from the results database."""
    from rasplab.reports import build_report

    grid = None if config is None else grid_ids(config, db)
    report = build_report(db, out or Path(db).parent / "report", sweep=sweep, run_ids=grid)
    say(f"report of {report.runs} runs ({report.finished} finished) in {report.out_dir}:")
    for path in report.files:
        say(f"  {path}")
