"""``rasplab sweep CONFIG``: run a sweep config's grid of runs (resumable), then report it.

Finished runs are never repeated; ``--only KEY=V1,V2`` narrows the grid, ``--batch-runs K``
trains up to K compatible runs as one stacked group. The report (``summary.md`` and plots) of
the grid's runs is rebuilt at the end; a failed run makes the exit code 1.
"""

from __future__ import annotations

from pathlib import Path

import typer

from rasplab.cli.options import DEFAULT_DB, grid_ids, parse_only
from rasplab.cli.output import say

_ONLY = typer.Option(
    None, "--only", metavar="KEY=V1,V2", help="run only these grid values (repeatable)"
)


def sweep_command(
    config: str = typer.Argument(..., help="sweep YAML config"),
    backend: str = typer.Option("local", "--backend", help="local | ray"),
    address: str = typer.Option(None, "--address", help="Ray cluster address (ray backend)"),
    workers: int = typer.Option(None, "--workers", help="parallel runs (default: CPUs)"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
    out: str = typer.Option(None, "--out", help="report folder (default: next to the db)"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="progress bar"),
    only: list[str] = _ONLY,
    batch_runs: int = typer.Option(
        1, "--batch-runs", help="train up to K compatible runs as one stacked group"
    ),
    threads_per_run: int = typer.Option(
        None,
        "--threads-per-run",
        metavar="N",
        help="CPU threads of each run (default: train.threads, else CPUs / workers)",
    ),
) -> None:
    """Run a grid of runs (resumable: finished runs are never repeated), then report."""
    # start-up time: torch
    from rasplab.harness import run_sweep
    from rasplab.reports import build_report

    summary = run_sweep(
        config,
        db,
        workers=workers,
        backend=backend,
        address=address,
        progress=progress,
        only=parse_only(only),
        batch_runs=batch_runs,
        threads_per_run=threads_per_run,
    )
    report = build_report(
        db, out or Path(db).parent / "report", sweep=summary.name, run_ids=grid_ids(config, db)
    )
    say(
        f"sweep {summary.name}: {summary.total} runs, {summary.skipped} already done, "
        f"{summary.executed} executed, {summary.failed} failed"
    )
    say(f"results: {db}; run folders: {summary.runs_dir}; report: {report.out_dir}/summary.md")
    if summary.failed:
        raise typer.Exit(1)
