"""Run a sweep: expand the grid, skip finished runs, execute the rest, store every result.

:func:`run_sweep` checks the options (:class:`~rasplab.harness.validation.SweepOptions`),
hands a sweep with a ``select`` section to :func:`~rasplab.harness.select.run_selection`,
and runs a plain grid with :func:`run_grid`, whose steps are: expand the grid and validate
every run before anything is written (:mod:`rasplab.harness.validation`), register the runs
in the results store, plan the runs not yet ``done`` as jobs (:mod:`rasplab.harness.jobs`:
with ``batch_runs`` K > 1 compatible runs train K at a time as one stacked group in one
process, each with its own result and run folder), give every run its threads
(:mod:`rasplab.harness.threads`: by default the available cores divided among the local
workers, one per Ray task), and execute the jobs with a backend
(:mod:`rasplab.harness.backends`: ``local``, worker processes or in-process with one worker,
or ``ray``, a Ray cluster at ``address``). Only this process writes to the store; a result is
written in one transaction when its run finishes. Killed at any moment (even ``kill -9``)
and restarted, a sweep re-runs only the runs without a stored result, and those resume from
their last checkpoint in the run folder. Each run is claimed in the store before it starts
(:mod:`rasplab.harness.claims`), so two sweeps on one store share the grid and train every
run once; each waits for the runs the other holds, so both end with every result.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from rasplab.harness.backends import Recorder, import_ray, run_backend
from rasplab.harness.claims import ClaimQueue, Heartbeat, owner_id
from rasplab.harness.config import ExperimentConfig
from rasplab.harness.jobs import plan_jobs
from rasplab.harness.progress import PrepBar, SweepBar
from rasplab.harness.select import run_selection
from rasplab.harness.store import FINISHED, ResultsStore
from rasplab.harness.sweepconfig import SweepConfig, load_sweep, sweep_from_dict
from rasplab.harness.threads import default_threads, default_workers, with_threads
from rasplab.harness.validation import BACKENDS, SweepOptions, validate_runs

__all__ = [
    "BACKENDS",
    "SweepSummary",
    "default_workers",
    "run_grid",
    "run_sweep",
    "runs_dir_for",
    "validate_runs",
    "with_threads",
]


@dataclass
class SweepSummary:
    """What a sweep did: runs in the grid, skipped (already done), executed, failed."""

    name: str
    db: str
    runs_dir: str
    total: int
    skipped: int
    executed: int
    failed: int
    run_ids: list = field(default_factory=list)


def runs_dir_for(db: str | Path) -> Path:
    """The folder holding the run folders (checkpoints, configs) of a results database."""
    db = Path(db)
    return db.parent / f"{db.stem}-runs"


def run_sweep(
    config: SweepConfig | dict | str | Path,
    db: str | Path,
    workers: int | None = None,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
    only: dict | None = None,
    batch_runs: int = 1,
    threads_per_run: int | None = None,
) -> SweepSummary:
    """Run every not-yet-finished run of a sweep and store the results in ``db``;
    ``only`` maps grid keys to the subset of their values to run (e.g. two tasks);
    ``batch_runs`` caps how many compatible runs train together as one stacked group;
    ``threads_per_run`` sets every run's ``train.threads`` (default: the run's own setting,
    else the available cores divided among the workers; one per Ray task)."""
    if isinstance(config, (str, Path)):
        config = load_sweep(config)
    elif isinstance(config, dict):
        config = sweep_from_dict(config)
    for key, values in (only or {}).items():
        config = config.restrict(key, list(values))
    options = SweepOptions(workers, backend, address, progress, batch_runs, threads_per_run)
    if config.select:
        return run_selection(config, db, run_grid, options)
    return run_grid(config, db, options)


def run_grid(config: SweepConfig, db: str | Path, options: SweepOptions) -> SweepSummary:
    """Run the grid of ``config`` (its ``select`` section aside) into ``db``: the steps of
    the module docstring."""
    ray = import_ray() if options.backend == "ray" else None
    experiments, store = _prepare(config, db, options.progress)
    root = runs_dir_for(db)
    try:
        statuses = store.statuses()
        todo = [e for e in experiments if statuses.get(e.hash()) not in FINISHED]
        summary = SweepSummary(
            name=config.name,
            db=str(db),
            runs_dir=str(root),
            total=len(experiments),
            skipped=len(experiments) - len(todo),
            executed=0,
            failed=0,
            run_ids=[e.hash() for e in experiments],
        )
        bar = SweepBar(config.name, summary.total, summary.skipped) if options.progress else None
        job_list = plan_jobs(todo, root, options.batch_runs)
        n = options.workers or default_workers(len(job_list))
        default = default_threads(n, on_ray=ray is not None)
        job_list = [job.with_threads(options.threads_per_run, default) for job in job_list]
        jobs = ClaimQueue(store, job_list, owner_id())
        out = Recorder(store, bar)
        try:
            with Heartbeat(db, jobs.owner):
                run_backend(ray, options.address, jobs, n, options.workers, out)
            summary.skipped += jobs.finished_elsewhere
        finally:
            summary.executed, summary.failed = out.executed, out.failed
            if bar is not None:
                bar.close()
    finally:
        store.close()
    return summary


def _prepare(
    config: SweepConfig, db: str | Path, progress: bool
) -> tuple[list[ExperimentConfig], ResultsStore]:
    """Expand and validate the grid, then register its runs in the store at ``db``; returns
    the runs and the open store (closed here if registering fails)."""
    if progress:  # a large grid takes seconds to prepare: say at once how large it is
        print(
            f"sweep {config.name}: {config.size():,} grid points; preparing the runs",
            file=sys.stderr,
        )
    prep = PrepBar(config.name, config.size()) if progress else None
    try:
        experiments = config.expand(on_point=prep and prep.advance)
        validate_runs(experiments)
        root = runs_dir_for(db)
        store = ResultsStore(db)
        try:
            if prep:
                prep.registering(len(experiments))
            dirs = [str(root / e.hash()) for e in experiments]
            store.register_many(experiments, config.name, dirs, on_run=prep and prep.advance)
        except BaseException:
            store.close()
            raise
    finally:
        if prep:
            prep.close()
    return experiments, store
