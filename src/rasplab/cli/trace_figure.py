"""``rasplab trace-figure DIR... --out PNG``: accuracy by length and ones, trace vs standard runs
(ALTA Figure 5)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rasplab.errors import RasplabError

_FOLDERS = typer.Argument(
    ...,
    metavar="DIR...",
    help="trace-supervise --out folders and harness run folders (eval.slices=[length, ones]).",
)


def trace_figure_command(
    folders: list[str] = _FOLDERS,
    out: str = typer.Option(..., "--out", metavar="PNG", help="Where to write the figure."),
) -> None:
    """Accuracy by length and by number of ones (ALTA Figure 5), one line per run folder:
    trace-supervise runs solid, harness runs (standard supervision) dashed."""
    # start-up time: the analysis stage
    from rasplab.analysis.trace_figure import trace_figure

    results = []
    for folder in folders:
        path = Path(folder) / "result.json"
        try:
            results.append(json.loads(path.read_text()))
        except (OSError, ValueError) as err:
            raise RasplabError(f"cannot read {str(path)!r}: {err}") from None
    trace_figure(results, out)
