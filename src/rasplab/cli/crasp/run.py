"""``rasplab crasp run PROGRAM``: run a C-RASP program on input strings.

Inputs are symbols separated by spaces, without ``<bos>``/``<eos>`` (the interpreter adds the
start position); per input it prints ``{"accept": bool, "outputs": [...]}`` (``--json``) or a
readable block, with ``--trace`` every operation at every position.
"""

from __future__ import annotations

import json

import typer

from rasplab.cli.options import CRASP_PROGRAM_HELP, input_lines
from rasplab.errors import RasplabError


def read_lines(text: str | None, path: str | None) -> list[str]:
    """``--input TEXT`` or every line of ``--inputs FILE`` (an empty line is the empty
    string; a trailing newline ends the last line and adds none; a byte-order mark is
    dropped, and a file with no line at all is refused, as ``rasplab run`` does)."""
    lines = input_lines(text, path)
    if not lines:
        raise RasplabError(
            f"inputs file {path!r} holds no inputs (one input per line; an empty line is the "
            "empty string)"
        )
    return lines


def check_distinct(name: str, lines: list[str]) -> None:
    """Refuse an input with a repeated symbol before ``<sep>`` for a library program that is
    right only on distinct symbols (its answer would be wrong, not an error)."""
    # start-up time: the C-RASP package (~0.3 s)
    from rasplab.crasp import library

    if name not in library.names() or not library.get(name).distinct:
        return
    for n, line in enumerate(lines, start=1):
        symbols = line.split()
        part = symbols[: symbols.index("<sep>")] if "<sep>" in symbols else symbols
        seen: set[str] = set()
        for s in part:
            if s in seen:
                where = f"input {n} " if len(lines) > 1 else "the input "
                raise RasplabError(
                    f"{name} needs distinct symbols before <sep>; {where}repeats {s!r}"
                )
            seen.add(s)


def run_records(program, lines: list[str], trace: bool = False) -> list[dict]:
    """Run ``program`` on the input lines as one batch: one record per line, in order:
    ``accept``, ``outputs`` (per position from ``<bos>`` on: the output operation, or the
    next token for a token readout), ``next_sets`` for a set readout, and the trace."""
    # start-up time: the C-RASP package (~0.3 s)
    from rasplab.crasp.interpreter import run

    # without --trace only the output and readout values are kept (the others are freed after
    # their last use), so a long input does not hold every operation's values in memory
    result = run(program, lines, keep="all" if trace else ())
    ro = program.readout
    records = []
    for b, line in enumerate(lines):
        rec: dict = {"input": line, "accept": bool(result.accept[b])}
        if ro is not None and ro.kind == "token":
            rec["outputs"] = result.readout(b)
        else:
            rec["outputs"] = result.prefix_accept(b)
            if ro is not None:
                rec["next_sets"] = [list(s) for s in result.readout(b)]
        if trace:
            rec["trace"] = result.trace(b)
        records.append(rec)
    return records


def _print_record(rec: dict, as_json: bool) -> None:
    if as_json:
        data = {k: v for k, v in rec.items() if k != "trace"}
        if "trace" in rec:
            data["trace"] = rec["trace"].to_json()
        print(json.dumps(data))
        return

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "T" if v else "F"
        if isinstance(v, list):
            return "{" + ",".join(v) + "}"
        return str(v)

    print(f"input: {rec['input']!r}  accept: {'yes' if rec['accept'] else 'no'}")
    print("  outputs:   " + " ".join(cell(v) for v in rec["outputs"]))
    if "next_sets" in rec:
        print("  next sets: " + " ".join(cell(v) for v in rec["next_sets"]))
    if "trace" in rec:
        print(rec["trace"].table())


def run_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=CRASP_PROGRAM_HELP),
    text: str = typer.Option(None, "--input", metavar="TEXT", help='One input, e.g. "a b b a".'),
    path: str = typer.Option(
        None,
        "--inputs",
        metavar="FILE",
        help="One input per line (an empty line: the empty string).",
    ),
    trace: bool = typer.Option(
        False, "--trace", help="Also print every operation at every position."
    ),
    as_json: bool = typer.Option(
        False, "--json", help='One {"accept", "outputs"} object per input.'
    ),
) -> None:
    """Run a C-RASP program on input strings (symbols separated by spaces, no <bos>/<eos>)."""
    # start-up time: the C-RASP package (~0.3 s)
    from rasplab.crasp.load import load_crasp_program

    program = load_crasp_program(name)
    lines = read_lines(text, path)
    check_distinct(name, lines)
    for rec in run_records(program, lines, trace):
        _print_record(rec, as_json)
