"""Hyper-parameter selection as seed 003 does it, then the seeds: :func:`run_selection`.

Seed 003 (Huang et al., Appendix E.3) picks one configuration per task (and positional
encoding) before running seeds: it sweeps {1, 2, 4} layers x {1, 2, 4} heads x {16, 64, 256}
width x {1e-3, 1e-4} learning rate, keeps the configurations with 100% on the training bin
(the in-distribution test set), chooses the one with the best accuracy on the first longer
bin (51-100), the simplest on ties ("number of layers > number of heads > model dimension"),
and then runs seeds with it, reporting the mean of the successful (fitted) runs.

A sweep config asks for this with a ``select`` section::

    select:
      grid:                    # candidates; the product in this order is the complexity
        model.layers: [1, 2, 4]    # order (first key most significant), simplest first
        model.heads: [1, 2, 4]
        model.width: [16, 64, 256]
        train.lr: [1.0e-3, 1.0e-4]
      seed: 0                  # the seed of the selection runs (default 0)
      stop: all                # all: the whole candidate grid (the appendix);
                               # first_fit: stop at the first candidate that fits (§5's
                               # "in order of increasing complexity until ... performs well")

The steps, for every (task, variant) of the sweep grid: run the candidates (a sweep named
``<name>-select``, resumable like any sweep, in the same results store), choose, record the
choice in ``<db stem>-selection.json`` beside the store, then run the sweep's own grid (all
seeds) with each (task, variant) set to its choice. When no candidate fits, the one with the
best in-distribution accuracy is taken and the record says so (the paper then tried a larger
model, which is outside a CPU budget).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rasplab.errors import RasplabError
from rasplab.files import atomic_write_text
from rasplab.harness.config import flatten
from rasplab.harness.store import ResultsStore
from rasplab.harness.sweepconfig import SweepConfig
from rasplab.harness.validation import SweepOptions

STOPS = ("all", "first_fit")


def selection_path(db: str | Path) -> Path:
    """Where the choices of a selection sweep into ``db`` are recorded."""
    db = Path(db)
    return db.parent / f"{db.stem}-selection.json"


def candidates(select: dict) -> list[dict]:
    """The candidate settings (dotted key → value) in order of increasing complexity.

    >>> [c["model.layers"] for c in candidates({"grid": {"model.layers": [1, 2],
    ...                                                    "train.lr": [1e-3, 1e-4]}})]
    [1, 1, 2, 2]
    """
    grid = select.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise RasplabError("sweep select.grid must map dotted keys to lists of candidates")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise RasplabError(f"sweep select.grid.{key} must be a non-empty list")
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def choose(results: list[tuple[dict, object]]) -> tuple[int, str]:
    """Index of the chosen candidate and how it was chosen, from (settings, RunResult-like
    with ``fitted`` and ``bins``) pairs in complexity order.

    >>> from types import SimpleNamespace as R
    >>> rs = [({}, R(fitted=False, bins={"1-50": .9, "51-100": .8})),
    ...       ({}, R(fitted=True, bins={"1-50": 1.0, "51-100": .5})),
    ...       ({}, R(fitted=True, bins={"1-50": 1.0, "51-100": .5}))]
    >>> choose(rs)
    (1, 'fitted, best on 51-100')
    """

    def first_longer(r) -> float:
        names = list(r.bins)
        return r.bins[names[1]] if len(names) > 1 else r.bins[names[0]]

    fitted = [i for i, (_, r) in enumerate(results) if r.fitted]
    if fitted:
        best = max(fitted, key=lambda i: (first_longer(results[i][1]), -i))
        longer = list(results[best][1].bins)[1:2] or list(results[best][1].bins)
        return best, f"fitted, best on {longer[0]}"
    best = max(range(len(results)), key=lambda i: (next(iter(results[i][1].bins.values())), -i))
    return best, "no candidate fitted: best in distribution"


def run_selection(
    config: SweepConfig,
    db: str | Path,
    run_grid: Callable[[SweepConfig, str | Path, SweepOptions], Any],
    options: SweepOptions,
) -> Any:
    """Select per (task, variant), record the choices, then run the grid; returns the final
    sweep's summary. ``run_grid(sweep, db, options)`` runs one plain grid
    (:func:`~rasplab.harness.sweep.run_grid`; passed in, so selection needs no import of
    the sweep that calls it)."""
    select = dict(config.select)
    stop = select.get("stop", "all")
    if stop not in STOPS:
        raise RasplabError(f"sweep select.stop must be one of {', '.join(STOPS)}; got {stop!r}")
    seed = select.get("seed", 0)
    cands = candidates(select)
    plain = dataclasses.replace(config, select={})
    # the candidates' keys win over the sweep's own overrides while selecting
    chosen_keys = set(select["grid"])
    trimmed = tuple(
        {**o, "set": {k: v for k, v in o["set"].items() if k not in chosen_keys}}
        for o in plain.overrides
    )
    points = _points(plain)
    record: dict = {}
    for point in points:
        label = ", ".join(f"{k}={v}" for k, v in point.items())
        results: list[tuple[dict, object]] = []
        for cand in cands if stop == "first_fit" else [None]:
            grid = {**{k: [v] for k, v in point.items()}, "seed": [seed]}
            grid.update({k: [v] for k, v in cand.items()} if cand else select["grid"])
            sweep = dataclasses.replace(
                plain, name=f"{config.name}-select", grid=grid, overrides=trimmed
            )
            summary = run_grid(sweep, db, options)
            with ResultsStore(db) as store:
                got = [store.get(run_id) for run_id in summary.run_ids]
            for rec in got:
                if rec is None or rec.status != "done":
                    continue
                flat = flatten(rec.config)
                results.append(({k: flat[k] for k in select["grid"]}, _Result(rec)))
            if cand is not None and results and results[-1][1].fitted:
                break
        if not results:
            raise RasplabError(f"selection for {label}: no candidate run finished")
        results = _in_order(results, cands)
        best, how = choose(results)
        sets, chosen = results[best]
        record[label] = {
            "point": point,
            "chosen": sets,
            "how": how,
            "bins": chosen.bins,
            "candidates_run": len(results),
            "candidates_fitted": sum(r.fitted for _, r in results),
        }
    atomic_write_text(selection_path(db), json.dumps(record, indent=1, sort_keys=True))
    return run_grid(_with_choices(plain, record), db, options)


def _with_choices(plain: SweepConfig, record: dict) -> SweepConfig:
    """The sweep's grid with each recorded (task, variant) point set to its choice."""
    chosen = [
        {"match": dict(r["point"]), "set": copy.deepcopy(r["chosen"])} for r in record.values()
    ]
    return dataclasses.replace(plain, overrides=(*plain.overrides, *chosen))


