"""CLI subcommands for learnability (ALTA Section 3): ``trace-supervise``, ``trace-grid``,
``trace-figure``, ``check-optimum`` (thin wrappers over :mod:`rasplab.analysis`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rasplab.cli.compile import PROGRAM_HELP


def _overrides(pairs: list[str]) -> dict:
    """``["steps=100", ...]`` -> ``{"steps": 100}`` (values parsed as YAML scalars)."""
    import yaml

    from rasplab.errors import RasplabError

    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise RasplabError(f"--set takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def trace_record(name: str, config: str | None, sets: list[str], out: str | None) -> dict:
    """Run trace supervision for ``name``; write ``result.json`` and the PNG under ``out``."""
    from rasplab.analysis.trace_config import load_trace_config
    from rasplab.analysis.trace_figure import trace_figure
    from rasplab.analysis.trace_supervision import trace_supervise
    from rasplab.harness.checkpoint import atomic_write_bytes
    from rasplab.programs.loading import resolve_program

    cfg = load_trace_config(config, _overrides(sets))
    entry = resolve_program(name)
    folder = Path(out) if out else Path("runs") / "trace_supervision" / entry.name
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
    folder.mkdir(parents=True, exist_ok=True)
    trace_figure([data], folder / "trace_supervision.png")
    atomic_write_bytes(folder / "result.json", json.dumps(data).encode())  # last: the run is done
    return record


_SET_OPTION = typer.Option(
    [], "--set", metavar="KEY=VALUE", help="Override a config key (repeatable)."
)
_FOLDERS = typer.Argument(
    ...,
    metavar="DIR...",
    help="trace-supervise --out folders and harness run folders (eval.slices=[length, ones]).",
)


def register(app: typer.Typer) -> None:
    """Attach this stage's subcommands to ``app``."""

    @app.command("trace-supervise", short_help="Learn a program's MLP from its traces (ALTA C.1).")
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

    @app.command("trace-figure", short_help="Accuracy by length and ones: trace vs standard runs.")
    def trace_figure_command(
        folders: list[str] = _FOLDERS,
        out: str = typer.Option(..., "--out", metavar="PNG", help="Where to write the figure."),
    ) -> None:
        """Accuracy by length and by number of ones (ALTA Figure 5), one line per run folder:
        trace-supervise runs solid, harness runs (standard supervision) dashed."""
        from rasplab.analysis.trace_figure import trace_figure
        from rasplab.errors import RasplabError

        results = []
        for folder in folders:
            path = Path(folder) / "result.json"
            try:
                results.append(json.loads(path.read_text()))
            except (OSError, ValueError) as err:
                raise RasplabError(f"cannot read {str(path)!r}: {err}") from None
        trace_figure(results, out)

    @app.command("trace-grid", short_help="Trace-supervision runs from a grid file, resumable.")
    def trace_grid_command(
        grid_file: str = typer.Argument(..., metavar="GRID", help="YAML: runs and seeds."),
        out: str = typer.Option(..., "--out", metavar="DIR", help="Folder of the run folders."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Run every (program, seed) of GRID into DIR/PROGRAM/seed=S, skipping the runs
        already there (run it again after a stop to go on); then the mean and spread over
        seeds of length <= 20, length > 20 and ones > 20 per program."""
        from rasplab.analysis.trace_grid import (
            METRICS,
            grid_summary,
            load_trace_grid,
            run_trace_grid,
        )

        grid = load_trace_grid(grid_file)

        def run_one(program: str, config: str | None, seed: int, folder: Path) -> dict:
            return trace_record(program, config, [f"seed={seed}"], str(folder))

        log = lambda text: print(text, file=sys.stderr)  # noqa: E731
        rows = run_trace_grid(grid, out, run_one, log)
        summary = grid_summary(rows)
        if as_json:
            print(json.dumps({"runs": rows, "summary": summary}))
            return
        for program, s in summary.items():
            cells = "  ".join(
                f"{m} {100 * s[m]['mean']:.1f} ± {100 * s[m]['std']:.1f}" for m in METRICS
            )
            print(f"{program:32} seeds {s['seeds']}  {cells}")

    @app.command("check-optimum", short_help="Theorems 1-2: minimal rule set vs local optimum.")
    def check_optimum_command(
        name: str = typer.Argument(..., metavar="PROGRAM", help=PROGRAM_HELP),
        train_lengths: str = typer.Option(
            ..., "--train-lengths", metavar="A-B", help="Training length bin A-B."
        ),
        samples: int = typer.Option(
            None, "--samples", help="Inputs: all of the bin if it holds at most this many."
        ),
        alpha: float = typer.Option(0.5, "--alpha", help="L1 regulariser weight, in (0, 1)."),
        seed: int = typer.Option(0, "--seed", help="Seed for the random inputs."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    ) -> None:
        """Is the rule set minimal for the training inputs (ALTA Def. 1), and are the compiled
        MLP parameters a strict coordinate-wise local optimum of the regularised loss?"""
        from rasplab.analysis.optimum import check_optimum
        from rasplab.programs.loading import resolve_program

        entry = resolve_program(name)
        texts, _ = entry.inputs(train_lengths, samples or 2000, seed, "check-optimum")
        report = check_optimum(entry.program(), [entry.encode(x) for x in texts], alpha)
        record = {"program": entry.name, "train_lengths": train_lengths, **report.record()}
        if as_json:
            print(json.dumps(record))
            return
        for key in ("minimal", "strict_optimum", "agrees_with_theorems", "removable_rules"):
            print(f"{key:22} {record[key]}")
        print(f"{'removable_constraints':22} {record['removable_constraints']}")
        for d in record["descent_directions"]:
            print(
                f"descent: {d['parameter']}{d['index']} {d['sign']:+.0f}: {d['change_per_unit']:+.3f}"
            )
        for d in record["constraint_directions"]:
            print(
                f"two-coordinate descent (rule {d['rule']}, {d['variable']}=={d['value']}): "
                f"{d['change_per_unit']:+.3f}"
            )
