"""``rasplab crasp show PROGRAM``: a C-RASP program in the seed's notation (or its IR as JSON)."""

from __future__ import annotations

import json

import typer

from rasplab.cli.options import CRASP_PROGRAM_HELP


def show_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=CRASP_PROGRAM_HELP),
    as_json: bool = typer.Option(False, "--json", help="The program's IR as JSON."),
) -> None:
    """Print a program in the seed's notation (or its IR as JSON)."""
    # start-up time: the C-RASP package (~0.3 s)
    from rasplab.crasp.load import load_crasp_program

    program = load_crasp_program(name)
    print(json.dumps(program.to_json()) if as_json else program.listing())
