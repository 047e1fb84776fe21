"""Hand-filled results stores for the C-RASP table tests: real resolved configs registered in
a real store, finished with hand-set accuracies (no training)."""

from __future__ import annotations

import pytest

BINS = ("1-50", "51-100", "101-150")


@pytest.fixture
def hand_store(tmp_path, finish_hand_run):
    """A function ``(runs) -> path`` writing a store of finished runs. ``runs``: tuples
    ``(task, variant, seed, overrides, accuracies)`` with ``overrides`` a dict of dotted config
    keys (``{"model.pe": "ape", "train.pe_penalty": 1e-3}``) and ``accuracies`` one per bin of
    :data:`BINS` (training bin 1-50, 10 test strings per bin)."""
    from rasplab.harness.config import experiment_from_dict
    from rasplab.harness.store import ResultsStore

    def make(runs, name="results.sqlite"):
        path = tmp_path / name
        with ResultsStore(path) as store:
            for task, variant, seed, overrides, accs in runs:
                data = {
                    "task": task,
                    "variant": variant,
                    "seed": seed,
                    "model": {"layers": 1, "heads": 1, "width": 8},
                    "train": {"steps": 2, "bin": "1-50"},
                    "eval": {"bins": list(BINS)},
                }
                for key, value in overrides.items():
                    section, field = key.split(".")
                    data[section][field] = value
                config = experiment_from_dict(data)
                finish_hand_run(store, config, dict(zip(BINS, accs)))
        return path

    return make
