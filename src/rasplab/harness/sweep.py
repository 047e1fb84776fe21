"""Run a sweep: expand the grid, skip finished runs, execute the rest, store every result.

:func:`run_sweep` validates every run before anything is written, registers the runs in the
results store, then executes those not yet ``done`` with a backend: ``local`` (worker processes,
or in-process with one worker) or ``ray`` (a Ray cluster, ``address``). With ``batch_runs``
K > 1 compatible runs train K at a time as one stacked group in one process (a worker or a
Ray task; :func:`~rasplab.harness.group.train_group`), each with its own result and run
folder. Every run computes on ``train.threads`` CPU threads: by default the available cores
divided among the local workers, one per Ray task. Only this process writes
to the store; a result is written in one transaction when its run finishes. Killed at any
moment (even ``kill -9``) and restarted, a sweep re-runs only the runs without a stored result,
and those resume from their last checkpoint in the run folder. Each run is claimed in the store
before it starts (:mod:`rasplab.harness.claims`), so two sweeps on one store share the grid and
train every run once; each waits for the runs the other holds, so both end with every result.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rasplab.errors import RasplabError, unknown_name
from rasplab.harness.claims import POLL, ClaimQueue, Heartbeat, owner_id
from rasplab.harness.config import ExperimentConfig, experiment_from_dict
from rasplab.harness.progress import start_progress
from rasplab.harness.setup import available_cpus
from rasplab.harness.store import FINISHED, ResultsStore
from rasplab.harness.sweepconfig import SweepConfig, load_sweep, sweep_from_dict

BACKENDS = ("local", "ray")


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


def validate_runs(experiments: list[ExperimentConfig]) -> None:
    """Build each distinct task and check its bins, splits, encoding and packing before any
    run starts."""
    from rasplab.harness.encoding import Encoder
    from rasplab.harness.setup import (
        build_task,
        check_encodable,
        check_packing,
        run_bins,
        run_splits,
    )

    seen = set()
    for config in experiments:
        key = config.setting_hash()
        if key in seen:
            continue
        seen.add(key)
        task = build_task(config)
        train_bin, test_bins = run_bins(config, task)
        run_splits(config, task, test_bins)
        check_packing(config, task, train_bin)
        check_encodable(config, Encoder(task))


def _execute_group(config_datas: list, run_dirs: list) -> list:
    """Worker entry point: train runs as one stacked group; return their result data."""
    from dataclasses import asdict

    from rasplab.harness.group import train_group

    configs = [experiment_from_dict(d) for d in config_datas]
    return [asdict(r) for r in train_group(configs, run_dirs, resume=True)]


def _execute(config_data: dict, run_dir: str) -> dict:
    """Worker entry point: train one run (resuming from ``run_dir``); return its result data."""
    from dataclasses import asdict

    from rasplab.harness.train import train

    config = experiment_from_dict(config_data)
    return asdict(train(config, run_dir=run_dir, resume=True, progress=False))


def _init_worker(parent: int) -> None:
    """Worker-process set-up: exit when the sweep process dies (kill -9). Each run sets
    its own thread count (``train.threads``)."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="rasplab-parent-watch").start()


def default_workers(n_runs: int) -> int:
    """Worker processes by default: one per available CPU, at most one per run."""
    return max(1, min(n_runs, available_cpus()))


