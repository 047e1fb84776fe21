"""``rasplab rasp run PROGRAM --input "BOS t1 t2 ..."``: one input through the RASP evaluator
(default) or the compiled model (``--compiled``); prints the output list, Tracr's way (BOS
first)."""

from __future__ import annotations

import json

import typer

from rasplab.cli.rasp import MAX_SEQ_LEN, PROGRAM_HELP, VOCAB, compile_named


def run_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    tokens: str = typer.Option(..., "--input", metavar="TOKENS", help='e.g. "BOS 3 1 2".'),
    vocab: str = VOCAB,
    max_seq_len: int = MAX_SEQ_LEN,
    compiled: bool = typer.Option(False, "--compiled", help="Run the compiled model."),
    causal: bool = typer.Option(False, "--causal", help="Compile a causal model."),
) -> None:
    """Run a RASP program on one input (BOS first) and print its output list."""
    # start-up time: the RASP library
    from rasplab.rasp.load import parse_tokens

    model = compile_named(name, vocab, max_seq_len, causal)
    print(json.dumps(run_model(model, parse_tokens(tokens), compiled)))


def run_model(model, xs: list, compiled: bool) -> list:
    """The output list (BOS first) of compiled RASP ``model``'s program on input ``xs`` (BOS
    first): the evaluator's, or with ``compiled`` the model's (also ``rasplab run``)."""
    # start-up time: the RASP language
    from rasplab.rasp import rasp

    model.encode(xs)  # the same checks for both paths: BOS first, vocabulary, length
    if compiled:
        return model.apply(xs).decoded
    return [xs[0], *rasp.evaluate(model.program, xs[1:])]
