"""``rasplab train [CONFIG] [KEY=VALUE]...``: train and evaluate one run, store it.

The config (a YAML file, then dotted overrides such as ``model.pe=nope``) is resolved and
validated, the run is registered and claimed in the results store (another process training the
same run is refused), trained (resumed from its checkpoint unless ``--fresh``) and its result
stored; the accuracy per bin goes to stderr, ``--json`` prints the result on stdout.
"""

from __future__ import annotations

import typer

from rasplab.cli.options import DEFAULT_DB, split_args
from rasplab.cli.output import say
from rasplab.errors import RasplabError

_CONFIG_ARGS = typer.Argument(
    None,
    metavar="[CONFIG] [KEY=VALUE]...",
    help="YAML config, then dotted overrides, e.g. model.pe=nope",
)


def train_command(
    args: list[str] = _CONFIG_ARGS,
    json_out: bool = typer.Option(False, "--json", help="print the run result as JSON"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database (SQLite)"),
    fresh: bool = typer.Option(False, "--fresh", help="ignore an existing checkpoint"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="progress bar"),
) -> None:
    """Train and evaluate one run; store it in the results database."""
    # start-up time: torch and matplotlib
    from rasplab.harness import ResultsStore, claims, load_config, train
    from rasplab.harness.claims import Heartbeat, claim, holder, owner_id
    from rasplab.harness.store import finite_json
    from rasplab.harness.sweep import runs_dir_for, validate_runs
    from rasplab.plotting import save_figure
    from rasplab.reports.plots import run_curves_figure

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
            run_curves_figure(result.curves, f"{config.task} {config.variant} seed {config.seed}"),
            plot,
        )
    accs = "  ".join(f"{b}: {a:.3f}" for b, a in result.bins.items())
    if result.status == "diverged":
        accs = f"DIVERGED (non-finite loss at step {result.steps}); {accs}"
    say(f"run {result.run_id} ({config.task}, {config.variant}, seed {config.seed}): {accs}")
    say(f"results: {db} (run {result.run_id}); run folder: {run_dir}; curves: {plot}")
    if json_out:
        print(finite_json(result.to_json()))
