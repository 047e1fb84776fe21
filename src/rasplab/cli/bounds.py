"""``rasplab bounds figure | margin``: the quantitative length bound (seed 004).

``figure 1|2|3 [--quick] [--db PATH] [--out DIR] [--epsilon E] [--batch-runs K] [--json]``
runs (or resumes) the figure's sweep (up to K runs trained as one stacked group, by default
the seeds of one setting) (``configs/bounds_fig{n}[_quick].yaml``) and writes ``fig{n}.png``,
``fig{n}.md`` and ``fig{n}.json`` under ``--out``; ``--json`` prints the summary
(``figure``, ``slope``, ``intercept``, ``r2``, ``points``, ...); figures 1 and 2 also write the
fit (or why there is none: fewer than two x values reaching ε) as one line on stderr.
``margin RUN_DIR`` prints γ, L, Δ, τ and Theorem 4.1's N for a finished one-layer run.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import typer


def figure_command(
    figure: int = typer.Argument(..., metavar="1|2|3", help="Seed 004 figure number."),
    quick: bool = typer.Option(
        False, "--quick", help="The small subset (<= 10 minutes on 2 cores)."
    ),
    db: str = typer.Option(
        None, "--db", metavar="PATH", help="Results store (default OUT/bounds.sqlite)."
    ),
    out: str = typer.Option(
        "runs/bounds", "--out", metavar="DIR", help="Where the PNG, markdown and JSON go."
    ),
    epsilon: float = typer.Option(1e-2, "--epsilon", metavar="E", help="Target test MSE for N(ε)."),
    config: str = typer.Option(None, "--config", metavar="YAML", help="Another sweep config."),
    workers: int = typer.Option(None, "--workers", metavar="N", help="Worker processes."),
    batch_runs: int = typer.Option(
        None,
        "--batch-runs",
        metavar="K",
        help="Train up to K runs as one stacked group (default: the seeds of a setting; 1: alone).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON summary on stdout."),
) -> None:
    """Run the figure's sweep and write its PNG, markdown table and JSON summary."""
    # start-up time: torch
    from rasplab.analysis.bounds.experiments import check_figure, fit_text, make_figure

    check_figure(figure)
    db_path = db if db is not None else str(Path(out) / "bounds.sqlite")
    summary = make_figure(
        figure, quick, db_path, out, epsilon, workers, not as_json, config, batch_runs
    )
    if figure != 3:  # the fit in one line on stderr, or why there is none
        print(fit_text(summary), file=sys.stderr)
    if as_json:
        print(json.dumps(_finite(summary)))
    else:
        print(f"figure {figure}: wrote {out}/fig{figure}.png, .md, .json", file=sys.stderr)


def margin_command(
    run_dir: str = typer.Argument(..., metavar="RUN_DIR", help="A finished run folder."),
    epsilon: float = typer.Option(1e-2, "--epsilon", metavar="E", help="Target error ε."),
    precision_bits: float = typer.Option(
        24.0, "--precision-bits", metavar="P", help="Bits p of the hardmax term."
    ),
    constant: float = typer.Option(1.0, "--constant", metavar="C", help="The O() constant C."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Theorem 4.1's quantities for the model of RUN_DIR (its whole position table)."""
    # start-up time: torch
    from rasplab.analysis.bounds.experiments import run_bound

    q = run_bound(run_dir, epsilon, precision_bits, constant)
    if as_json:
        print(json.dumps(_finite(q)))
        return
    for key in ("gamma", "L", "delta", "tau", "predicted_N", "log2_predicted_N"):
        print(f"{key:18} {q[key]}")


def _finite(data):
    """JSON-safe: infinities become None, recursively."""
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_finite(v) for v in data]
    return None if isinstance(data, float) and math.isinf(data) else data