def with_threads(config: ExperimentConfig, threads: int | None, default: int) -> ExperimentConfig:
    """``config`` with ``train.threads`` set: ``threads`` when given (``--threads-per-run``),
    else the config's own value, else ``default``. The run id stays (threads are not hashed).

    >>> c = with_threads(experiment_from_dict({"task": "tomita1"}), None, default=2)
    >>> c.train.threads, c.hash() == experiment_from_dict({"task": "tomita1"}).hash()
    (2, True)
    """
    from dataclasses import replace

    threads = threads or config.train.threads or default
    return replace(config, train=replace(config.train, threads=threads))


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
    if backend not in BACKENDS:
        raise unknown_name("backend", backend, BACKENDS)
    if workers is not None and workers < 1:
        raise RasplabError(f"--workers must be at least 1; got {workers}")
    if isinstance(batch_runs, bool) or not isinstance(batch_runs, int) or batch_runs < 1:
        raise RasplabError(f"--batch-runs must be at least 1; got {batch_runs}")
    if threads_per_run is not None and (
        isinstance(threads_per_run, bool)
        or not isinstance(threads_per_run, int)
        or threads_per_run < 1
    ):
        raise RasplabError(f"--threads-per-run must be at least 1; got {threads_per_run}")
    if config.select:
        from rasplab.harness.select import run_selection

        options = dict(workers=workers, backend=backend, address=address, progress=progress)
        return run_selection(
            config, db, **options, batch_runs=batch_runs, threads_per_run=threads_per_run
        )
    ray = _import_ray() if backend == "ray" else None
    if progress:  # a large grid takes seconds to prepare: say at once how large it is
        print(
            f"sweep {config.name}: {config.size():,} grid points; preparing the runs",
            file=sys.stderr,
        )
    prep = _PrepBar(config) if progress else None
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
        bar = _SweepBar(config.name, len(experiments), summary.skipped) if progress else None
        if batch_runs > 1:
            from rasplab.harness.group import plan_groups

            planned = [
                [(e, str(root / e.hash())) for e in g] for g in plan_groups(todo, batch_runs)
            ]
            job_list = [job if len(job) > 1 else job[0] for job in planned]  # one run: alone
        else:
            job_list = [(e, str(root / e.hash())) for e in todo]
        n = workers or default_workers(len(job_list))
        # the cores divided among the local workers; a Ray task takes one CPU unless told more
        default = 1 if ray is not None else max(1, available_cpus() // n)
        job_list = [_job_threads(job, threads_per_run, default) for job in job_list]
        jobs = ClaimQueue(store, job_list, owner_id())
        try:
            with Heartbeat(db, jobs.owner):
                _run_backend(ray, address, jobs, n, workers, store, summary, bar)
            summary.skipped += jobs.finished_elsewhere
        finally:
            if bar is not None:
                bar.close()
    finally:
        store.close()
    return summary


def _job_threads(job, threads: int | None, default: int):
    """A job (one ``(config, run folder)`` or a group: a list of them) with its threads set
    (:func:`with_threads`)."""
    if isinstance(job, list):
        return [_job_threads(one, threads, default) for one in job]
    return (with_threads(job[0], threads, default), job[1])


class _PrepBar:
    """A rich progress bar on stderr while a sweep prepares: grid points expanded into
    configs, then runs registered in the store."""

    def __init__(self, config: SweepConfig) -> None:
        self.progress = start_progress()
        self.task = self.progress.add_task(
            f"preparing {config.name}", total=config.size(), info="grid points"
        )

    def advance(self) -> None:
        """One more grid point expanded (or run registered)."""
        self.progress.advance(self.task)

    def registering(self, runs: int) -> None:
        """Switch to counting the ``runs`` registered in the store."""
        self.progress.reset(self.task, total=runs, info="runs registered")

    def close(self) -> None:
        """Stop drawing the bar."""
        self.progress.stop()


def _run_backend(ray, address, jobs, n, workers, store, summary, bar) -> None:
    """Run the claimed jobs with the chosen backend (Ray, in-process, or a process pool)."""
    if ray is not None:
        _run_ray(ray, address, jobs, n if workers else None, store, summary, bar)
    elif n == 1:
        _run_inline(jobs, store, summary, bar)
    else:
        _run_pool(jobs, n, store, summary, bar)


def _record(store: ResultsStore, summary: SweepSummary, bar, exp, data=None, error=None) -> None:
    """Store one finished (or failed) run and advance the progress bar."""
    from rasplab.harness.train import RunResult

    summary.executed += 1
    if error is not None:
        summary.failed += 1
        store.fail(exp.hash(), error)
    else:
        store.finish(RunResult(**data))
    if bar is not None:
        bar.advance(exp, None if data is None else data["bins"])


def _describe(err: BaseException) -> str:
    """One line naming an exception raised by a run."""
    return f"{type(err).__name__}: {err}".splitlines()[0]


def _run_inline(jobs, store, summary, bar) -> None:
    """Run every job in this process, one after another (waiting on runs held elsewhere)."""
    while jobs:
        job = jobs.take()
        if job is None:
            jobs.wait()
            continue
        if isinstance(job, list):
            _run_group_inline(job, store, summary, bar)
            continue
        exp, run_dir = job
        try:
            data = _execute(exp.to_dict(), run_dir)
        except Exception as err:  # a failed run is recorded, the sweep goes on
            _record(store, summary, bar, exp, error=_describe(err))
            continue
        _record(store, summary, bar, exp, data=data)


def _run_group_inline(group: list, store, summary, bar) -> None:
    """Run one group of runs (a list of (config, run folder)) in this process, storing each
    result as soon as its run finishes."""
    from dataclasses import asdict

    from rasplab.harness.group import train_group

    stored: set = set()

    def finished(i: int, result) -> None:
        _record(store, summary, bar, group[i][0], data=asdict(result))
        stored.add(i)

    try:
        train_group([e for e, _ in group], [d for _, d in group], True, finished)
    except Exception as err:  # the runs still training are recorded as failed
        for i, (exp, _) in enumerate(group):
            if i not in stored:
                _record(store, summary, bar, exp, error=_describe(err))


def _drive(jobs, limit: int, submit, ready, result, store, summary, bar) -> None:
    """Keep at most ``limit`` jobs running on an executor until all are stored.

    ``submit(job)`` starts a job (one ``(config, run folder)`` or a group: a list of them)
    and returns a handle; ``ready(handles, timeout)`` returns the finished handles;
    ``result(handle)`` returns the job's result data (a list for a group) or raises.
    """
    pending = jobs
    running: dict = {}
    while pending or running:
        while pending and len(running) < limit:
            job = pending.take()
            if job is None:
                break
            running[submit(job)] = job
        if not running:
            pending.wait()
            continue
        timeout = POLL if pending else None  # look again at runs held elsewhere
        for handle in ready(list(running), timeout):
            job = running.pop(handle)
            group = job if isinstance(job, list) else [job]
            try:
                data = result(handle)
            except Exception as err:
                for exp, _ in group:
                    _record(store, summary, bar, exp, error=_describe(err))
                continue
            for (exp, _), one in zip(group, data if isinstance(job, list) else [data]):
                _record(store, summary, bar, exp, data=one)


def _arguments(job) -> tuple:
    """The worker entry point of a job and its arguments (plain data)."""
    if isinstance(job, list):
        return _execute_group, ([e.to_dict() for e, _ in job], [d for _, d in job])
    return _execute, (job[0].to_dict(), job[1])


def _run_pool(jobs, workers: int, store, summary, bar) -> None:
    """Run jobs in ``workers`` spawned processes, at most ``workers`` marked running at once."""
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),)
    ) as pool:

        def submit(job):
            entry, args = _arguments(job)
            return pool.submit(entry, *args)

        def ready(futures, timeout):
            return cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)[0]

        try:
            _drive(jobs, workers, submit, ready, cf.Future.result, store, summary, bar)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _import_ray():
    """Import Ray, or explain in one line how to install it."""
    try:
        import ray
    except ImportError:
        raise RasplabError(
            "the ray backend needs Ray: pip install 'rasplab[ray]' (or pip install ray)"
        ) from None
    return ray


