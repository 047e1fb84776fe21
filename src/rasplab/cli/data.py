"""CLI subcommands for the data stage (thin wrappers over the library): ``tasks`` and ``data``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def _bins_text(task) -> str:
    """``train 1-50; test 1-50, 51-100, 101-150``."""
    return f"train {task.train_bin}; test {', '.join(str(b) for b in task.test_bins)}"


_TASK_OPTION = typer.Option(
    [], "--option", "-o", help="Task option KEY=VALUE (repeatable), e.g. -o p=3."
)


def register(app: typer.Typer) -> None:
    """Attach this stage's subcommands to ``app``."""

    @app.command("tasks")
    def tasks_command(
        as_json: bool = typer.Option(False, "--json", help="One JSON object per task on stdout."),
    ) -> None:
        """List tasks: name, description, vocabulary size, default bins."""
        from rasplab.tasks import get_task, task_names

        for name in task_names():
            task = get_task(name)
            if as_json:
                row = {
                    "name": name,
                    "description": task.description,
                    "vocab_size": len(task.vocab),
                    "vocab": list(task.vocab),
                    "classes": [list(c) if isinstance(c, tuple) else c for c in task.classes],
                    "train_bin": str(task.train_bin),
                    "test_bins": [str(b) for b in task.test_bins],
                    "splits": list(task.splits),
                }
                print(json.dumps(row))
            else:
                print(
                    f"{name:<28} {task.description}  [vocab {len(task.vocab)}; {_bins_text(task)}]"
                )

    @app.command("data")
    def data_command(
        task_name: str = typer.Argument(
            ..., metavar="TASK", help="Task name (see `rasplab tasks`)."
        ),
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
        out: str = typer.Option(
            None, "--out", help="Output file (hf: directory); stdout if absent."
        ),
        option: list[str] = _TASK_OPTION,
        compat: str = typer.Option(
            None, "--compat", help="Shorthand for -o compat=NAME (regular languages: huang)."
        ),
    ) -> None:
        """Generate a dataset (formats in docs/tasks.md) and write it to --out or stdout."""
        from rasplab.bins import Bin
        from rasplab.errors import RasplabError
        from rasplab.seeding import check_seed
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
