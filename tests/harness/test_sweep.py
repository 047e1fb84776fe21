"""Sweeps: grid expansion, variants and overrides, the results store, resumability, backends."""

from __future__ import annotations

import copy
import os
import sqlite3
import sys

import pytest

from rasplab.errors import RasplabError
from rasplab.harness import ResultsStore, run_sweep, sweep_from_dict
from rasplab.harness.sweep import runs_dir_for


@pytest.fixture
def SWEEP(tiny):
    """A four-run sweep over the toy tasks."""
    return {
        "name": "toy",
        "base": tiny,
        "grid": {"task": ["toy_majority", "toy_next_set"], "variant": ["ape", "nope"], "seed": [0]},
    }


def test_grid_expands_in_order_with_variants_and_overrides(SWEEP):
    data = copy.deepcopy(SWEEP)
    data["grid"]["seed"] = [0, 1]
    data["grid"]["train.lr"] = [0.01, 0.001]
    data["variants"] = {"nope_canon": {"model.pe": "nope", "model.canon": True}}
    data["grid"]["variant"] = ["ape", "nope_canon"]
    data["overrides"] = [
        {"match": {"task": "toy_next_set", "variant": "ape"}, "set": {"model.layers": 2}}
    ]
    runs = sweep_from_dict(data).expand()
    assert len(runs) == 2 * 2 * 2 * 2
    assert [(r.task, r.variant, r.seed, r.train.lr) for r in runs[:3]] == [
        ("toy_majority", "ape", 0, 0.01),
        ("toy_majority", "ape", 0, 0.001),
        ("toy_majority", "ape", 1, 0.01),
    ]
    canon = [r for r in runs if r.variant == "nope_canon"]
    assert all(r.model.pe == "nope" and r.model.canon for r in canon)
    layers = {(r.task, r.variant): r.model.layers for r in runs}
    assert layers[("toy_next_set", "ape")] == 2 and layers[("toy_majority", "ape")] == 1
    assert len({r.hash() for r in runs}) == len(runs)


def test_only_restricts_the_grid(SWEEP, tmp_path):
    summary = run_sweep(
        SWEEP,
        tmp_path / "r.sqlite",
        workers=1,
        progress=False,
        only={"task": ["toy_next_set"], "variant": ["nope"]},
    )
    assert summary.total == summary.executed == 1
    with pytest.raises(RasplabError, match="grid.task has no value 'parity'; choose from"):
        run_sweep(SWEEP, tmp_path / "r.sqlite", progress=False, only={"task": ["parity"]})
    with pytest.raises(RasplabError, match="unknown grid key 'lr'"):
        run_sweep(SWEEP, tmp_path / "r.sqlite", progress=False, only={"lr": [1]})


@pytest.mark.parametrize(
    "change, words",
    [
        ({"grid": {"variant": ["ape", "warp"]}}, ["variant", "warp", "nope", "rope", "fox"]),
        ({"grid": {"task": ["toy_majority", "nosuch"]}}, ["task", "nosuch"]),
        ({"grid": {"model.heads": [3]}}, ["model.heads", "model.width"]),
        ({"grid": {"seed": 3}}, ["grid.seed", "list"]),
        ({"colour": "red"}, ["sweep key", "colour", "grid", "variants"]),
    ],
)
def test_bad_sweeps_are_rejected_before_running(SWEEP, tmp_path, change, words):
    data = copy.deepcopy(SWEEP)
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    db = tmp_path / "r.sqlite"
    with pytest.raises(RasplabError) as err:
        run_sweep(data, db, workers=1, progress=False)
    assert all(w in str(err.value) for w in words)
    assert not db.exists()  # nothing written


def _attempts(db):
    with sqlite3.connect(db) as con:
        return dict(con.execute("SELECT run_id, attempts FROM runs").fetchall())


