"""Fixtures shared by several test packages."""

from __future__ import annotations

import pytest


@pytest.fixture
def finish_hand_run():
    """A function ``(store, config, bins) -> run_id`` that registers ``config`` (an
    ExperimentConfig) in an open ResultsStore and finishes it as done with the accuracies
    ``bins`` (bin -> accuracy, 10 test examples each; fitted when the first is 1.0): a
    hand-filled run with a real resolved config and no training."""
    from rasplab.harness.train import RunResult

    def finish(store, config, bins: dict) -> str:
        run_id = store.register(config)
        accs = list(bins.values())
        store.finish(
            RunResult(run_id, run_id, config.task, config.variant, config.seed, "done", bins,
                      {b: 10 for b in bins}, None, accs[0] == 1.0, 2, False, 0.1,
                      [], config.to_dict(), None, "test")
        )  # fmt: skip
        return run_id

    return finish
