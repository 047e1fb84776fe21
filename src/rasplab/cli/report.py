"""``rasplab report``: rebuild the tables and plots of a results store.

``runs.csv``, ``summary.md``/``summary.csv`` and the PNG plots, of every run, of one sweep
(``--sweep``) or of a sweep config's current grid (``--config``).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rasplab.cli.options import DEFAULT_DB, grid_ids
from rasplab.cli.output import say
from rasplab.files import atomic_write_text


def report_command(
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
    out: str = typer.Option(None, "--out", help="output folder (default: next to the db)"),
    sweep: str = typer.Option(None, "--sweep", help="only the runs of this sweep"),
    config: str = typer.Option(
        None, "--config", help="only the runs of this sweep config's current grid"
    ),
    chomsky: bool = typer.Option(
        False,
        "--chomsky-score",
        help="also write chomsky_score.md/.json: Delétang et al.'s score (per-token accuracy "
        "per length, averaged over 41-500) of each Chomsky-hierarchy run",
    ),
    paper_selection: bool = typer.Option(
        False,
        "--paper-selection",
        help="with --chomsky-score: per task and variant only the best run over seeds and "
        "learning rates (the paper's selection)",
    ),
) -> None:
    """Rebuild runs.csv, summary.md/csv and the PNG plots from the results database."""
    # start-up time: torch
    from rasplab.reports import build_report

    grid = None if config is None else grid_ids(config, db)
    report = build_report(db, out or Path(db).parent / "report", sweep=sweep, run_ids=grid)
    say(f"report of {report.runs} runs ({report.finished} finished) in {report.out_dir}:")
    for path in report.files:
        say(f"  {path}")
    if chomsky:
        _chomsky_score(db, Path(report.out_dir), grid, paper_selection)


def _chomsky_score(db: str, out_dir: Path, grid, selected: bool) -> None:
    """Write chomsky_score.md and .json (rasplab.reports.chomsky_score) into ``out_dir``."""
    # start-up time: torch
    from rasplab.reports.chomsky_score import markdown, select_best, store_scores

    scores = store_scores(db, grid)
    if selected:
        scores = select_best(scores)
    atomic_write_text(out_dir / "chomsky_score.md", markdown(scores, selected))
    records = json.dumps([s.to_json() for s in scores], indent=1)
    atomic_write_text(out_dir / "chomsky_score.json", records + "\n")
    say(f"  {out_dir / 'chomsky_score.md'} ({len(scores)} runs)")
    say(f"  {out_dir / 'chomsky_score.json'}")
