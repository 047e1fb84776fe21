"""CLI subcommand for the explore stage: ``rasplab explore``, one self-contained HTML page.

``rasplab explore NAME|FILE.py:NAME (--input TEXT | --tokens IDS) --out PAGE.html`` shows an
ALTA program (interpreter beside the compiled weights, layer by layer) or a C-RASP program
(interpreter beside the compiled transformer, every operation per position); ``rasplab
explore --run RUN_DIR (--input TEXT | --length N) --out PAGE.html`` shows a trained run.
``--step N|last`` is the step the page opens at (default: the last; a ``#step=N`` fragment
in the page's URL overrides it). Bad input: one line, exit 2, no page written.
"""

from __future__ import annotations

import sys

import typer

from rasplab.cli.options import tokens_encoder
from rasplab.cli.rasp import RASP_MAX_SEQ_LEN, RASP_VOCAB, rasp_target
from rasplab.errors import RasplabError


def load_target(spec: str):
    """``("program", entry or None, Program)`` or ``("crasp", None, Program)`` for ``spec``:
    an ALTA library name, a C-RASP library name, or ``FILE.py:NAME`` holding either kind (a
    library entry, a program, or a function of no arguments returning one)."""
    # start-up time: numpy, the program library and the C-RASP package (~0.8 s)
    from rasplab.crasp.ir import CraspProgram
    from rasplab.lang.program import Program
    from rasplab.programs import get_program, program_names
    from rasplab.programs.base import LibraryProgram
    from rasplab.programs.loading import built, is_file_ref, load_object

    if is_file_ref(spec):
        kinds = (Program, LibraryProgram, CraspProgram)
        what = "a program (an ALTA Program or library entry, or a C-RASP Program"
        obj = built(spec, load_object(spec), kinds, what)
        if isinstance(obj, LibraryProgram):
            return "program", obj, obj.program()
        return ("program" if isinstance(obj, Program) else "crasp"), None, obj
    if spec in program_names():
        entry = get_program(spec)
        return "program", entry, entry.program()
    # start-up time: the C-RASP package (~0.3 s)
    from rasplab.crasp import library

    try:
        return "crasp", None, library.program(spec)
    except RasplabError as err:
        raise RasplabError(
            f"unknown program {spec!r}: neither an ALTA program (`rasplab programs`) nor a "
            f"C-RASP program (`rasplab crasp programs`); or give FILE.py:NAME ({err})"
        ) from None


def _check_input(target: str, entry, program, text: str) -> None:
    """Refuse an input the program does not handle (beyond its length limit, or not one of the
    valid inputs it states), as ``run`` does: its page would show a wrong answer."""
    # start-up time: numpy and the program library (~0.5 s)
    from rasplab.programs.loading import token_entry

    if entry is not None:
        entry.check_input(text)
    else:
        token_entry(program, target).encode(text)


def _token_ids(target: str, entry, program, tokens: str) -> list[int]:
    """``--tokens``: checked as ``rasplab run --tokens`` checks them."""
    # start-up time: numpy and the program library (~0.5 s)
    from rasplab.programs.loading import token_entry

    return tokens_encoder(entry or token_entry(program, target), program.input_range)(tokens)


def explore_command(
    target: str = typer.Argument(
        None,
        metavar="NAME|FILE.py:NAME",
        help="ALTA or C-RASP program (library name or FILE.py:NAME); omit with --run.",
    ),
    text: str = typer.Option(
        None, "--input", metavar="TEXT", help='The natural input, e.g. "1 0 1 1".'
    ),
    out: str = typer.Option(..., "--out", metavar="PAGE.html", help="The page to write."),
    run_dir: str = typer.Option(
        None, "--run", metavar="RUN_DIR", help="Show a trained run (a harness run folder)."
    ),
    length: int = typer.Option(
        None, "--length", metavar="N", help="With --run: draw an example of this length."
    ),
    seed: int = typer.Option(0, "--seed", help="With --run --length: the example's seed."),
    max_layers: int = typer.Option(
        None, "--max-layers", help="Layer limit (default: the program's)."
    ),
    tokens: str = typer.Option(
        None,
        "--tokens",
        metavar="IDS",
        help='ALTA programs: token ids instead of a natural input, e.g. "3 1 0".',
    ),
    step: str = typer.Option(
        "last",
        "--step",
        metavar="N|last",
        help="The step the page opens at (a #step=N URL fragment overrides it).",
    ),
    vocab: str = RASP_VOCAB,
    max_seq_len: int = RASP_MAX_SEQ_LEN,
) -> None:
    """Write one self-contained HTML page exploring a program's trace and weights, or a run."""
    # start-up time: torch
    from rasplab.explore import crasp_view, program_view, run_view, write_page
    from rasplab.explore.page import set_initial_step

    rasp_model = rasp_target(None if run_dir else target, vocab, max_seq_len)
    if rasp_model is not None:  # every SOp: the evaluator beside the compiled model
        from rasplab.explore import rasp_view  # start-up time: torch
        from rasplab.rasp.load import parse_tokens

        if tokens is not None or max_layers is not None or text is None:
            raise RasplabError(
                "a RASP program takes its tokens with --input (no --tokens, --max-layers)"
            )
        xs = parse_tokens(text)
        data = rasp_view(rasp_model, xs[1:] if xs[:1] == [rasp_model.bos] else xs)
        set_initial_step(data, step)
        print(f"wrote {write_page(data, out)}", file=sys.stderr)
        return
    if tokens is not None and (run_dir is not None or text is not None):
        raise RasplabError("give --tokens IDS for a program, without --input or --run")
    if run_dir is not None:
        if target is not None:
            raise RasplabError("give either a program NAME or --run RUN_DIR, not both")
        data = run_view(run_dir, text, length, seed)
    else:
        if target is None:
            raise RasplabError("give a program NAME (or FILE.py:NAME), or --run RUN_DIR")
        if text is None and tokens is None:
            raise RasplabError("give the input to explore with --input TEXT (or --tokens IDS)")
        kind, entry, program = load_target(target)
        if kind == "crasp":
            if tokens is not None:
                raise RasplabError("a C-RASP program takes its string with --input, not --tokens")
            data = crasp_view(program, text)
        elif tokens is not None:
            ids = _token_ids(target, entry, program, tokens)
            data = program_view(entry, tokens, program=program, max_layers=max_layers, ids=ids)
        else:
            _check_input(target, entry, program, text)
            data = program_view(entry, text, program=program, max_layers=max_layers)
    set_initial_step(data, step)
    path = write_page(data, out)
    print(f"wrote {path}", file=sys.stderr)
