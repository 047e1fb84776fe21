"""CLI subcommands for the train stage: ``train``, ``sweep`` and ``report`` (thin wrappers)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

DEFAULT_DB = "runs/results.sqlite"


def _say(message: str) -> None:
    """A message for the user, on stderr (stdout is kept for ``--json``)."""
    print(message, file=sys.stderr)


def split_args(args: list[str]) -> tuple[str | None, list[str]]:
    """Split ``[CONFIG] [key=value ...]``: a first argument without ``=`` is the config file."""
    from rasplab.errors import RasplabError

    args = list(args or [])
    config = None
    if args and "=" not in args[0]:
        config = args.pop(0)
    for arg in args:
        if "=" not in arg:
            raise RasplabError(
                f"argument {arg!r} must be key=value (only the first may be a config file)"
            )
    return config, args


_CONFIG_ARGS = typer.Argument(
    None,
    metavar="[CONFIG] [KEY=VALUE]...",
    help="YAML config, then dotted overrides, e.g. model.pe=nope",
)
_ONLY = typer.Option(
    None, "--only", metavar="KEY=V1,V2", help="run only these grid values (repeatable)"
)


def parse_only(items: list[str] | None) -> dict:
    """``["task=a,b", "seed=0"]`` → ``{"task": ["a", "b"], "seed": [0]}`` (YAML scalars)."""
    from rasplab.harness.config import parse_override

    out: dict = {}
    for item in items or []:
        key, _ = parse_override(item)
        raw = item.split("=", 1)[1]
        out[key] = [parse_override(f"{key}={v}")[1] for v in raw.split(",")]
    return out


def grid_ids(config: str, db: str) -> set[str]:
    """The run ids of a sweep config's current grid in ``db`` (what its report shows)."""
    from rasplab.harness.select import grid_ids as select_grid_ids
    from rasplab.harness.sweepconfig import load_sweep

    return select_grid_ids(load_sweep(config), db)


def register(app: typer.Typer) -> None:
    """Attach this stage's subcommands to ``app``."""

    @app.command("train")
    def train_cmd(
        args: list[str] = _CONFIG_ARGS,
        json_out: bool = typer.Option(False, "--json", help="print the run result as JSON"),
        db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
        fresh: bool = typer.Option(False, "--fresh", help="ignore an existing checkpoint"),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="progress bar"),
    ) -> None:
        """Train and evaluate one run; store it in the results database."""
        from rasplab.errors import RasplabError
        from rasplab.harness import ResultsStore, claims, load_config, train
        from rasplab.harness.claims import Heartbeat, claim, holder, owner_id
        from rasplab.harness.store import finite_json
        from rasplab.harness.sweep import runs_dir_for, validate_runs
        from rasplab.reports.plots import run_curves_figure, save_figure

        config_path, overrides = split_args(args)
        config = load_config(config_path, overrides)
        validate_runs([config])
        run_dir = runs_dir_for(db) / config.hash()
        with ResultsStore(db) as store:
            store.register(config, run_dir=str(run_dir))
            owner, ttl = owner_id(), claims.TTL
            if claim(store, config.hash(), owner, ttl) == "held":
                raise RasplabError(
                    f"run {config.hash()} is being trained by another process "
                    f"({holder(store, config.hash())}); wait for it to finish"
                )
            try:  # renewed while it trains, as a sweep's claims are
                with Heartbeat(db, owner, ttl):
                    result = train(config, run_dir=run_dir, resume=not fresh, progress=progress)
            except BaseException as err:
                store.fail(config.hash(), f"{type(err).__name__}: {err}".splitlines()[0])
                raise
            store.finish(result)
        plot = run_dir / "curves.png"
        if result.curves:
            save_figure(
                run_curves_figure(
                    result.curves, f"{config.task} {config.variant} seed {config.seed}"
                ),
                plot,
            )
        accs = "  ".join(f"{b}: {a:.3f}" for b, a in result.bins.items())
        if result.status == "diverged":
            accs = f"DIVERGED (non-finite loss at step {result.steps}); {accs}"
        _say(f"run {result.run_id} ({config.task}, {config.variant}, seed {config.seed}): {accs}")
        _say(f"results: {db} (run {result.run_id}); run folder: {run_dir}; curves: {plot}")
        if json_out:
            print(finite_json(result.to_json()))

    @app.command("sweep")
    def sweep_cmd(
        config: str = typer.Argument(..., help="sweep YAML config"),
        backend: str = typer.Option("local", "--backend", help="local | ray"),
        address: str = typer.Option(None, "--address", help="Ray cluster address (ray backend)"),
        workers: int = typer.Option(None, "--workers", help="parallel runs (default: CPUs)"),
        db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
        out: str = typer.Option(None, "--out", help="report folder (default: next to the db)"),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="progress bar"),
        only: list[str] = _ONLY,
        batch_runs: int = typer.Option(
            1, "--batch-runs", help="train up to K compatible runs as one stacked group"
        ),
        threads_per_run: int = typer.Option(
            None,
            "--threads-per-run",
            metavar="N",
            help="CPU threads of each run (default: train.threads, else CPUs / workers)",
        ),
    ) -> None:
        """Run a grid of runs (resumable: finished runs are never repeated), then report."""
        from rasplab.harness import run_sweep
        from rasplab.reports import build_report

        summary = run_sweep(
            config,
            db,
            workers=workers,
            backend=backend,
            address=address,
            progress=progress,
            only=parse_only(only),
            batch_runs=batch_runs,
            threads_per_run=threads_per_run,
        )
        report = build_report(
            db, out or Path(db).parent / "report", sweep=summary.name, run_ids=grid_ids(config, db)
        )
        _say(
            f"sweep {summary.name}: {summary.total} runs, {summary.skipped} already done, "
            f"{summary.executed} executed, {summary.failed} failed"
        )
        _say(f"results: {db}; run folders: {summary.runs_dir}; report: {report.out_dir}/summary.md")
        if summary.failed:
            raise typer.Exit(1)

    @app.command("report")
    def report_cmd(
        db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
        out: str = typer.Option(None, "--out", help="output folder (default: next to the db)"),
        sweep: str = typer.Option(None, "--sweep", help="only the runs of this sweep"),
        config: str = typer.Option(
            None, "--config", help="only the runs of this sweep config's current grid"
        ),
    ) -> None:
        """Rebuild runs.csv, summary.md/csv and the PNG plots from the results database."""
        from rasplab.reports import build_report

        grid = None if config is None else grid_ids(config, db)
        report = build_report(db, out or Path(db).parent / "report", sweep=sweep, run_ids=grid)
        _say(f"report of {report.runs} runs ({report.finished} finished) in {report.out_dir}:")
        for path in report.files:
            _say(f"  {path}")
