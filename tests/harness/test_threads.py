"""Threads per run: ``train.threads`` / ``--threads-per-run`` reach torch, are recorded, keep
run ids, and bad values are one line with exit 2."""

from __future__ import annotations

import copy
import importlib

import pytest
import torch
import yaml

from rasplab.cli import main
from rasplab.harness import ResultsStore, run_sweep
from rasplab.harness.config import experiment_from_dict
from rasplab.harness.group import train_group

# the modules themselves (the package re-exports functions of the same names)
setup_mod = importlib.import_module("rasplab.harness.setup")
sweep_mod = importlib.import_module("rasplab.harness.sweep")
threads_mod = importlib.import_module("rasplab.harness.threads")
train_mod = importlib.import_module("rasplab.harness.train")
group_mod = importlib.import_module("rasplab.harness.group")


@pytest.fixture
def restore_threads():
    """Put torch's thread count back after a test that changes it."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _with(tiny, **train):
    data = copy.deepcopy(tiny)
    data["train"].update(train)
    return data


def _spy_threads(monkeypatch, module) -> list[int]:
    """Record torch's thread count at every evaluation ``module`` makes during training."""
    seen: list[int] = []
    real = module.evaluate

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "evaluate", spy)
    return seen


def test_train_threads_reach_torch_and_are_recorded(tiny, monkeypatch, restore_threads):
    torch.set_num_threads(1)
    seen = _spy_threads(monkeypatch, train_mod)
    result = train_mod.train(experiment_from_dict(_with(tiny, threads=2, steps=4, eval_every=2)))
    assert seen == [2, 2] and result.threads == 2 and result.to_json()["threads"] == 2


def test_a_group_trains_on_its_runs_threads(tiny, monkeypatch, restore_threads):
    torch.set_num_threads(1)
    seen = _spy_threads(monkeypatch, group_mod)
    configs = [
        experiment_from_dict({**_with(tiny, threads=2, steps=2, eval_every=2), "seed": s})
        for s in (0, 1)
    ]
    results = train_group(configs)
    assert seen == [2, 2] and [r.threads for r in results] == [2, 2]


def test_default_is_the_available_cores_and_omp_num_threads_caps_them(monkeypatch):
    monkeypatch.setattr(setup_mod.os, "sched_getaffinity", lambda _: set(range(6)), raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert setup_mod.available_cpus() == 6
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert setup_mod.available_cpus() == 4
    cfg = experiment_from_dict({"task": "tomita1"}).train
    assert setup_mod.run_threads(cfg) == 4


def test_a_sweep_divides_the_cores_records_threads_and_keeps_run_ids(
    tiny, tmp_path, monkeypatch, restore_threads
):
    monkeypatch.setattr(threads_mod, "available_cpus", lambda: 2)
    sweep = {"name": "t", "base": _with(tiny, steps=2, eval_every=2), "grid": {"seed": [0, 1]}}
    db = tmp_path / "r.sqlite"
    first = run_sweep(sweep, db, workers=1, progress=False)  # one worker: both cores
    ids = [experiment_from_dict({**sweep["base"], "seed": s}).hash() for s in (0, 1)]
    assert first.run_ids == ids  # the same ids as configs that never mention threads
    with ResultsStore(db) as store:
        assert [store.get(i).metrics["threads"] for i in ids] == [2, 2]
    saved = yaml.safe_load((sweep_mod.runs_dir_for(db) / ids[0] / "config.yaml").read_text())
    assert saved["train"]["threads"] == 2
    # another thread count is the same experiment: nothing is run again
    again = run_sweep(sweep, db, workers=1, progress=False, threads_per_run=1)
    assert again.executed == 0 and again.skipped == 2


def test_threads_per_run_overrides_the_config(tiny, tmp_path, restore_threads):
    sweep = {"base": _with(tiny, steps=2, eval_every=2, threads=2), "grid": {"seed": [0]}}
    db = tmp_path / "r.sqlite"
    summary = run_sweep(sweep, db, workers=1, progress=False, threads_per_run=1)
    with ResultsStore(db) as store:
        assert store.get(summary.run_ids[0]).metrics["threads"] == 1


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_cli_bad_threads_per_run_is_one_line_and_exit_2(tiny, tmp_path, capsys, bad):
    config = tmp_path / "s.yaml"
    config.write_text(yaml.safe_dump({"base": tiny, "grid": {"seed": [0]}}))
    db = tmp_path / "x.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(config), "--db", str(db), "--threads-per-run", bad, "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1
    assert "--threads-per-run" in err and not db.exists()


@pytest.mark.parametrize("bad", ["0", "-3", "two", "1.5", "true"])
def test_cli_bad_train_threads_is_one_line_and_exit_2(tmp_path, capsys, bad):
    db = tmp_path / "x.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "task=tomita1", f"train.threads={bad}", "--db", str(db), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1
    assert "train.threads" in err and not db.exists()
