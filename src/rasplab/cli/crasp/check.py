"""``rasplab crasp check TASK PROGRAM``: a C-RASP program against a registered task's labels.

Draws ``--samples`` examples of lengths ``--lengths`` from the task, compares the program's
outputs with the task's labels at every position and exits 1 on any disagreement.
"""

from __future__ import annotations

import json

import typer

from rasplab.cli.options import CRASP_PROGRAM_HELP
from rasplab.errors import RasplabError


def check_command(
    task: str = typer.Argument(
        ..., metavar="TASK", help="A registered task (see `rasplab tasks`)."
    ),
    name: str = typer.Argument(..., metavar="PROGRAM", help=CRASP_PROGRAM_HELP),
    lengths: str = typer.Option(
        "1-500", "--lengths", metavar="A-B", help="Length bin of the examples."
    ),
    samples: int = typer.Option(
        1000, "--samples", metavar="N", help="Examples drawn from the task."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the draw."),
    as_json: bool = typer.Option(False, "--json", help='{"total", "agree", "first_disagreement"}.'),
) -> None:
    """Check a C-RASP program against a task's own labels; exit 1 on any disagreement."""
    # start-up time: the C-RASP package (~0.3 s)
    from rasplab.crasp.check import check_program
    from rasplab.crasp.load import load_crasp_program

    if samples < 1 or samples > 1_000_000:
        raise RasplabError(f"--samples must be in 1..1,000,000, got {samples}")
    result = check_program(load_crasp_program(name), task, lengths, samples, seed)
    if as_json:
        print(json.dumps(result.to_json()))
    else:
        print(f"{result.program} on {result.task}: {result.agree}/{result.total} strings agree")
        d = result.first_disagreement
        if d is not None:
            print(
                f"first disagreement ({d['origin']}): input {d['input']!r}, position "
                f"{d['position']}, {d['what']}: expected {d['expected']}, got {d['got']}"
            )
    if not result.ok:
        raise typer.Exit(1)
