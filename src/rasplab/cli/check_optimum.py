"""``rasplab check-optimum PROGRAM``: ALTA's Theorems 1-2 on a program's compiled MLP.

Is the rule set minimal for the training inputs (ALTA Def. 1), and are the compiled MLP
parameters a strict coordinate-wise local optimum of the L1-regularised loss?
"""

from __future__ import annotations

import json

import typer

from rasplab.cli.options import PROGRAM_HELP


def check_optimum_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    train_lengths: str = typer.Option(
        ..., "--train-lengths", metavar="A-B", help="Training length bin A-B."
    ),
    samples: int = typer.Option(
        None, "--samples", help="Inputs: all of the bin if it holds at most this many."
    ),
    alpha: float = typer.Option(0.5, "--alpha", help="L1 regulariser weight, in (0, 1)."),
    seed: int = typer.Option(0, "--seed", help="Seed for the random inputs."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Is the rule set minimal for the training inputs (ALTA Def. 1), and are the compiled
    MLP parameters a strict coordinate-wise local optimum of the regularised loss?"""
    # start-up time: numpy and the program library (~0.5 s)
    # start-up time: the analysis stage
    from rasplab.analysis.optimum import check_optimum
    from rasplab.programs.loading import resolve_program

    entry = resolve_program(name)
    texts, _ = entry.inputs(train_lengths, samples or 2000, seed, "check-optimum")
    report = check_optimum(entry.program(), [entry.encode(x) for x in texts], alpha)
    record = {"program": entry.name, "train_lengths": train_lengths, **report.record()}
    if as_json:
        print(json.dumps(record))
        return
    for key in ("minimal", "strict_optimum", "agrees_with_theorems", "removable_rules"):
        print(f"{key:22} {record[key]}")
    print(f"{'removable_constraints':22} {record['removable_constraints']}")
    for d in record["descent_directions"]:
        print(
            f"descent: {d['parameter']}{d['index']} {d['sign']:+.0f}: {d['change_per_unit']:+.3f}"
        )
    for d in record["constraint_directions"]:
        print(
            f"two-coordinate descent (rule {d['rule']}, {d['variable']}=={d['value']}): "
            f"{d['change_per_unit']:+.3f}"
        )
