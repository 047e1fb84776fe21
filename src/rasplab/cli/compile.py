"""``rasplab compile NAME``: compile an ALTA program into transformer weights, print its sizes.

``rasplab compile NAME [--minimal-lengths A-B] [--max-length N] [--out DIR] [--json]`` prints
the compiled sizes (one ``key: value`` line each, or one JSON object) and with ``--out`` saves
the model (safetensors + JSON) for ``rasplab run --model DIR``.
"""

from __future__ import annotations

import sys

import typer

from rasplab.cli.options import PROGRAM_HELP, entry_and_program
from rasplab.cli.output import print_sizes
from rasplab.cli.rasp import RASP_MAX_SEQ_LEN, RASP_VOCAB, rasp_target
from rasplab.errors import RasplabError


def compile_command(
    name: str = typer.Argument(..., metavar="NAME", help=PROGRAM_HELP),
    minimal_lengths: str = typer.Option(
        None,
        "--minimal-lengths",
        metavar="A-B",
        help="Compile the minimal program w.r.t. inputs of these lengths (A-B).",
    ),
    samples: int = typer.Option(
        None, "--samples", help="Inputs for --minimal-lengths (default: the analysis default)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for --minimal-lengths inputs."),
    max_length: int = typer.Option(
        None,
        "--max-length",
        help="Longest input (positions) the model must "
        "accept (default: the program's position range, else what its "
        "longest inputs need, if anything depends on the length).",
    ),
    out: str = typer.Option(
        None, "--out", metavar="DIR", help="Save safetensors + JSON into this directory."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    vocab: str = RASP_VOCAB,
    max_seq_len: int = RASP_MAX_SEQ_LEN,
) -> None:
    """Compile a program into transformer weights and print its sizes."""
    rasp_model = rasp_target(name, vocab, max_seq_len)
    if rasp_model is not None:  # sizes as Tracr reports them, one JSON object
        from rasplab.cli.rasp.compile import print_compiled

        alta = {"--minimal-lengths": minimal_lengths, "--max-length": max_length}
        given = [flag for flag, value in alta.items() if value is not None]
        if given:
            raise RasplabError(f"{', '.join(given)}: not for RASP programs (see --max-seq-len)")
        print_compiled(rasp_model, out)
        return
    # start-up time: the compiler imports torch
    from rasplab.compiler.export import save_compiled
    from rasplab.compiler.stats import model_stats
    from rasplab.programs.loading import is_file_ref
    from rasplab.programs.verify import compile_entry

    entry, program = entry_and_program(name, minimal_lengths, samples, seed)
    model = compile_entry(entry, program, max_length=max_length)
    report = model_stats(model, program)
    if out is not None:
        save_compiled(model, out, entry=None if is_file_ref(name) else entry.name)
        print(f"saved compiled model to {out}", file=sys.stderr)
        limit = model.spec["max_length"]
        if max_length is None and limit is not None:  # a default the user never chose
            print(
                f"note: the saved model takes inputs of at most {limit} positions (a length "
                "chosen for this program, not by --max-length); compile with --max-length N "
                "for longer inputs",
                file=sys.stderr,
            )
    print_sizes(report, as_json)
