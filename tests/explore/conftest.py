"""A tiny trained run (tomita1, 2 layers x 2 heads, a few steps) shared by the explorer tests."""

from __future__ import annotations

import pytest

from rasplab.harness import experiment_from_dict, train

from .browser import browser  # noqa: F401  (the headless chromium fixture)

RUN = {
    "task": "tomita1",
    "seed": 0,
    "model": {"pe": "rope", "layers": 2, "heads": 2, "width": 16},
    "train": {"steps": 20, "batch_size": 16, "lr": 3.0e-3, "eval_every": 10},
    "eval": {"size": 16},
}


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory):
    """A finished harness run folder (trained for real, a few seconds)."""
    path = tmp_path_factory.mktemp("run") / "tomita1"
    train(experiment_from_dict(RUN), path)
    return path
