"""``rasplab data TASK``: generate a task's dataset and write it to a file or stdout.

Formats (``jsonl``, ``text``, ``hf``) are in docs/tasks.md; the same seed gives the same bytes.
Examples are generated as they are written, so an impossible bin or a bad option fails before
anything is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from rasplab.errors import RasplabError

_TASK_OPTION = typer.Option(
    [], "--option", "-o", help="Task option KEY=VALUE (repeatable), e.g. -o p=3."
)


def data_command(
    task_name: str = typer.Argument(..., metavar="TASK", help="Task name (see `rasplab tasks`)."),
    split: str = typer.Option(
        "train", "--split", help="Split: train, test, or the task's own (e.g. val, all)."
    ),
    bin: str = typer.Option(
        None, "--bin", help="Length bin A-B (default: the split's default bin)."
    ),
    n: int = typer.Option(
        None, "--n", help="Number of examples (default: the task's default for the split)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed; same seed, same bytes."),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl, text or hf."),
    out: str = typer.Option(None, "--out", help="Output file (hf: directory); stdout if absent."),
    option: list[str] = _TASK_OPTION,
    compat: str = typer.Option(
        None, "--compat", help="Shorthand for -o compat=NAME (regular languages: huang)."
    ),
) -> None:
    """Generate a dataset (formats in docs/tasks.md) and write it to --out or stdout."""
    # start-up time: numpy
    from rasplab.bins import Bin
    from rasplab.seeding import check_seed

    # start-up time: the task registry
    from rasplab.tasks import get_task
    from rasplab.tasks.export import FORMATS, parse_options, require_hf, write_dataset

    if fmt not in FORMATS:
        raise RasplabError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if fmt == "hf":
        require_hf()
        if out is None:
            raise RasplabError("the hf format writes a directory; give it with --out DIR")
    if n is not None and n < 1:
        raise RasplabError(f"--n must be a positive number of examples, got {n}")
    check_seed(seed)  # here, since examples are generated only as they are written
    options = parse_options(option)
    if compat is not None:
        options["compat"] = compat
    task = get_task(task_name, **options)
    if split not in task.splits:
        raise RasplabError(
            f"task {task_name!r} has no split {split!r}; choose one of: {', '.join(task.splits)}"
        )
    chosen = task.default_bin(split) if bin is None else Bin.parse(bin)
    task.lengths(chosen)  # an impossible bin fails here, before anything is written
    wanted = task.default_size(split) if n is None else n
    examples = task.stream(split, chosen, n=wanted, seed=seed)  # generated as written
    count = write_dataset(task, examples, fmt, None if out is None else Path(out))
    where = "stdout" if out is None else str(out)
    note = f" (the bin has only {count} distinct examples)" if count < wanted else ""
    print(
        f"rasplab: wrote {count} examples of {task_name} ({split}, bin {chosen}) to {where}{note}",
        file=sys.stderr,
    )
