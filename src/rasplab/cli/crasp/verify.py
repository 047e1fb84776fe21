"""``rasplab crasp verify PROGRAM``: a C-RASP program's transformer against the interpreter.

``verify PROGRAM`` compiles PROGRAM and compares every operation at every position with the
interpreter, on every string up to ``--exhaustive-up-to`` and on ``--samples`` random strings
with lengths in ``--lengths`` (``--model DIR`` verifies a saved model instead, up to the length
it was compiled for); it prints ``{"total", "agree", "first_divergence"}`` and exits 1 on any
disagreement.
"""

from __future__ import annotations

import typer

from rasplab.cli.options import CRASP_PROGRAM_HELP
from rasplab.cli.output import print_verify
from rasplab.crasp_compiler.precision import DEFAULT_MAX_LENGTH
from rasplab.errors import RasplabError


def verify_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=CRASP_PROGRAM_HELP),
    max_length: int = typer.Option(
        None,
        "--max-length",
        metavar="N",
        help=f"Compile for inputs up to N (default {DEFAULT_MAX_LENGTH}; not with --model).",
    ),
    exhaustive_up_to: int = typer.Option(
        None,
        "--exhaustive-up-to",
        metavar="K",
        help="Every string of length 0..K (default: the longest K with <= 10^6 strings).",
    ),
    lengths: str = typer.Option(
        None, "--lengths", metavar="A-B", help="Lengths of the random strings (default 0-N)."
    ),
    samples: int = typer.Option(200, "--samples", metavar="N", help="Random strings."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random strings."),
    model_dir: str = typer.Option(
        None,
        "--model",
        metavar="DIR",
        help="Verify a saved model (from `compile --out DIR`) instead of compiling.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help='Print {"total", "agree", "first_divergence"}.'
    ),
) -> None:
    """Check the compiled transformer against the interpreter, every operation at every
    position; exit 1 on any disagreement."""
    # start-up time: torch
    from rasplab.crasp.load import load_crasp_program
    from rasplab.crasp_compiler.export import load_compiled
    from rasplab.crasp_compiler.verify import verify

    program = load_crasp_program(name)
    model = None if model_dir is None else load_compiled(model_dir, program)
    if model is not None and max_length is not None and max_length != model.spec["max_length"]:
        raise RasplabError(
            f"--max-length {max_length} does not apply to --model: the saved model is exact up "
            f"to {model.spec['max_length']} symbols; compile it again with --max-length "
            f"{max_length}, or drop --max-length"
        )
    max_length = DEFAULT_MAX_LENGTH if max_length is None else max_length
    report = verify(
        program,
        model=model,
        max_length=max_length,
        exhaustive_up_to=exhaustive_up_to,
        lengths=lengths,
        samples=samples,
        seed=seed,
    )
    print_verify(report, as_json, "at every operation and position")
