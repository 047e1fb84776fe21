"""Every sweep config shipped in configs/ and configs/probes/ loads and expands into valid runs
(the learned-program configs, ``learned_*.yaml``, belong to ``rasplab learn --sweep``, not the
harness)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasplab.harness.sweepconfig import load_sweep

ROOT_CONFIGS = Path(__file__).resolve().parents[2] / "configs"
CONFIGS = sorted(
    p
    for p in [*ROOT_CONFIGS.glob("*.yaml"), *ROOT_CONFIGS.glob("probes/*.yaml")]
    if not p.name.startswith("learned_")
)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_config_expands(path):
    runs = load_sweep(path).expand()
    assert runs and len({r.hash() for r in runs}) == len(runs)


def test_scan_configs_cover_length_and_mcd_splits():
    for name in ("scan_cpu_scale.yaml", "scan_paper_scale.yaml"):
        runs = load_sweep(CONFIGS[0].parent / name).expand()
        assert {r.task_options["split"] for r in runs} == {"length", "mcd1", "mcd2", "mcd3"}
        assert {r.model.universal for r in runs} == {True, False}
