"""``rasplab crasp table``: the C-RASP expressibility table, its predictions and (with a
results store) how they compare with measured length generalization.

Without ``--out`` the Markdown table goes to stdout (``--json``: one object per task);
``--out DIR`` writes ``crasp_table.md``, ``crasp_table.csv`` and ``crasp_table.png`` there.
Bad input (a missing results database, an unknown task, a bad sweep config or threshold)
is one line on stderr and exit 2, and nothing is written.
"""

from __future__ import annotations

import json
import sys

import typer

_TASKS = typer.Option(None, "--task", metavar="T", help="Only this task (repeatable).")


def table_command(
    db: str = typer.Option(
        None, "--db", metavar="RESULTS", help="Results store (SQLite) to compare with."
    ),
    config: str = typer.Option(
        None, "--config", metavar="CONFIG", help="Only the runs of this sweep config's grid."
    ),
    out: str = typer.Option(
        None, "--out", metavar="DIR", help="Write crasp_table.md/.csv/.png into DIR."
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per task."),
    tasks: list[str] = _TASKS,
    family: str = typer.Option(
        None,
        "--family",
        metavar="F",
        help="The rows of a task family: huang (Tables 2-3, the default) or chomsky "
        "(Delétang et al.).",
    ),
    threshold: float = typer.Option(
        0.9,
        "--threshold",
        metavar="X",
        help="Accuracy for 'fitted' (in-distribution) and 'generalizes' (longer bins).",
    ),
    ladder: str = typer.Option(
        None,
        "--ladder",
        metavar="RESULTS",
        help="A budget-ladder store (variants ending _x1/_x2/_x4/_w2): adds a trend per encoding.",
    ),
) -> None:
    """Expressibility table (Tables 2-3), predictions, and measured APE/NoPE accuracy.

    One row per task: C-RASP programs or the paper's 'no', star-free, AC0, dot-depth,
    the length generalization the theory guarantees (guaranteed (NoPE) / guaranteed (APE) /
    not guaranteed) and, with --db, the measured accuracy per bin for APE and NoPE (and
    APE+reg: APE runs with train.pe_penalty > 0, when the store has them) and whether they
    agree (scored only where generalization is guaranteed)."""
    # start-up time: torch
    from rasplab.reports.crasp_table.table import build_table, write_table
    from rasplab.reports.crasp_table.text import markdown, records

    if family is not None:
        # start-up time: the C-RASP package (~0.3 s)
        from rasplab.crasp.expressibility import family_tasks

        tasks = [*family_tasks(family), *(tasks or ())]
    table = build_table(
        db=db, config=config, tasks=tasks or None, threshold=threshold, ladder_db=ladder
    )
    if out is not None:
        paths = write_table(table, out)
        print(f"C-RASP table of {len(table.rows)} tasks written:", file=sys.stderr)
        for path in paths:
            print(f"  {path}", file=sys.stderr)
    if as_json:
        for rec in records(table):
            print(json.dumps(rec))
    elif out is None:
        print(markdown(table), end="")
