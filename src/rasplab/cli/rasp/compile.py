"""``rasplab rasp compile PROGRAM``: compile a RASP program and print its sizes as Tracr
reports them (layers, heads, residual width, MLP width, parameters) and the dtype; ``--out
DIR`` also saves the model (``model.safetensors`` + ``model.json``), which ``rasplab run
--model DIR`` runs."""

from __future__ import annotations

import json

import typer

from rasplab.cli.rasp import MAX_SEQ_LEN, PROGRAM_HELP, VOCAB, compile_named


def compile_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    vocab: str = VOCAB,
    max_seq_len: int = MAX_SEQ_LEN,
    causal: bool = typer.Option(False, "--causal", help="Compile a causal model."),
    out: str = typer.Option(None, "--out", metavar="DIR", help="Save the weights here."),
) -> None:
    """Compile a RASP program to an exact transformer; print its sizes."""
    print_compiled(compile_named(name, vocab, max_seq_len, causal), out)


def print_compiled(model, out: str | None) -> None:
    """Print compiled RASP ``model``'s sizes (JSON); save it to ``out`` if given (also
    ``rasplab compile``)."""
    sizes = model.sizes()
    if out is not None:
        # start-up time: torch and safetensors
        from rasplab.rasp_compiler.export import save_model

        save_model(model, out)
        sizes["saved"] = out
    print(json.dumps(sizes))
