"""``rasplab rasp ...``: RASP programs as Tracr users write them, one module per subcommand.

``programs`` lists Tracr's library as ``lib:NAME``; ``run`` runs a program on one input
(evaluator, or ``--compiled``); ``compile`` compiles it and prints its sizes (``--out DIR``
saves the weights); ``verify`` compares the compiled model with the evaluator at every SOp and
position. PROGRAM is ``lib:NAME`` or ``FILE.py:NAME`` (:mod:`rasplab.rasp.load`); ``--vocab``
lists the tokens and ``--max-seq-len`` the longest input. Registered in
:mod:`rasplab.cli.commands`.
"""

from __future__ import annotations

import typer

PROGRAM_HELP = "lib:NAME (Tracr's library: `rasplab rasp programs`) or FILE.py:NAME (an SOp)."
VOCAB = typer.Option(..., "--vocab", metavar="TOKENS", help='The vocabulary, e.g. "1 2 3".')
MAX_SEQ_LEN = typer.Option(10, "--max-seq-len", metavar="N", help="Longest input (tokens).")


def compile_named(name: str, vocab: str, max_seq_len: int, causal: bool = False):
    """Load PROGRAM and compile it (imports torch)."""
    # start-up time: torch (the compiler) and the RASP library
    # start-up time: torch
    from rasplab.rasp.compiling import compile_rasp_to_model
    from rasplab.rasp.load import load_rasp_program, parse_tokens
    from rasplab.rasp.rasp import RaspError

    if max_seq_len < 1:
        raise RaspError(f"--max-seq-len must be at least 1, got {max_seq_len}")
    tokens = parse_tokens(vocab)
    if not tokens:
        raise RaspError("--vocab is empty; list the tokens, e.g. --vocab '1 2 3'")
    program = load_rasp_program(name, max_seq_len)
    return compile_rasp_to_model(program, tokens, max_seq_len, causal=causal)
