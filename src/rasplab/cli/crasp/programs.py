"""``rasplab crasp programs``: list the C-RASP library: name, class, task, description."""

from __future__ import annotations

import json

import typer


def programs_command(
    as_json: bool = typer.Option(False, "--json", help="One JSON object per program."),
) -> None:
    """List the C-RASP library: name, class, task, one-line description."""
    # start-up time: the C-RASP package (~0.3 s)
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