def grid_ids(config: SweepConfig, db: str | Path) -> set[str]:
    """The run ids of a sweep config's current grid in ``db`` (what its report shows): for
    a selection sweep, the seeds run with the recorded choices (none before the choice)."""
    if not config.select:
        return {e.hash() for e in config.expand()}
    path = selection_path(db)
    if not path.is_file():
        return set()
    plain = dataclasses.replace(config, select={})
    return {e.hash() for e in _with_choices(plain, json.loads(path.read_text())).expand()}


class _Result:
    """The fields of a stored run :func:`choose` reads."""

    def __init__(self, record) -> None:
        self.fitted = bool(record.fitted)
        self.bins = dict(record.metrics["bins"])


def _points(config: SweepConfig) -> list[dict]:
    """The sweep grid's points without the seed (each selected once), in grid order."""
    keys = [k for k in config.grid if k != "seed"]
    return [dict(zip(keys, c)) for c in itertools.product(*(config.grid[k] for k in keys))]


def _in_order(results: list, cands: list[dict]) -> list:
    """Results sorted by their candidate's place in the complexity order."""
    rank = {json.dumps(c, sort_keys=True): i for i, c in enumerate(cands)}
    return sorted(results, key=lambda r: rank.get(json.dumps(r[0], sort_keys=True), len(rank)))
