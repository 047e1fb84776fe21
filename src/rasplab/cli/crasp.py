"""CLI subcommands for C-RASP: ``rasplab crasp programs | show | run | check``.

``programs`` lists the library (name, class, task, description); ``show`` prints a program in
the seed's notation; ``run`` runs a program on input strings (symbols separated by spaces, no
``<bos>``/``<eos>``: the interpreter adds the start position) and prints, per input,
``{"accept": bool, "outputs": [...]}``; ``check TASK PROGRAM`` compares a program with a
registered task's labels and exits 1 on any disagreement. PROGRAM is a library name,
``FILE.py:NAME`` or ``FILE.json`` (:func:`rasplab.crasp.load.load_program`).

Other stages add subcommands to the same ``rasplab crasp`` group from their own modules
``rasplab/cli/crasp_*.py``, each with a ``register(crasp_app)`` function; they are found and
attached in name order when the group is registered.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import typer

from rasplab.errors import RasplabError

crasp_app = typer.Typer(
    name="crasp",
    help="C-RASP counting programs: library, interpreter, checks against tasks.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

PROGRAM_HELP = "Library program (see `rasplab crasp programs`), FILE.py:NAME or FILE.json."


def read_lines(text: str | None, path: str | None) -> list[str]:
    """``--input TEXT`` or every line of ``--inputs FILE`` (an empty line is the empty
    string; a trailing newline ends the last line and adds none)."""
    if (text is None) == (path is None):
        raise RasplabError("give exactly one of --input TEXT and --inputs FILE")
    if text is not None:
        return [text]
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RasplabError(f"cannot read inputs file {path!r}: {reason}") from err


def run_records(program, lines: list[str], trace: bool = False) -> list[dict]:
    """Run ``program`` on the input lines as one batch: one record per line, in order:
    ``accept``, ``outputs`` (per position from ``<bos>`` on: the output operation, or the
    next token for a token readout), ``next_sets`` for a set readout, and the trace."""
    from rasplab.crasp.interpreter import run

    result = run(program, lines)
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


@crasp_app.command("programs")
def programs_command(
    as_json: bool = typer.Option(False, "--json", help="One JSON object per program."),
) -> None:
    """List the C-RASP library: name, class, task, one-line description."""
    from rasplab.crasp import library

    rows = [
        (e.name, e.crasp_class, e.task or "-", e.description, e.source) for e in library.entries()
    ]
    if as_json:
        for name, cls, task, desc, source in rows:
            print(
                json.dumps(
                    {
                        "name": name,
                        "class": cls,
                        "task": task,
                        "description": desc,
                        "source": source,
                    }
                )
            )
        return
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    for name, cls, task, desc, _ in rows:
        print(f"{name:<{w0}}  {cls:<{w1}}  {task:<{w2}}  {desc}")


@crasp_app.command("show")
def show_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    as_json: bool = typer.Option(False, "--json", help="The program's IR as JSON."),
) -> None:
    """Print a program in the seed's notation (or its IR as JSON)."""
    from rasplab.crasp.load import load_program

    program = load_program(name)
    print(json.dumps(program.to_json()) if as_json else program.listing())


@crasp_app.command("run")
def run_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
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
    from rasplab.crasp.load import load_program

    program = load_program(name)
    for rec in run_records(program, read_lines(text, path), trace):
        _print_record(rec, as_json)


@crasp_app.command("check")
def check_command(
    task: str = typer.Argument(
        ..., metavar="TASK", help="A registered task (see `rasplab tasks`)."
    ),
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    lengths: str = typer.Option(
        "1-500", "--lengths", metavar="A-B", help="Length bin of the examples."
    ),
    samples: int = typer.Option(
        1000, "--samples", metavar="N", help="Examples drawn from the task."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the draw."),
    as_json: bool = typer.Option(False, "--json", help='{"total", "agree", "first_disagreement"}.'),
) -> None:
    """Check a C-RASP program against a task's own labels; exit 1 on any disagreement."""
    from rasplab.crasp.check import check_program
    from rasplab.crasp.load import load_program

    if samples < 1 or samples > 1_000_000:
        raise RasplabError(f"--samples must be in 1..1,000,000, got {samples}")
    result = check_program(load_program(name), task, lengths, samples, seed)
    if as_json:
        print(json.dumps(result.to_json()))
    else:
        print(f"{result.program} on {result.task}: {result.agree}/{result.total} strings agree")
        d = result.first_disagreement
        if d is not None:
            print(
                f"first disagreement ({d['origin']}): input {d['input']!r}, position "
                f"{d['position']}, {d['what']}: expected {d['expected']}, got {d['got']}"
            )
    if not result.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach the ``crasp`` group (with every ``rasplab/cli/crasp_*.py`` extension) to ``app``."""
    here = [str(Path(__file__).parent)]
    for module in sorted(pkgutil.iter_modules(here), key=lambda m: m.name):
        if module.name.startswith("crasp_"):
            importlib.import_module(f"rasplab.cli.{module.name}").register(crasp_app)
    app.add_typer(crasp_app, name="crasp")
