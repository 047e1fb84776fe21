"""``rasplab trace-supervise PROGRAM``: learn a program's MLP from its traces (ALTA Section 3, C.1).

The MLP is trained on interpreter traces, plugged into the compiled model and scored on test
inputs of length <= 20, > 20 and with > 20 ones; ``result.json`` and the figure go under
``--out`` (``result.json`` last: its presence means the run is done, which ``trace-grid`` uses).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rasplab.cli.options import PROGRAM_HELP
from rasplab.errors import RasplabError
from rasplab.files import atomic_write_bytes, check_output_folder, make_output_folder


def _overrides(pairs: list[str]) -> dict:
    """``["steps=100", ...]`` -> ``{"steps": 100}`` (values parsed as YAML scalars)."""
    # start-up time: yaml
    import yaml

    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise RasplabError(f"--set takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def trace_record(name: str, config: str | None, sets: list[str], out: str | None) -> dict:
    """Run trace supervision for ``name``; write ``result.json`` and the PNG under ``out``."""
    # start-up time: numpy and the program library (~0.5 s)
    # start-up time: torch
    from rasplab.analysis.trace_config import load_trace_config
    from rasplab.analysis.trace_figure import trace_figure
    from rasplab.analysis.trace_supervision import trace_supervise
    from rasplab.programs.loading import resolve_program

    cfg = load_trace_config(config, _overrides(sets))
    entry = resolve_program(name)
    folder = Path(out) if out else Path("runs") / "trace_supervision" / entry.name
    check_output_folder(folder, ("trace_supervision.png", "result.json"))  # before training
    print(f"trace-supervise {name}: tracing, training, evaluating", file=sys.stderr)
    result = trace_supervise(entry, cfg)
    record = result.record()
    data = {
        "program": entry.name,
        "split": result.split,
        "record": record,
        "pairs": result.pairs,
        "config": result.config,
        "lengths": result.lengths,
        "ones": result.ones,
        "correct": result.correct,
    }
    make_output_folder(folder)
    trace_figure([data], folder / "trace_supervision.png")
    atomic_write_bytes(folder / "result.json", json.dumps(data).encode())  # last: the run is done
    return record


_SET_OPTION = typer.Option(
    [], "--set", metavar="KEY=VALUE", help="Override a config key (repeatable)."
)


def trace_supervise_command(
    name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
    config: str = typer.Option(None, "--config", metavar="FILE", help="YAML trace config."),
    sets: list[str] = _SET_OPTION,
    out: str = typer.Option(
        None, "--out", metavar="DIR", help="Folder for result.json and the PNG."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """Train the MLP on interpreter traces, plug it into the compiled model, score it.

    Prints accuracy on test inputs of length <= 20, > 20 and with > 20 ones (20: the
    longest training length), the final training loss and the seconds taken.
    """
    record = trace_record(name, config, sets, out)
    if as_json:
        print(json.dumps(record))
        return
    for key, value in record.items():
        print(f"{key:16} {value:.4f}")
