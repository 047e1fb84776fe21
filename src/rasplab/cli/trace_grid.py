"""``rasplab trace-grid GRID --out DIR``: every (program, seed) of a grid file, trained with
trace supervision (resumable), then the mean and spread over seeds per program."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rasplab.cli.trace_supervise import _SET_OPTION, _overrides, trace_record


def trace_grid_command(
    grid_file: str = typer.Argument(..., metavar="GRID", help="YAML: runs and seeds."),
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder of the run folders."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    sets: list[str] = _SET_OPTION,
) -> None:
    """Run every (program, seed) of GRID into DIR/PROGRAM/seed=S, skipping the runs
    already there (run it again after a stop to go on); then the mean and spread over
    seeds of length <= 20, length > 20 and ones > 20 per program. --set overrides a config
    key of every run."""
    # start-up time: torch
    from rasplab.analysis.trace_grid import (
        METRICS,
        grid_summary,
        load_trace_grid,
        run_trace_grid,
    )

    grid = load_trace_grid(grid_file)
    overrides = _overrides(sets)

    def run_one(program: str, config: str | None, seed: int, folder: Path) -> dict:
        return trace_record(program, config, [*sets, f"seed={seed}"], str(folder))

    log = lambda text: print(text, file=sys.stderr)  # noqa: E731
    rows = run_trace_grid(grid, out, run_one, log, overrides)
    summary = grid_summary(rows)
    if as_json:
        print(json.dumps({"runs": rows, "summary": summary}))
        return
    for program, s in summary.items():
        cells = "  ".join(
            f"{m} {100 * s[m]['mean']:.1f} ± {100 * s[m]['std']:.1f}" for m in METRICS
        )
        print(f"{program:32} seeds {s['seeds']}  {cells}")
