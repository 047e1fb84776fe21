"""What several ``rasplab`` commands print: messages on stderr, sizes and verification reports.

stdout is kept for results (``--json``: one JSON object per line and nothing else); progress and
messages for the user go to stderr.
"""

from __future__ import annotations

import json
import sys

import typer


def say(message: str) -> None:
    """A message for the user, on stderr (stdout is kept for ``--json``)."""
    print(message, file=sys.stderr)


def print_sizes(report: dict, as_json: bool) -> None:
    """Print a compiled model's sizes: one JSON object, or one ``key: value`` line each.

    >>> print_sizes({"layers": 2, "width": 8}, as_json=False)
    layers: 2
    width: 8
    """
    if as_json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")


def print_verify(report, as_json: bool, agreement: str) -> None:
    """Print a verification report (JSON, or a sentence ending in ``agreement``) and exit 1
    on any disagreement, or when the program was undefined on every input (nothing was
    compared); inputs it is undefined on are one line on stderr, counted apart."""
    if as_json:
        print(json.dumps(report.to_json()))
    else:
        print(f"{report.agree} of {report.total} inputs agree {agreement}")
        if report.first_divergence is not None:
            print(f"first divergence: {json.dumps(report.first_divergence)}")
    undefined = getattr(report, "undefined_line", lambda: None)()
    if undefined is not None:
        say(undefined)
    if not report.ok or (undefined is not None and report.total == 0):
        raise typer.Exit(1)