def test_sweep_is_resumable_and_never_repeats_finished_runs(SWEEP, tmp_path):
    db = tmp_path / "r.sqlite"
    first = run_sweep(SWEEP, db, workers=1, progress=False)
    assert (first.total, first.skipped, first.executed, first.failed) == (4, 0, 4, 0)
    with ResultsStore(db) as store:
        done = {r.run_id: r for r in store.runs()}
    assert all(r.status == "done" and r.metrics["bins"] for r in done.values())
    assert set(_attempts(db).values()) == {1}

    again = run_sweep(SWEEP, db, workers=1, progress=False)
    assert (again.skipped, again.executed) == (4, 0)

    # simulate a kill during one run: marked running, no result stored, checkpoint left over
    victim = sorted(done)[0]
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET status='running', metrics=NULL WHERE run_id=?", (victim,))
    (runs_dir_for(db) / victim / "model.safetensors").unlink()
    resumed = run_sweep(SWEEP, db, workers=1, progress=False)
    assert (resumed.skipped, resumed.executed) == (3, 1)
    attempts = _attempts(db)
    assert attempts.pop(victim) == 2 and set(attempts.values()) == {1}
    with ResultsStore(db) as store:
        rerun = store.get(victim)
    assert rerun.status == "done" and rerun.metrics["bins"] == done[victim].metrics["bins"]
    assert rerun.curves == done[victim].curves  # deterministic: the same result again


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(SWEEP, tmp_path, monkeypatch):
    import rasplab.harness.backends as backends

    real = backends._execute

    def flaky(config_datas, run_dirs, stacked):
        if config_datas[0]["task"] == "toy_next_set":
            raise RuntimeError("boom")
        return real(config_datas, run_dirs, stacked)

    monkeypatch.setattr(backends, "_execute", flaky)
    summary = run_sweep(SWEEP, tmp_path / "r.sqlite", workers=1, progress=False)
    assert (summary.executed, summary.failed) == (4, 2)
    with ResultsStore(tmp_path / "r.sqlite") as store:
        failed = store.runs(status="failed")
    assert len(failed) == 2 and failed[0].error == "RuntimeError: boom"


REAL = {
    "name": "real",
    "base": {
        "task": "binary_majority",
        "model": {"layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 4, "batch_size": 8, "eval_every": 2, "bin": "1-8"},
        "eval": {"size": 16, "batch_size": 16, "bins": ["1-8", "9-12"]},
    },
    "grid": {"variant": ["ape", "nope"], "seed": [0]},
}


def test_worker_processes_give_the_same_results_as_one_process(tmp_path):
    inline = run_sweep(REAL, tmp_path / "a.sqlite", workers=1, progress=False)
    pooled = run_sweep(REAL, tmp_path / "b.sqlite", workers=2, progress=False)
    assert inline.executed == pooled.executed == 2
    assert _results(tmp_path / "a.sqlite") == _results(tmp_path / "b.sqlite")


def test_ray_backend_without_ray_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(RasplabError, match=r"pip install 'rasplab\[ray\]'"):
        run_sweep(REAL, tmp_path / "r.sqlite", backend="ray", progress=False)
    assert not (tmp_path / "r.sqlite").exists()


def _results(db) -> list:
    """Each stored run's id, metrics (without the thread count) and curves."""
    with ResultsStore(db) as store:
        return [
            (r.run_id, {k: v for k, v in r.metrics.items() if k != "threads"}, r.curves)
            for r in store.runs()
        ]


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray cluster of 2 CPUs for the Ray tests of this module (the ``ray`` extra;
    CI installs it and sets ``RASPLAB_REQUIRE_RAY=1``, so there these tests cannot skip)."""
    required = os.environ.get("RASPLAB_REQUIRE_RAY") == "1"
    if required:
        import ray
    else:
        ray = pytest.importorskip("ray")
    try:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}},
        )
    except Exception as err:  # e.g. "node timed out during startup" on an overloaded machine
        if required:
            raise
        pytest.skip(f"a local Ray cluster did not start: {str(err).splitlines()[0]}")
    yield ray
    ray.shutdown()


def test_ray_backend_gives_the_same_results(ray_cluster, tmp_path):
    local = run_sweep(REAL, tmp_path / "a.sqlite", workers=1, progress=False)
    remote = run_sweep(REAL, tmp_path / "b.sqlite", backend="ray", workers=2, progress=False)
    assert local.executed == remote.executed == 2 and remote.failed == 0
    assert _results(tmp_path / "a.sqlite") == _results(tmp_path / "b.sqlite")


def test_ray_refuses_runs_asking_for_more_threads_than_it_has(ray_cluster, tmp_path):
    with pytest.raises(RasplabError, match="the Ray cluster has 2 CPUs"):
        run_sweep(REAL, tmp_path / "c.sqlite", backend="ray", threads_per_run=3, progress=False)


def test_ray_backend_trains_run_groups_as_the_local_one_does(ray_cluster, tmp_path):
    sweep = {**REAL, "grid": {"variant": ["ape", "nope"], "seed": [0, 1]}}
    options = dict(progress=False, batch_runs=2)
    local = run_sweep(sweep, tmp_path / "a.sqlite", workers=1, **options)
    remote = run_sweep(sweep, tmp_path / "b.sqlite", backend="ray", workers=2, **options)
    assert local.executed == remote.executed == 4 and remote.failed == 0
    assert _results(tmp_path / "a.sqlite") == _results(tmp_path / "b.sqlite")
