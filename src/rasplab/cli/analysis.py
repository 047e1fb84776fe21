"""CLI subcommands for the analysis stage (thin wrappers over the library): ``minimal``."""

from __future__ import annotations

import json
import sys

import typer

from rasplab.cli.compile import PROGRAM_HELP


def minimal_record(
    name: str, train_lengths: str, test_lengths: str, samples: int | None, seed: int
) -> dict:
    """The ``rasplab minimal`` result as one JSON-ready dict."""
    from rasplab.analysis.minimal import evaluate_minimal, minimize
    from rasplab.bins import Bin
    from rasplab.errors import RasplabError
    from rasplab.programs.base import MAX_SAMPLES
    from rasplab.programs.loading import resolve_program
    from rasplab.seeding import check_seed

    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise RasplabError(f"--samples must be between 1 and {MAX_SAMPLES:,}, got {samples}")
    check_seed(seed)
    entry = resolve_program(name)
    train, test = Bin.parse(train_lengths), Bin.parse(test_lengths)
    entry.check_lengths(train)
    entry.check_lengths(test)
    print(f"minimal {name}: running on training inputs of lengths {train}", file=sys.stderr)
    result = minimize(entry, train, samples, seed)
    print(f"minimal {name}: evaluating on test inputs of lengths {test}", file=sys.stderr)
    evaluation = evaluate_minimal(entry, result.program, test, samples, seed)
    return {
        "program": name,
        "rules_full": result.rules_full,
        "rules_minimal": result.rules_minimal,
        "test_accuracy": evaluation.accuracy,
        "update_rules_full": len(result.full.rules),
        "update_rules_minimal": len(result.program.rules),
        "train_lengths": str(train),
        "train_inputs": result.inputs,
        "train_exhaustive": result.exhaustive,
        "test_lengths": str(test),
        "test_inputs": evaluation.total,
        "test_failed": evaluation.failed,
        "seed": seed,
    }


def register(app: typer.Typer) -> None:
    """Attach this stage's subcommands to ``app``."""

    @app.command(
        "minimal", short_help="Minimal program for training inputs, scored on test inputs."
    )
    def minimal_command(
        name: str = typer.Argument(..., metavar="NAME", help=PROGRAM_HELP),
        train_lengths: str = typer.Option(
            ..., "--train-lengths", metavar="A-B", help="Training length bin A-B."
        ),
        test_lengths: str = typer.Option(
            ..., "--test-lengths", metavar="C-D", help="Test length bin C-D."
        ),
        samples: int = typer.Option(
            None,
            "--samples",
            help="Inputs per bin: all of them if the bin holds at most this many, else this many "
            "random ones (default 2000).",
        ),
        seed: int = typer.Option(0, "--seed", help="Seed for the random inputs."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Minimal program for the training inputs (ALTA App. C.2), scored on test inputs.

        Rule counts follow ALTA: update rules plus one reset rule per head-output value
        (minimal: the fired updates and the fired resets).
        """
        record = minimal_record(name, train_lengths, test_lengths, samples, seed)
        if as_json:
            print(json.dumps(record))
            return
        print(f"program          {record['program']}")
        print(
            f"rules (full)     {record['rules_full']}  ({record['update_rules_full']} update rules)"
        )
        print(
            f"rules (minimal)  {record['rules_minimal']}  ({record['update_rules_minimal']} update rules)"
            f"  on {record['train_inputs']} training inputs of lengths {record['train_lengths']}"
            f"{' (all of them)' if record['train_exhaustive'] else ''}"
        )
        print(
            f"test accuracy    {record['test_accuracy']:.4f}  on {record['test_inputs']} inputs of "
            f"lengths {record['test_lengths']} ({record['test_failed']} failed: no halt, rule "
            "conflict or undecodable output)"
        )