def _run_ray(ray, address, jobs, workers, store, summary, bar) -> None:
    """Run jobs as Ray tasks on the cluster at ``address`` (or a local one), each asking for
    as many CPUs as its runs' ``train.threads``; a group of runs is one task."""
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}},
        )
    try:
        remotes = {f: ray.remote(f) for f in (_execute, _execute_group)}
        total = max(1, int(ray.cluster_resources().get("CPU", 1)))
        limit = workers or total

        def submit(job):
            entry, args = _arguments(job)
            cpus = (job[0] if isinstance(job, list) else job)[0].train.threads
            if cpus > total:  # Ray would wait for such a task forever
                raise RasplabError(
                    f"a run asks for {cpus} threads but the Ray cluster has {total} CPUs; "
                    "lower --threads-per-run (or train.threads)"
                )
            return remotes[entry].options(num_cpus=cpus).remote(*args)

        def ready(refs, timeout):
            return ray.wait(refs, num_returns=1, timeout=timeout)[0]

        _drive(jobs, limit, submit, ready, ray.get, store, summary, bar)
    finally:
        if started_here:
            ray.shutdown()


class _SweepBar:
    """A rich progress bar on stderr: runs finished out of the grid, and the last result."""

    def __init__(self, name: str, total: int, done: int) -> None:
        self.progress = start_progress()
        info = f"{done} already done" if done else ""
        self.task = self.progress.add_task(f"sweep {name}", total=total, completed=done, info=info)

    def advance(self, exp, bins: dict | None) -> None:
        """One more run finished (``bins`` None when it failed)."""
        what = "failed" if bins is None else " ".join(f"{k}:{v:.2f}" for k, v in bins.items())
        info = f"{exp.task} {exp.variant} s{exp.seed} {what}"
        self.progress.update(self.task, advance=1, info=info)

    def close(self) -> None:
        """Stop drawing the bar."""
        self.progress.stop()
