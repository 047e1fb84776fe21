"""The three ways a sweep executes its jobs: in this process, a local process pool, or Ray.

:func:`run_backend` takes the claimed :class:`~rasplab.harness.jobs.Job` s of a sweep
(:class:`~rasplab.harness.claims.ClaimQueue`) and runs them: in this process one after
another (one worker), in ``workers`` spawned processes, or as Ray tasks on the cluster at
``address``, each task asking for as many CPUs as its runs' ``train.threads``. Workers get
plain data (:meth:`~rasplab.harness.jobs.Job.arguments`) and return plain result data; only
this process writes to the store, each run's result (or its one-line error) as soon as it is
back (:class:`Recorder`). A failed run is recorded and the sweep goes on.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import threading
import time
from dataclasses import asdict

from rasplab.errors import RasplabError
from rasplab.harness.claims import POLL, ClaimQueue
from rasplab.harness.config import ExperimentConfig, experiment_from_dict
from rasplab.harness.group import train_group
from rasplab.harness.jobs import Job
from rasplab.harness.progress import SweepBar
from rasplab.harness.store import ResultsStore
from rasplab.harness.train import RunResult, train


class Recorder:
    """Stores finished and failed runs, counts them and advances the progress bar."""

    def __init__(self, store: ResultsStore, bar: SweepBar | None) -> None:
        self.store, self.bar = store, bar
        self.executed = 0
        self.failed = 0

    def record(self, exp: ExperimentConfig, data: dict | None = None, error: str = "") -> None:
        """Store the result ``data`` of run ``exp``, or (``data`` None) its ``error``."""
        self.executed += 1
        if data is None:
            self.failed += 1
            self.store.fail(exp.hash(), error)
        else:
            self.store.finish(RunResult(**data))
        if self.bar is not None:
            self.bar.advance(exp, None if data is None else data["bins"])

    def fail_all(self, configs, err: BaseException) -> None:
        """Record each run of ``configs`` as failed with ``err``."""
        for exp in configs:
            self.record(exp, error=_describe(err))


def _describe(err: BaseException) -> str:
    """One line naming an exception raised by a run."""
    return f"{type(err).__name__}: {err}".splitlines()[0]


def _execute(config_datas: list, run_dirs: list, stacked: bool) -> list:
    """Worker entry point: train a job's runs (resuming from their folders), one alone or a
    group stacked; return each run's result data."""
    configs = [experiment_from_dict(d) for d in config_datas]
    if stacked:
        return [asdict(r) for r in train_group(configs, run_dirs, resume=True)]
    return [asdict(train(configs[0], run_dir=run_dirs[0], resume=True, progress=False))]


def _init_worker(parent: int) -> None:
    """Worker-process set-up: exit when the sweep process dies (kill -9). Each run sets
    its own thread count (``train.threads``)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="rasplab-parent-watch").start()


def import_ray():
    """Import Ray, or explain in one line how to install it."""
    try:
        import ray  # optional extra: rasplab[ray]
    except ImportError:
        raise RasplabError(
            "the ray backend needs Ray: pip install 'rasplab[ray]' (or pip install ray)"
        ) from None
    return ray


def run_backend(
    ray, address: str | None, jobs: ClaimQueue, n: int, workers: int | None, out: Recorder
) -> None:
    """Run the claimed jobs with Ray (``ray`` given), in-process (``n`` 1) or in a pool of
    ``n`` processes; ``workers`` is the caller's limit (None: Ray uses the whole cluster)."""
    if ray is not None:
        _run_ray(ray, address, jobs, n if workers else None, out)
    elif n == 1:
        _run_inline(jobs, out)
    else:
        _run_pool(jobs, n, out)


def _run_inline(jobs: ClaimQueue, out: Recorder) -> None:
    """Run every job in this process, one after another (waiting on runs held elsewhere)."""
    while jobs:
        job = jobs.take()
        if job is None:
            jobs.wait()
        elif job.stacked:
            _run_group_inline(job, out)
        else:
            try:
                data = _execute(*job.arguments())
            except Exception as err:  # a failed run is recorded, the sweep goes on
                out.fail_all(job.configs, err)
                continue
            out.record(job.configs[0], data=data[0])


def _run_group_inline(job: Job, out: Recorder) -> None:
    """Run one stacked group in this process, storing each result as soon as its run
    finishes."""
    stored: set = set()

    def finished(i: int, result) -> None:
        out.record(job.configs[i], data=asdict(result))
        stored.add(i)

    try:
        train_group(list(job.configs), list(job.run_dirs), True, finished)
    except Exception as err:  # the runs still training are recorded as failed
        out.fail_all([e for i, e in enumerate(job.configs) if i not in stored], err)


def _drive(jobs: ClaimQueue, limit: int, submit, ready, result, out: Recorder) -> None:
    """Keep at most ``limit`` jobs running on an executor until all are stored.

    ``submit(job)`` starts a job and returns a handle; ``ready(handles, timeout)`` returns
    the finished handles; ``result(handle)`` returns the job's result data (one per run) or
    raises.
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
            try:
                data = result(handle)
            except Exception as err:
                out.fail_all(job.configs, err)
                continue
            for exp, one in zip(job.configs, data):
                out.record(exp, data=one)


def _run_pool(jobs: ClaimQueue, workers: int, out: Recorder) -> None:
    """Run jobs in ``workers`` spawned processes, at most ``workers`` marked running at once."""
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),)
    ) as pool:

        def submit(job: Job):
            return pool.submit(_execute, *job.arguments())

        def ready(futures, timeout):
            return cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)[0]

        try:
            _drive(jobs, workers, submit, ready, cf.Future.result, out)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _run_ray(ray, address: str | None, jobs: ClaimQueue, workers: int | None, out) -> None:
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
        remote = ray.remote(_execute)
        total = max(1, int(ray.cluster_resources().get("CPU", 1)))
        limit = workers or total

        def submit(job: Job):
            cpus = job.configs[0].train.threads
            if cpus > total:  # Ray would wait for such a task forever
                raise RasplabError(
                    f"a run asks for {cpus} threads but the Ray cluster has {total} CPUs; "
                    "lower --threads-per-run (or train.threads)"
                )
            return remote.options(num_cpus=cpus).remote(*job.arguments())

        def ready(refs, timeout):
            return ray.wait(refs, num_returns=1, timeout=timeout)[0]

        _drive(jobs, limit, submit, ready, ray.get, out)
    finally:
        if started_here:
            ray.shutdown()
