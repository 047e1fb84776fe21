"""``rasplab minimal NAME``: the minimal program for training inputs, scored on test inputs.

The training and test inputs come from length bins (``--train-lengths``, ``--test-lengths``) or,
for SCAN, from a task split (``-o split=mcd1``); the rule counts follow ALTA (App. C.2).
"""

from __future__ import annotations

import json
import sys

import typer

from rasplab.cli.options import PROGRAM_HELP
from rasplab.errors import RasplabError

SPLIT_TASKS = {"scan": "scan"}
"""Programs whose training and test inputs can come from a task split (``-o split=NAME``)."""


def _split_inputs(name: str, options: dict) -> tuple[list[str], list[str]]:
    """The (train, test) inputs of the task split that ``options`` choose for program ``name``."""
    # start-up time: the task registry
    from rasplab.tasks import get_task

    if name not in SPLIT_TASKS:
        raise RasplabError(
            f"-o task options choose a split for {', '.join(SPLIT_TASKS)} only; "
            f"program {name!r} takes --train-lengths/--test-lengths"
        )
    task = get_task(SPLIT_TASKS[name], **options)
    train, test = task.pool("train"), task.pool("test")
    if not train or not test:
        raise RasplabError(f"the {task.split_type} split of {name} has an empty train or test set")
    return train, test


def minimal_record(
    name: str,
    train_lengths: str | None,
    test_lengths: str | None,
    samples: int | None,
    seed: int,
    options: dict | None = None,
) -> dict:
    """The ``rasplab minimal`` result as one JSON-ready dict."""
    # start-up time: numpy and the program library (~0.5 s)
    # start-up time: the analysis stage
    from rasplab.analysis.minimal import evaluate_minimal, evaluate_on, minimize, minimize_on
    from rasplab.bins import Bin
    from rasplab.programs.base import MAX_SAMPLES
    from rasplab.programs.loading import resolve_program
    from rasplab.seeding import check_seed

    if samples is not None and not 1 <= samples <= MAX_SAMPLES:
        raise RasplabError(f"--samples must be between 1 and {MAX_SAMPLES:,}, got {samples}")
    check_seed(seed)
    entry = resolve_program(name)
    if options:
        if train_lengths or test_lengths:
            raise RasplabError(
                "give either -o split=NAME or --train-lengths/--test-lengths, not both"
            )
        train_texts, test_texts = _split_inputs(name, options)
        split = ",".join(f"{k}={v}" for k, v in options.items())
        print(f"minimal {name}: {len(train_texts)} training inputs ({split})", file=sys.stderr)
        result = minimize_on(entry, train_texts)
        print(f"minimal {name}: evaluating on {len(test_texts)} test inputs", file=sys.stderr)
        evaluation = evaluate_on(entry, result.program, test_texts)
        train_desc = test_desc = split
    else:
        if not train_lengths or not test_lengths:
            raise RasplabError(
                "give --train-lengths and --test-lengths (or -o split=NAME for scan)"
            )
        train, test = Bin.parse(train_lengths), Bin.parse(test_lengths)
        entry.check_lengths(train)
        entry.check_lengths(test)
        print(f"minimal {name}: running on training inputs of lengths {train}", file=sys.stderr)
        result = minimize(entry, train, samples, seed)
        print(f"minimal {name}: evaluating on test inputs of lengths {test}", file=sys.stderr)
        evaluation = evaluate_minimal(entry, result.program, test, samples, seed)
        train_desc, test_desc = str(train), str(test)
    return {
        "program": name,
        "rules_full": result.rules_full,
        "rules_minimal": result.rules_minimal,
        "test_accuracy": evaluation.accuracy,
        "update_rules_full": len(result.full.rules),
        "update_rules_minimal": len(result.program.rules),
        "train_lengths": train_desc,
        "train_inputs": result.inputs,
        "train_exhaustive": result.exhaustive,
        "test_lengths": test_desc,
        "test_inputs": evaluation.total,
        "test_failed": evaluation.failed,
        "seed": seed,
    }


_SPLIT_OPTION = typer.Option(
    [],
    "--option",
    "-o",
    metavar="KEY=VALUE",
    help="Task option choosing a split instead of length bins (scan: -o split=mcd1).",
)


def minimal_command(
    name: str = typer.Argument(..., metavar="NAME", help=PROGRAM_HELP),
    train_lengths: str = typer.Option(
        None, "--train-lengths", metavar="A-B", help="Training length bin A-B."
    ),
    test_lengths: str = typer.Option(
        None, "--test-lengths", metavar="C-D", help="Test length bin C-D."
    ),
    option: list[str] = _SPLIT_OPTION,
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
    # start-up time: the task registry
    from rasplab.tasks.export import parse_options

    record = minimal_record(name, train_lengths, test_lengths, samples, seed, parse_options(option))
    if as_json:
        print(json.dumps(record))
        return
    print(f"program          {record['program']}")
    print(f"rules (full)     {record['rules_full']}  ({record['update_rules_full']} update rules)")
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
