"""The thread split of a sweep: how many worker processes, and how many threads each run gets.

A sweep runs ``workers`` local processes (by default one per available CPU, at most one per
job) and divides the available cores among them; a Ray task takes one CPU unless told more.
A run's own ``train.threads``, or ``--threads-per-run`` over it, wins over that default.
Threads are not part of a run's id, so changing them never re-runs anything.

>>> default_threads(workers=2, cpus=8, on_ray=False), default_threads(2, 8, on_ray=True)
(4, 1)
"""

from __future__ import annotations

from dataclasses import replace

from rasplab.harness.config import ExperimentConfig
from rasplab.harness.setup import available_cpus


def default_workers(n_jobs: int) -> int:
    """Worker processes by default: one per available CPU, at most one per job."""
    return max(1, min(n_jobs, available_cpus()))


def default_threads(workers: int, cpus: int | None = None, on_ray: bool = False) -> int:
    """Threads per run by default: the ``cpus`` (default: the available ones) divided among
    the local ``workers``, at least one; one on Ray (a task takes one CPU unless told more)."""
    if on_ray:
        return 1
    cpus = available_cpus() if cpus is None else cpus
    return max(1, cpus // workers)


def with_threads(config: ExperimentConfig, threads: int | None, default: int) -> ExperimentConfig:
    """``config`` with ``train.threads`` set: ``threads`` when given (``--threads-per-run``),
    else the config's own value, else ``default``. The run id stays (threads are not hashed).

    >>> from rasplab.harness.config import experiment_from_dict
    >>> c = with_threads(experiment_from_dict({"task": "tomita1"}), None, default=2)
    >>> c.train.threads, c.hash() == experiment_from_dict({"task": "tomita1"}).hash()
    (2, True)
    """
    threads = threads or config.train.threads or default
    return replace(config, train=replace(config.train, threads=threads))
