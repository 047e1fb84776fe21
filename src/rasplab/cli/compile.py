"""CLI subcommands for the compile stage: ``compile`` (sizes, export) and ``verify``.

``rasplab compile NAME [--minimal-lengths A-B] [--max-length N] [--out DIR] [--json]`` prints
the compiled sizes; ``rasplab verify NAME --lengths A-B --samples N [--exhaustive-up-to K]``
compares the compiled model with the interpreter on every variable at every layer and exits
1 on any disagreement.
"""

from __future__ import annotations

import json
import sys

import typer

from rasplab.errors import RasplabError

PROGRAM_HELP = "Library program (see `rasplab programs`) or FILE.py:NAME (a Program or a function returning one)."


def print_sizes(report: dict, as_json: bool) -> None:
    """Print a compiled model's sizes: one JSON object, or one ``key: value`` line each."""
    if as_json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")


def print_verify(report, as_json: bool, agreement: str) -> None:
    """Print a verification report (JSON, or a sentence ending in ``agreement``) and exit 1
    on any disagreement."""
    if as_json:
        print(json.dumps(report.to_json()))
    else:
        print(f"{report.agree} of {report.total} inputs agree {agreement}")
        if report.first_divergence is not None:
            print(f"first divergence: {json.dumps(report.first_divergence)}")
    if not report.ok:
        raise typer.Exit(1)


def compiled_runner(program, max_layers: int | None = None):
    """A ``rasplab run`` runner executing ``program``'s compiled model (compiled per batch with
    a maximum length covering it)."""
    from rasplab.compiler.run import run_compiled
    from rasplab.compiler.verify import compile_for

    def run(batch, trace):
        """Compile for this batch's lengths, then run it."""
        model = compile_for(program, [len(b) for b in batch])
        run = run_compiled(model, batch, trace=trace, max_layers=max_layers)
        for t in run.traces or []:
            t.rules = program.rules  # rule indices are the program's: print their text
        return run

    return run


def model_runner(model, max_layers: int | None = None):
    """A ``rasplab run`` runner executing a loaded compiled model."""
    from rasplab.compiler.run import run_compiled

    def run(batch, trace):
        """Run the loaded model on the batch."""
        return run_compiled(model, batch, trace=trace, max_layers=max_layers)

    return run


def load_model_entry(directory: str, name: str | None):
    """``(model, entry)`` for ``rasplab run --model DIR``: the library entry the saved JSON
    names, else (a user program's model) token ids in, output values out."""
    from rasplab.compiler.export import load_compiled
    from rasplab.programs.loading import resolve_program, token_entry

    model = load_compiled(directory)
    saved = model.spec.get("entry")
    if name is not None and saved is not None and name != saved:
        raise RasplabError(f"model in {directory!r} was compiled from {saved!r}, not {name!r}")
    if saved is None and name is None:
        return model, token_entry(None, model.spec["name"], model.spec["input_range"])
    return model, resolve_program(name or saved)


def _program(name: str, minimal_lengths: str | None, samples: int | None, seed: int):
    """The entry (library name or FILE.py:NAME) and its program (minimal w.r.t.
    ``minimal_lengths`` if given)."""
    from rasplab.programs.loading import resolve_program

    entry = resolve_program(name)
    if minimal_lengths is None:
        return entry, entry.program()
    from rasplab.analysis.minimal import minimal_program

    return entry, minimal_program(entry, minimal_lengths, samples, seed)


def _dtype(name: str | None):
    import torch

    if name is None:
        return None
    if name not in ("float32", "float64"):
        raise RasplabError(f"--dtype {name!r} unknown; choose one of: float32, float64")
    return getattr(torch, name)


def register(app: typer.Typer) -> None:
    """Attach this stage's subcommands to ``app``."""

    @app.command("compile")
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
    ) -> None:
        """Compile a program into transformer weights and print its sizes."""
        from rasplab.compiler.export import save_compiled
        from rasplab.compiler.stats import model_stats
        from rasplab.programs.verify import compile_entry

        entry, program = _program(name, minimal_lengths, samples, seed)
        model = compile_entry(entry, program, max_length=max_length)
        report = model_stats(model, program)
        if out is not None:
            from rasplab.programs.loading import is_file_ref

            save_compiled(model, out, entry=None if is_file_ref(name) else entry.name)
            print(f"saved compiled model to {out}", file=sys.stderr)
        print_sizes(report, as_json)

    @app.command("verify")
    def verify_command(
        name: str = typer.Argument(..., metavar="NAME", help=PROGRAM_HELP),
        lengths: str = typer.Option(
            ..., "--lengths", metavar="A-B", help="Input lengths A-B (the program's length unit)."
        ),
        samples: int = typer.Option(
            ..., "--samples", help="Random inputs (all of them if the bin holds fewer)."
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
    ) -> None:
        """Check the compiled model against the interpreter, every variable at every layer."""
        from rasplab.programs.verify import verify_program

        entry, program = _program(name, minimal_lengths, None, seed)
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
