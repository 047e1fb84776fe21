"""``rasplab rasp verify PROGRAM``: the compiled model against the RASP evaluator, every SOp
at every position, on every input up to the longest length within ``--exhaustive`` inputs,
then ``--samples`` random longer ones; prints a JSON summary, exits 1 on any disagreement."""

from __future__ import annotations

import json

import typer

from rasplab.cli.rasp import MAX_SEQ_LEN, PROGRAM_HELP, VOCAB, compile_named


def verify_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    vocab: str = VOCAB,
    max_seq_len: int = MAX_SEQ_LEN,
    causal: bool = typer.Option(False, "--causal", help="Compile a causal model."),
    exhaustive: int = typer.Option(
        10**6, "--exhaustive", metavar="K", help="Every input of the lengths with <= K in all."
    ),
    samples: int = typer.Option(1000, "--samples", metavar="N", help="Random longer inputs."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs."),
) -> None:
    """Compare the compiled model with the evaluator at every SOp and position; exit 1 on
    any disagreement."""
    verify_model(compile_named(name, vocab, max_seq_len, causal), exhaustive, samples, seed)


def verify_model(model, exhaustive: int, samples: int, seed: int) -> None:
    """Verify compiled RASP ``model`` against the evaluator, print the JSON summary, exit 1
    on any disagreement (also ``rasplab verify``)."""
    # start-up time: torch
    from rasplab.rasp_compiler.verify import verify

    report = verify(model, exhaustive=exhaustive, samples=samples, seed=seed)
    print(json.dumps(report.to_json(), default=str))
    if not report.ok:
        raise typer.Exit(1)
