"""A grid of learned-program runs, resumable: every point of ``grid`` x ``seeds`` is one run
directory under the sweep's folder, skipped when its ``result.json`` exists; the seeds of a
setting still to run train together as one seed batch; the summary
groups seeds of one setting and reports the paper's measure (test accuracy of the seed with
the best validation accuracy) beside the mean and spread over all seeds.

A sweep file (YAML)::

    name: hist_grid
    base: {task: rasp_hist, epochs: 40}
    grid: {layers: [1, 2], cat_heads: [2, 4]}
    seeds: [0, 1, 2, 3, 4]

``grid`` may instead be a list of settings (mappings), each run as written (e.g. one paper
configuration per task).

>>> sweep = sweep_from_dict({"name": "s", "base": {"task": "rasp_hist"},
...                          "grid": {"layers": [1, 2]}, "seeds": [0, 1]})
>>> [name for name, _ in sweep.points()]
['layers=1,seed=0', 'layers=1,seed=1', 'layers=2,seed=0', 'layers=2,seed=1']
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rasplab.errors import RasplabError
from rasplab.harness.config import read_yaml
from rasplab.learned.config import LearnConfig, config_from_dict
from rasplab.learned.learn import learn_seeds


@dataclass(frozen=True)
class LearnSweep:
    """``base`` config data, ``grid`` of key -> values, and ``seeds`` for every setting."""

    name: str
    base: dict
    grid: dict | list = field(default_factory=dict)
    seeds: tuple[int, ...] = (0,)

    def points(self) -> list[tuple[str, LearnConfig]]:
        """(run name, config) for every setting and seed, in grid order (checked up front)."""
        if isinstance(self.grid, list):
            settings = list(self.grid)
        else:
            keys = list(self.grid)
            settings = [
                dict(zip(keys, values))
                for values in itertools.product(*(self.grid[k] for k in keys))
            ]
        out = []
        for setting in settings:
            for seed in self.seeds:
                data = {**self.base, **setting, "seed": seed}
                name = ",".join(f"{k}={_short(v)}" for k, v in {**setting, "seed": seed}.items())
                out.append((name, config_from_dict(data)))
        return out


def _short(value) -> str:
    """A value as it appears in a run name (mappings flattened: ``max_len=11``)."""
    if isinstance(value, dict):
        return "+".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def sweep_from_dict(data: dict) -> LearnSweep:
    """A sweep from plain data, with one clear error per malformed field."""
    if not isinstance(data, dict) or "base" not in data:
        raise RasplabError(
            "a learn sweep needs a mapping with 'base' (and 'grid', 'seeds', 'name')"
        )
    grid = data.get("grid") or {}
    if isinstance(grid, list):
        if not all(isinstance(s, dict) for s in grid):
            raise RasplabError("a learn sweep 'grid' list must hold mappings (one per setting)")
    elif not isinstance(grid, dict) or any(not isinstance(v, list) or not v for v in grid.values()):
        raise RasplabError("learn sweep 'grid' must map each key to a non-empty list of values")
    seeds = data.get("seeds", [0])
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
    ):
        raise RasplabError(
            f"learn sweep 'seeds' must be a non-empty list of non-negative integers; got {seeds!r}"
        )
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise RasplabError(
            f"learn sweep 'seeds' lists seed {repeated[0]} more than once (one run per seed)"
        )
    unknown = set(data) - {"name", "base", "grid", "seeds"}
    if unknown:
        raise RasplabError(f"unknown learn sweep keys: {', '.join(sorted(unknown))}")
    return LearnSweep(str(data.get("name", "sweep")), dict(data["base"]), grid, tuple(seeds))


def load_sweep(path: str | Path) -> LearnSweep:
    """Read a sweep YAML file (a key given twice in one mapping is refused, as ``sweep`` does)."""
    return sweep_from_dict(read_yaml(path))


def run_sweep(
    sweep: LearnSweep, out: str | Path, log: Callable[[str], None] | None = None
) -> list[dict]:
    """Run every point not yet done under ``out``, the pending seeds of one setting as one
    seed batch; return all results (with ``run`` names), in grid order."""
    out = Path(out)
    points = sweep.points()
    groups: dict[str, list[tuple[str, LearnConfig]]] = {}
    for name, config in points:
        groups.setdefault(_setting_key(config), []).append((name, config))
    for i, group in enumerate(groups.values(), 1):
        pending = [(n, c) for n, c in group if not (out / n / "result.json").is_file()]
        if pending:
            if log:
                log(f"[{i}/{len(groups)}] {', '.join(n for n, _ in pending)}")
            learn_seeds([c for _, c in pending], [out / n for n, _ in pending])
    rows = []
    for name, config in points:
        result = json.loads((out / name / "result.json").read_text())
        setting = {k: v for k, v in config.to_dict().items() if k != "seed"}
        rows.append({"run": name, "seed": config.seed, "setting": setting, **result})
    return rows


def _setting_key(config: LearnConfig) -> str:
    return json.dumps({k: v for k, v in config.to_dict().items() if k != "seed"}, sort_keys=True)


def summarize(rows: list[dict]) -> list[dict]:
    """One row per setting: best-by-validation test accuracy, mean and sd over seeds, the
    program's accuracy of the best seed, the lowest agreement, the mean seconds and the CPU
    seconds of the process that trained the setting's last seed (a seed batch shares one),
    and how many seeds were exported to rasplab.lang."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(json.dumps(row["setting"], sort_keys=True), []).append(row)
    out = []
    for key, group in groups.items():
        best = max(group, key=lambda r: (r["val_accuracy"], -r["seed"]))
        tests = [r["test_accuracy"] for r in group]
        out.append(
            {
                "setting": json.loads(key),
                "seeds": len(group),
                "best_val_test_accuracy": best["test_accuracy"],
                "best_program_accuracy": best["program_accuracy"],
                "mean_test_accuracy": statistics.fmean(tests),
                "sd_test_accuracy": statistics.stdev(tests) if len(tests) > 1 else 0.0,
                "min_agreement": min(r["agreement"] for r in group),
                "mean_seconds": statistics.fmean(r["seconds"] for r in group),
                "cpu_seconds": max((r.get("cpu_seconds", 0.0) for r in group), default=0.0),
                "best_epoch": best["best_epoch"],
                "lang_exported": sum(bool(r.get("lang", {}).get("exported")) for r in group),
            }
        )
    return out
