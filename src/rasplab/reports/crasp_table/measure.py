"""Measured length generalization per task and positional encoding, from a results store.

For each task and encoding the finished runs of the store (optionally only those of a sweep
config's current grid) are grouped and summarized per length bin. The encoding of a run is
read from its stored resolved config, never from its variant name (:func:`encoding_of`):
APE is ``model.pe = ape`` without the positional penalty, **APE+reg** is ``model.pe = ape``
with ``train.pe_penalty > 0`` (seed 003's regularizer, :mod:`rasplab.harness.regularizer`),
NoPE is ``model.pe = nope``; other encodings are left out.

* the **in-distribution bins** of a run are the harness's own (the test bins inside the
  training bin, :func:`rasplab.harness.setup.in_distribution`); the others are
  **out-of-distribution** bins;
* a seed is **fitted** when its accuracy is at least ``threshold`` on every in-distribution
  bin (the harness's own ``fitted`` flag is the special case ``threshold = 1``);
* the encoding **generalizes** on the task when at least one seed fitted and the mean over
  the fitted seeds is at least ``threshold`` on every out-of-distribution bin; with no
  fitted seed the status is ``"not fitted"`` (a run that did not learn the training lengths
  says nothing about length generalization).

Means are reported over all finished seeds and over fitted seeds. Accuracies are the
harness's whole-sequence accuracies (every scored position right).

>>> m = Measurement("t", "APE", ("1-50", "51-100"), ("1-50",), {}, (0, 1), (0,),
...                 {"1-50": 0.95, "51-100": 0.5}, {"1-50": 1.0, "51-100": 0.9}, 0, 0.9)
>>> m.ood_bins, m.status
(('51-100',), 'generalizes')
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from rasplab.bins import bin_order, is_bin
from rasplab.errors import RasplabError
from rasplab.harness.config import experiment_from_dict
from rasplab.harness.select import grid_ids
from rasplab.harness.setup import build_task, in_distribution, run_bins
from rasplab.harness.store import ResultsStore
from rasplab.harness.sweepconfig import load_sweep

ENCODINGS = {"ape": "APE", "nope": "NoPE"}
"""``model.pe`` value -> the encoding's name in the table (for runs without the regularizer)."""

REGULARIZED = "APE+reg"
"""The name of APE runs trained with the positional penalty (``train.pe_penalty > 0``)."""


def encoding_of(config: dict) -> str | None:
    """The table's encoding of a stored resolved config: "APE", "APE+reg", "NoPE" or None
    (another encoding). Only ``model.pe`` and ``train.pe_penalty`` decide (a missing
    ``pe_penalty``, as in stores written before it existed, is 0); ``train.weight_penalty``
    alone keeps a run in APE.

    >>> encoding_of({"model": {"pe": "ape"}, "train": {"pe_penalty": 1e-3}})
    'APE+reg'
    >>> encoding_of({"model": {"pe": "ape"}, "train": {"weight_penalty": 0.01}})
    'APE'
    >>> encoding_of({"model": {"pe": "nope"}}), encoding_of({"model": {"pe": "rope"}})
    ('NoPE', None)
    """
    pe = (config.get("model") or {}).get("pe")
    if pe not in ENCODINGS:
        return None
    penalty = (config.get("train") or {}).get("pe_penalty") or 0.0
    if pe == "ape" and isinstance(penalty, (int, float)) and penalty > 0:
        return REGULARIZED
    return ENCODINGS[pe]


@dataclass(frozen=True)
class Measurement:
    """One task and encoding: per-bin mean accuracy over all and over fitted seeds."""

    task: str
    encoding: str
    bins: tuple[str, ...]
    id_bins: tuple[str, ...]
    counts: dict
    seeds: tuple[int, ...]
    fitted_seeds: tuple[int, ...]
    all: dict
    fitted: dict
    unfinished: int
    threshold: float

    @property
    def ood_bins(self) -> tuple[str, ...]:
        """The bins outside the training lengths."""
        return tuple(b for b in self.bins if b not in self.id_bins)

    @property
    def status(self) -> str:
        """``"generalizes"``, ``"does not generalize"``, ``"not fitted"`` or ``"no longer
        bins"`` (every test bin is inside the training lengths)."""
        if not self.fitted_seeds:
            return "not fitted"
        if not self.ood_bins:
            return "no longer bins"
        ok = all(self.fitted.get(b, 0.0) >= self.threshold for b in self.ood_bins)
        return "generalizes" if ok else "does not generalize"


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    return sum(values) / len(values)


