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


RASP_VOCAB = typer.Option(
    None, "--vocab", metavar="TOKENS", help='RASP programs only: the vocabulary, e.g. "1 2 3".'
)
RASP_MAX_SEQ_LEN = typer.Option(
    None, "--max-seq-len", metavar="N", help="RASP programs only: longest input (default 10)."
)
"""``--vocab`` and ``--max-seq-len`` of the top-level commands (``run``, ``compile``, ...)."""


def check_options(vocab: str | None, max_seq_len: int) -> list:
    """The vocabulary's tokens, after checking ``--vocab`` and ``--max-seq-len``."""
    # start-up time: the RASP language
    from rasplab.rasp.load import parse_tokens
    from rasplab.rasp.rasp import RaspError

    if max_seq_len < 1:
        raise RaspError(f"--max-seq-len must be at least 1, got {max_seq_len}")
    if vocab is None:
        raise RaspError("a RASP program needs --vocab TOKENS, e.g. --vocab '1 2 3'")
    tokens = parse_tokens(vocab or "")
    if not tokens:
        raise RaspError("--vocab is empty; list the tokens, e.g. --vocab '1 2 3'")
    return tokens


def compile_program(program, tokens: list, max_seq_len: int, causal: bool = False):
    """Compile a loaded SOp over ``tokens`` (imports torch)."""
    # start-up time: torch (the compiler)
    from rasplab.rasp_compiler.compile import compile_rasp_to_model

    return compile_rasp_to_model(program, tokens, max_seq_len, causal=causal)


def compile_named(name: str, vocab: str, max_seq_len: int, causal: bool = False):
    """Load PROGRAM and compile it (imports torch)."""
    # start-up time: the RASP library
    from rasplab.rasp.load import load_rasp_program

    tokens = check_options(vocab, max_seq_len)
    program = load_rasp_program(name, max_seq_len)
    return compile_program(program, tokens, max_seq_len, causal)


def rasp_target(name: str | None, vocab: str | None, max_seq_len: int | None):
    """For a top-level command (``rasplab run|compile|verify|export|explore``): the compiled
    RASP model when ``name`` is a RASP program (``lib:NAME``, or ``FILE.py:NAME`` holding an
    SOp or a function returning one), else ``None`` (an ALTA or C-RASP program, for the
    command's own path; ``--vocab`` / ``--max-seq-len`` are then refused). A file is imported
    here to see what it holds; an ALTA program built by a function is built again by the
    ALTA path, and a file that holds no program is reported by the command's own loader
    (by this one when ``--vocab`` or ``--max-seq-len`` is given)."""
    # start-up time: the program loader (numpy) and the RASP language
    from rasplab.errors import RasplabError
    from rasplab.lang.program import Program
    from rasplab.programs.base import LibraryProgram
    from rasplab.programs.loading import built, is_file_ref, load_object
    from rasplab.rasp import rasp
    from rasplab.rasp.load import load_rasp_program

    n = 10 if max_seq_len is None else max_seq_len
    program = None
    if name is not None and name.startswith("lib:"):
        tokens = check_options(vocab, n)
        program = load_rasp_program(name, n)
    elif name is not None and is_file_ref(name):
        kinds = (Program, LibraryProgram, rasp.SOp)
        what = "a Program or library entry (ALTA), or a RASP SOp (build one with rasplab.rasp"
        try:
            obj = built(name, load_object(name), kinds, what)
        except RasplabError:
            if vocab is None and max_seq_len is None:
                return None  # not RASP: the command's own loader says what is wrong
            raise
        if isinstance(obj, rasp.SOp):
            tokens = check_options(vocab, n)
            program = obj
    if program is None:
        flags = [
            f for f, v in (("--vocab", vocab), ("--max-seq-len", max_seq_len)) if v is not None
        ]
        if flags:
            what = f"{name!r} is not one" if name else "none is given"
            raise RasplabError(
                f"{' and '.join(flags)}: only for RASP programs (lib:NAME, or FILE.py:NAME "
                f"holding an SOp), and {what}"
            )
        return None
    return compile_program(program, tokens, n)
