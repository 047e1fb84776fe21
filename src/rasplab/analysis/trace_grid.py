"""Trace-supervision runs from a grid file (programs x seeds), resumable run by run.

A grid file names the runs and the seeds::

    runs:
      - {program: parity_sequential_relative,
         config: configs/trace_supervision/parity_sequential_relative_cpu.yaml}
    seeds: [0, 1]

:func:`run_trace_grid` goes through the grid in order (program-major): each run's folder is
``OUT/PROGRAM/seed=S``; a folder that already holds the ``result.json`` of the same resolved
config is kept as it is, so a grid stopped at any moment (the result is written atomically,
last) goes on with the runs it has not finished. A folder holding the result of another
config is refused rather than mixed in. :func:`grid_summary` gives, per program, the mean and
spread over seeds of ALTA's three numbers (length <= 20, length > 20, ones > 20).

>>> grid = trace_grid_from_dict({"runs": [{"program": "parity_sequential_relative"}],
...                              "seeds": [0, 1]})
>>> [(r.program, r.config, s) for r, s in grid.points()]
[('parity_sequential_relative', None, 0), ('parity_sequential_relative', None, 1)]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from rasplab.analysis.trace_config import TraceConfig, load_trace_config
from rasplab.errors import RasplabError
from rasplab.reports.aggregate import spread

METRICS = ("length_le_20", "length_gt_20", "ones_gt_20")


@dataclass(frozen=True)
class GridRun:
    """One program of the grid and its trace config file (None: the CPU-scale defaults)."""

    program: str
    config: str | None = None


@dataclass(frozen=True)
class TraceGrid:
    """The runs of a grid and the seeds each one is run with."""

    runs: tuple[GridRun, ...]
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        if not self.runs:
            raise RasplabError("trace grid 'runs' must list at least one {program: NAME}")
        if not self.seeds or any(not isinstance(s, int) or s < 0 for s in self.seeds):
            raise RasplabError(f"trace grid 'seeds' must list seeds >= 0; got {self.seeds!r}")
        if len(set(self.seeds)) < len(self.seeds):
            raise RasplabError(f"trace grid 'seeds' lists a seed twice: {list(self.seeds)}")

    def points(self) -> list[tuple[GridRun, int]]:
        """Every (run, seed), program-major."""
        return [(run, seed) for run in self.runs for seed in self.seeds]


def trace_grid_from_dict(data) -> TraceGrid:
    """A :class:`TraceGrid` from plain data (``runs``, ``seeds``); bad keys are refused."""
    if not isinstance(data, dict) or set(data) - {"runs", "seeds"}:
        raise RasplabError("a trace grid is a mapping with keys 'runs' and 'seeds'")
    runs = []
    for item in data.get("runs") or []:
        if not isinstance(item, dict) or "program" not in item or set(item) - {"program", "config"}:
            raise RasplabError(
                f"trace grid run {item!r} must be a mapping {{program: NAME, config: FILE}}"
            )
        runs.append(GridRun(str(item["program"]), item.get("config")))
    return TraceGrid(tuple(runs), tuple(data.get("seeds") or (0,)))


def load_trace_grid(path: str | Path) -> TraceGrid:
    """Read a grid file (YAML, ``safe_load``)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise RasplabError(f"cannot read trace grid {str(path)!r}: {err}") from None
    return trace_grid_from_dict(data)


def run_folder(out: str | Path, program: str, seed: int) -> Path:
    """``OUT/PROGRAM/seed=S``."""
    return Path(out) / program / f"seed={seed}"


def stored(folder: Path, config: TraceConfig) -> dict | None:
    """The result in ``folder`` when it was made with ``config``; None when there is none."""
    path = folder / "result.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RasplabError(f"cannot read {str(path)!r}: {err}; remove it to run again") from None
    made = data.get("config") or {}
    if any(made.get(k) != v for k, v in config.to_dict().items()):
        raise RasplabError(
            f"{str(path)!r} holds a run of another config; remove the folder or choose "
            "another --out"
        )
    return data


def run_trace_grid(
    grid: TraceGrid, out: str | Path, run_one, log=None, overrides: dict | None = None
) -> list[dict]:
    """Run every point of ``grid`` not yet stored under ``out``; returns one row per point
    (``program``, ``seed``, ``folder``, ``resumed`` and the record). ``run_one(program,
    config, seed, folder)`` runs one with ``overrides`` (config keys set on every run) and
    writes its ``result.json`` (the CLI's ``trace_record``)."""
    rows = []
    for run, seed in grid.points():
        config = load_trace_config(run.config, {**(overrides or {}), "seed": seed})
        folder = run_folder(out, run.program, seed)
        data = stored(folder, config)
        if data is None:
            if log is not None:
                log(f"trace grid: {run.program} seed {seed} -> {folder}")
            record = run_one(run.program, run.config, seed, folder)
        else:
            record = data["record"]
        rows.append({"program": run.program, "seed": seed, "folder": str(folder),
                     "resumed": data is not None, **record})  # fmt: skip
    return rows


def grid_summary(rows: list[dict]) -> dict:
    """Per program: the seeds and, per metric, mean, std, min and max over them.

    >>> s = grid_summary([{"program": "p", "seed": 0, "ones_gt_20": 1.0, "length_le_20": 1.0,
    ...                    "length_gt_20": 0.5}, {"program": "p", "seed": 1, "ones_gt_20": 0.5,
    ...                    "length_le_20": 1.0, "length_gt_20": 0.7}])
    >>> s["p"]["seeds"], s["p"]["ones_gt_20"]["mean"]
    ([0, 1], 0.75)
    """
    out: dict = {}
    for program in dict.fromkeys(r["program"] for r in rows):
        mine = [r for r in rows if r["program"] == program]
        out[program] = {"seeds": [r["seed"] for r in mine]}
        for m in METRICS:
            s = spread(r[m] for r in mine)
            out[program][m] = {"mean": s.mean, "std": s.std, "min": s.min, "max": s.max}
    return out
