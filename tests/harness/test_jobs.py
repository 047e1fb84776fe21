"""Jobs: one run or a stacked group, as a sweep plans them and its claim queue hands them out."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from rasplab.errors import RasplabError
from rasplab.harness.claims import ClaimQueue, claim
from rasplab.harness.config import experiment_from_dict
from rasplab.harness.jobs import Job, one_run, plan_jobs
from rasplab.harness.store import ResultsStore
from rasplab.harness.validation import SweepOptions, check_batch_runs


def _runs(*specs):
    """Experiment configs for (task, seed, pe) triples."""
    return [experiment_from_dict({"task": t, "seed": s, "model": {"pe": pe}}) for t, s, pe in specs]


RUNS = [("tomita2", 0, "ape"), ("tomita2", 0, "rope"), ("tomita2", 1, "ape")]


def test_one_job_per_run_without_batching(tmp_path):
    runs = _runs(*RUNS)
    jobs = plan_jobs(runs, tmp_path, batch_runs=1)
    assert [job.stacked for job in jobs] == [False, False, False]
    assert [job.configs for job in jobs] == [(r,) for r in runs]
    assert [job.run_dirs for job in jobs] == [(str(tmp_path / r.hash()),) for r in runs]


def test_compatible_runs_are_stacked_and_a_lone_run_trains_alone(tmp_path):
    runs = _runs(*RUNS)  # the rope run cannot stack (its PE has no stacked form)
    jobs = plan_jobs(runs, tmp_path, batch_runs=2)
    assert [(job.stacked, [c.seed for c in job.configs]) for job in jobs] == [
        (True, [0, 1]),
        (False, [0]),
    ]
    assert jobs[0].run_dirs == tuple(str(tmp_path / r.hash()) for r in (runs[0], runs[2]))


def test_a_job_pairs_each_run_with_one_folder():
    (run,) = _runs(RUNS[0])
    with pytest.raises(ValueError, match="one run folder per run"):
        Job((run,), ())
    with pytest.raises(ValueError, match="one run folder per run"):
        Job((), ())


def test_threads_and_arguments_keep_the_runs(tmp_path):
    runs = _runs(RUNS[0], RUNS[2])
    job = Job(tuple(runs), ("a", "b")).with_threads(None, default=3)
    assert [c.train.threads for c in job.configs] == [3, 3]
    assert [c.hash() for c in job.configs] == [r.hash() for r in runs]
    datas, dirs, stacked = job.arguments()
    assert [experiment_from_dict(d).hash() for d in datas] == [r.hash() for r in runs]
    assert (dirs, stacked) == (["a", "b"], True)
    assert job.subset([1]) == Job((job.configs[1],), ("b",)) and not job.subset([1]).stacked


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_batch_runs_is_checked_in_one_place(bad):
    with pytest.raises(RasplabError, match="--batch-runs must be at least 1"):
        check_batch_runs(bad)
    with pytest.raises(RasplabError, match="--batch-runs must be at least 1"):
        SweepOptions(batch_runs=bad)


def test_the_queue_hands_out_the_members_of_a_group_it_could_claim(tmp_path):
    runs = _runs(("tomita2", 0, "ape"), ("tomita2", 1, "ape"), ("tomita2", 2, "ape"))
    with ResultsStore(Path(tmp_path) / "r.sqlite") as store:
        for r in runs:
            store.register(r)
        other = f"{socket.gethostname()}:{os.getpid()}:someone-else"  # a live process
        assert claim(store, runs[1].hash(), other) == "claimed"
        store.sql("UPDATE runs SET status='done' WHERE run_id=?", (runs[2].hash(),))
        group = Job(tuple(runs), ("d0", "d1", "d2"))
        queue = ClaimQueue(store, [group], "me:1:x")
        first = queue.take()
        assert first == one_run(runs[0], "d0") and not first.stacked
        assert queue.finished_elsewhere == 1  # the run another sweep finished
        assert queue.take() is None and queue.pending == [one_run(runs[1], "d1")]
