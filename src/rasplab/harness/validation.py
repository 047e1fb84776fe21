"""What a sweep checks before it writes anything: its options, then every run's set-up.

:class:`SweepOptions` holds how a sweep executes (workers, backend, ``batch_runs``, threads,
progress) and refuses a bad value with one line naming the option; :func:`check_batch_runs`
is the one check of ``--batch-runs``, used by every caller that takes it.
:func:`validate_runs` builds each distinct task of the grid and checks its bins, splits,
encoding and packing, so a bad grid fails before any run is registered or trained.

>>> SweepOptions(batch_runs=0)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: --batch-runs must be at least 1; got 0
"""

from __future__ import annotations

from dataclasses import dataclass

from rasplab.errors import RasplabError, unknown_name
from rasplab.harness.config import ExperimentConfig
from rasplab.harness.encoding import Encoder
from rasplab.harness.setup import (
    build_task,
    check_encodable,
    check_packing,
    run_bins,
    run_splits,
)

BACKENDS = ("local", "ray")


def _positive(option: str, value: object) -> None:
    """Refuse ``value`` unless it is an int (not a bool) of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RasplabError(f"{option} must be at least 1; got {value}")


def check_batch_runs(batch_runs: object) -> int:
    """``batch_runs`` if it is a whole number of at least 1, else a one-line error.

    >>> check_batch_runs(4)
    4
    """
    _positive("--batch-runs", batch_runs)
    return batch_runs


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep executes: ``workers`` processes (None: one per CPU), the ``backend``
    (``local`` or ``ray`` at ``address``), ``batch_runs`` runs at most per stacked group,
    ``threads_per_run`` (None: each run's own ``train.threads``, else the default split),
    and whether to draw ``progress`` bars."""

    workers: int | None = None
    backend: str = "local"
    address: str | None = None
    progress: bool = True
    batch_runs: int = 1
    threads_per_run: int | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise unknown_name("backend", self.backend, BACKENDS)
        if self.workers is not None and self.workers < 1:
            raise RasplabError(f"--workers must be at least 1; got {self.workers}")
        check_batch_runs(self.batch_runs)
        if self.threads_per_run is not None:
            _positive("--threads-per-run", self.threads_per_run)


def validate_runs(experiments: list[ExperimentConfig]) -> None:
    """Build each distinct task and check its bins, splits, encoding and packing before any
    run starts."""
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
