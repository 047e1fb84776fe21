"""``rasplab tasks``: list the registered tasks: name, description, vocabulary, default bins."""

from __future__ import annotations

import json

import typer


def _bins_text(task) -> str:
    """``train 1-50; test 1-50, 51-100, 101-150``."""
    return f"train {task.train_bin}; test {', '.join(str(b) for b in task.test_bins)}"


def tasks_command(
    as_json: bool = typer.Option(False, "--json", help="One JSON object per task on stdout."),
) -> None:
    """List tasks: name, description, vocabulary size, default bins."""
    # start-up time: the task registry
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
            print(f"{name:<28} {task.description}  [vocab {len(task.vocab)}; {_bins_text(task)}]")
