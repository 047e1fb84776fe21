"""Preparing a large grid: the faster run ids and ``to_dict`` agree with a fresh computation
through ``dataclasses.asdict``, and progress is reported once per grid point."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rasplab.harness.config import _hashed, config_hash
from rasplab.harness.sweepconfig import load_sweep, sweep_from_dict

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _plain_reference(value):
    """Tuples to lists, recursively, after ``dataclasses.asdict`` (``to_dict`` as it was)."""
    if isinstance(value, dict):
        return {k: _plain_reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_reference(v) for v in value]
    return value


def test_run_ids_and_to_dict_match_a_fresh_computation():
    for name in ("demo.yaml", "fig1_cpu_scale.yaml", "bounds_fig1_quick.yaml"):
        for run in load_sweep(CONFIGS / name).expand()[:40]:
            data = _plain_reference(dataclasses.asdict(run))
            assert run.to_dict() == data
            assert run.hash() == config_hash(_hashed(_plain_reference(dataclasses.asdict(run))))
            without_seed = _hashed(data)
            without_seed.pop("seed")
            assert run.setting_hash() == config_hash(without_seed)
            changed = dataclasses.replace(run, seed=run.seed + 1)  # a new config, a new id
            assert changed.hash() != run.hash() and changed.setting_hash() == run.setting_hash()


def test_expand_reports_every_grid_point():
    grid = {"seed": [0, 1, 2], "train.lr": [0.1, 0.2], "task": ["parity", "parity"]}
    config = sweep_from_dict({"name": "p", "grid": grid})
    calls = []
    runs = config.expand(on_point=lambda: calls.append(1))
    assert config.size() == 12 and len(calls) == 12 and len(runs) == 6  # duplicates removed
