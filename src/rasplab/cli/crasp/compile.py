"""``rasplab crasp compile PROGRAM``: compile a C-RASP program into a softmax transformer.

``compile PROGRAM --max-length N [--out DIR] [--json]`` prints the sizes of the transformer
that runs PROGRAM exactly on every input of up to N symbols (``{"layers", "heads", "width",
"parameters", "nonzero_parameters", "max_length", "compile_seconds", "dtype"}``) and with
``--out`` saves it (safetensors + JSON, written atomically).
"""

from __future__ import annotations

import sys

import typer

from rasplab.cli.options import CRASP_PROGRAM_HELP
from rasplab.cli.output import print_sizes
from rasplab.crasp_compiler.precision import DEFAULT_MAX_LENGTH


def compile_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=CRASP_PROGRAM_HELP),
    max_length: int = typer.Option(
        DEFAULT_MAX_LENGTH, "--max-length", metavar="N", help="Longest input (symbols)."
    ),
    out: str = typer.Option(
        None, "--out", metavar="DIR", help="Save safetensors + JSON into this directory."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Compile a C-RASP program into a softmax transformer and print its sizes."""
    # start-up time: torch
    from rasplab.crasp.load import load_crasp_program
    from rasplab.crasp_compiler.compile import compile_program, model_stats
    from rasplab.crasp_compiler.export import save_compiled

    model = compile_program(load_crasp_program(name), max_length)
    report = model_stats(model)
    if out is not None:
        save_compiled(model, out)
        print(f"saved compiled model to {out}", file=sys.stderr)
    print_sizes(report, as_json)
