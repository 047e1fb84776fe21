"""``rasplab verify NAME``: check an ALTA program's compiled model against the interpreter.

``rasplab verify NAME --lengths A-B --samples N [--exhaustive-up-to K]`` compares the compiled
model with the interpreter on every variable at every layer, prints how many inputs agree (or
``{"total", "agree", "first_divergence"}``) and exits 1 on any disagreement.
"""

from __future__ import annotations

import typer

from rasplab.cli.options import PROGRAM_HELP, entry_and_program
from rasplab.cli.output import print_verify
from rasplab.cli.rasp import RASP_MAX_SEQ_LEN, RASP_VOCAB, rasp_target
from rasplab.errors import RasplabError


def _dtype(name: str | None):
    """``--dtype``: ``None`` (the verifier's choice) or the torch dtype named."""
    import torch  # start-up time

    if name is None:
        return None
    if name not in ("float32", "float64"):
        raise RasplabError(f"--dtype {name!r} unknown; choose one of: float32, float64")
    return getattr(torch, name)


def verify_command(
    name: str = typer.Argument(..., metavar="NAME", help=PROGRAM_HELP),
    lengths: str = typer.Option(
        None,
        "--lengths",
        metavar="A-B",
        help="Input lengths A-B (the program's length unit); needed but for RASP programs.",
    ),
    samples: int = typer.Option(
        None,
        "--samples",
        help="Random inputs (all of them if the bin holds fewer); needed but for RASP programs "
        "(default 1000 random inputs after every input within 10^6).",
    ),
    exhaustive_up_to: int = typer.Option(
        None, "--exhaustive-up-to", metavar="K", help="Also every input of length up to K."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for the random inputs."),
    dtype: str = typer.Option(
        None, "--dtype", help="float32 or float64 (default: float32 when exact)."
    ),
    minimal_lengths: str = typer.Option(
        None,
        "--minimal-lengths",
        metavar="A-B",
        help="Verify the minimal program w.r.t. inputs of these lengths.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help='Print {"total", "agree", "first_divergence"}.'
    ),
    vocab: str = RASP_VOCAB,
    max_seq_len: int = RASP_MAX_SEQ_LEN,
) -> None:
    """Check the compiled model against the interpreter, every variable at every layer."""
    rasp_model = rasp_target(name, vocab, max_seq_len)
    if rasp_model is not None:  # against the RASP evaluator, every SOp at every position
        from rasplab.cli.rasp.verify import verify_model

        alta = {
            "--lengths": lengths,
            "--exhaustive-up-to": exhaustive_up_to,
            "--dtype": dtype,
            "--minimal-lengths": minimal_lengths,
        }
        given = [flag for flag, value in alta.items() if value is not None]
        if given:
            raise RasplabError(f"{', '.join(given)}: not for RASP programs (see --max-seq-len)")
        verify_model(rasp_model, 10**6, 1000 if samples is None else samples, seed)
        return
    if lengths is None or samples is None:
        raise RasplabError("give --lengths A-B and --samples N")
    from rasplab.programs.verify import verify_program  # start-up time: torch

    entry, program = entry_and_program(name, minimal_lengths, None, seed)
    report = verify_program(
        entry,
        lengths,
        samples,
        exhaustive_up_to=exhaustive_up_to,
        seed=seed,
        dtype=_dtype(dtype),
        program=program,
    )
    print_verify(report, as_json, "on every variable at every layer")