def _id_bins(record) -> tuple[str, ...]:
    """The in-distribution bins of a stored run, by the harness's own rule."""
    try:
        config = experiment_from_dict(record.config)
        train_bin, test_bins = run_bins(config, build_task(config))
    except RasplabError as err:
        raise RasplabError(f"stored run {record.run_id} has an unusable config: {err}") from err
    return tuple(in_distribution(train_bin, test_bins))


def summarize_runs(task: str, encoding: str, runs: list, threshold: float) -> Measurement:
    """The :class:`Measurement` of one task's runs with one encoding (one setting)."""
    done = [r for r in runs if r.status == "done" and r.metrics]
    bins = tuple(bin_order(b for r in done for b in r.metrics["bins"] if is_bin(b)))
    id_bins = _id_bins(done[0]) if done else ()
    fitted = [r for r in done if all(r.metrics["bins"].get(b, 0.0) >= threshold for b in id_bins)]
    counts: dict = {}
    for r in done:
        for b, c in r.metrics.get("counts", {}).items():
            counts.setdefault(b, c)

    def means(group) -> dict:
        return {
            b: mean([r.metrics["bins"][b] for r in group if b in r.metrics["bins"]])
            for b in bins
            if any(b in r.metrics["bins"] for r in group)
        }

    return Measurement(
        task=task,
        encoding=encoding,
        bins=bins,
        id_bins=id_bins,
        counts={b: counts[b] for b in bins if b in counts},
        seeds=tuple(sorted(r.seed for r in done)),
        fitted_seeds=tuple(sorted(r.seed for r in fitted)),
        all=means(done),
        fitted=means(fitted),
        unfinished=len(runs) - len(done),
        threshold=threshold,
    )


def check_threshold(threshold: float) -> float:
    """``threshold`` if it is in (0, 1], else a RasplabError."""
    if not 0.0 < threshold <= 1.0:
        raise RasplabError(f"--threshold must be in (0, 1] (got {threshold})")
    return float(threshold)


def measure(
    db: str | Path,
    config: str | Path | None = None,
    tasks: list[str] | None = None,
    threshold: float = 0.9,
) -> dict[tuple[str, str], Measurement]:
    """``{(task, "APE" | "NoPE" | "APE+reg"): Measurement}`` for the runs in ``db`` (only
    those of the sweep ``config``'s current grid when given; only ``tasks`` when given).

    Two settings (different ``setting_hash``) of one task and encoding are an error, e.g.
    two learning rates of APE; APE with and without the positional penalty are two
    encodings, not two settings."""
    check_threshold(threshold)
    grid = None if config is None else grid_ids(load_sweep(config), db)
    with ResultsStore(db, create=False) as store:
        records = store.runs()
    if grid is not None and records and not any(r.run_id in grid for r in records):
        raise RasplabError(
            f"none of the {len(records)} runs in {str(db)!r} belongs to the current grid of "
            f"{str(config)!r} (a run id is the hash of its resolved config, so the config or "
            "a default changed since they ran); leave out --config to use every run"
        )
    groups: dict = defaultdict(list)
    for r in records:
        encoding = encoding_of(r.config)
        if encoding is None or (grid is not None and r.run_id not in grid):
            continue
        if tasks is not None and r.task not in tasks:
            continue
        groups[(r.task, encoding)].append(r)
    out = {}
    for (task, encoding), runs in sorted(groups.items()):
        settings = {r.setting_hash for r in runs}
        if len(settings) > 1:
            raise RasplabError(
                f"results database {str(db)!r} holds {len(settings)} different settings for "
                f"task {task} with {encoding}; pass --config CONFIG to keep one sweep's grid"
            )
        out[(task, encoding)] = summarize_runs(task, encoding, runs, threshold)
    return out


__all__ = [
    "ENCODINGS",
    "REGULARIZED",
    "Measurement",
    "check_threshold",
    "encoding_of",
    "mean",
    "measure",
    "summarize_runs",
]
