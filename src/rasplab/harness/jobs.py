"""Jobs: what a sweep hands to a backend, one run or a group of runs trained stacked.

A sweep turns its unfinished runs into :class:`Job` s (:func:`plan_jobs`): with
``batch_runs`` 1 every run is a job of its own; with K > 1 compatible runs are grouped
(:func:`~rasplab.harness.group.plan_groups`) and a group of two or more trains as one stacked
model in one process (:func:`~rasplab.harness.group.train_group`); a group of one trains alone,
exactly as without groups. A job carries each run's config and run folder; backends send
:meth:`Job.arguments` (plain data) to their workers.

>>> from rasplab.harness.config import experiment_from_dict
>>> runs = [experiment_from_dict({"task": "tomita2", "seed": s}) for s in (0, 1)]
>>> [job.stacked for job in plan_jobs(runs, "runs", batch_runs=2)]
[True]
>>> [job.stacked for job in plan_jobs(runs, "runs", batch_runs=1)]
[False, False]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from rasplab.harness.config import ExperimentConfig
from rasplab.harness.group import plan_groups
from rasplab.harness.threads import with_threads


@dataclass(frozen=True)
class Job:
    """One run (``stacked`` False) or a group of runs trained as one stacked model.

    ``configs[i]`` trains in the folder ``run_dirs[i]``.
    """

    configs: tuple[ExperimentConfig, ...]
    run_dirs: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.configs or len(self.configs) != len(self.run_dirs):
            raise ValueError(
                f"a job needs one run folder per run; got {len(self.configs)} runs "
                f"and {len(self.run_dirs)} folders"
            )

    @property
    def stacked(self) -> bool:
        """Whether the runs train together as one stacked group (two or more runs)."""
        return len(self.configs) > 1

    def members(self) -> Iterator[Job]:
        """Each run of the job as a job of its own."""
        for config, run_dir in zip(self.configs, self.run_dirs):
            yield Job((config,), (run_dir,))

    def subset(self, keep: list[int]) -> Job:
        """The job of the runs at indices ``keep`` (stacked only if two or more remain)."""
        return Job(tuple(self.configs[i] for i in keep), tuple(self.run_dirs[i] for i in keep))

    def with_threads(self, threads: int | None, default: int) -> Job:
        """The job with every run's ``train.threads`` set
        (:func:`~rasplab.harness.threads.with_threads`)."""
        configs = tuple(with_threads(c, threads, default) for c in self.configs)
        return replace(self, configs=configs)

    def arguments(self) -> tuple[list[dict], list[str], bool]:
        """The job as plain data for a worker: configs as dicts, run folders, stacked."""
        return [c.to_dict() for c in self.configs], list(self.run_dirs), self.stacked


def one_run(config: ExperimentConfig, run_dir: str) -> Job:
    """The job of a single run."""
    return Job((config,), (run_dir,))


def plan_jobs(todo: list[ExperimentConfig], root: str | Path, batch_runs: int) -> list[Job]:
    """The runs ``todo`` as jobs, each run in ``root / <run id>``: one job per run when
    ``batch_runs`` is 1, else groups of up to ``batch_runs`` compatible runs."""
    root = Path(root)
    return [
        Job(tuple(group), tuple(str(root / e.hash()) for e in group))
        for group in plan_groups(todo, batch_runs)
    ]
