"""Aggregate stored runs: per (task, variant setting) and bin or split, the spread over seeds.

Two aggregates are reported side by side: over **all** finished seeds, and over the seeds that
fitted the training bin (100% on the in-distribution test bins). Published tables often show
only the second and drop failed seeds silently; rasplab always shows both, with the counts.

>>> s = spread([1.0, 0.5, 0.0])
>>> (s.mean, round(s.std, 3), s.min, s.max, s.n)
(0.5, 0.5, 0.0, 1.0, 3)
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from rasplab.bins import bin_order
from rasplab.harness.config import flatten


@dataclass(frozen=True)
class Spread:
    """Mean, sample standard deviation (0 for one value), min, max and count of values."""

    mean: float
    std: float
    min: float
    max: float
    n: int

    def text(self, digits: int = 3) -> str:
        """``mean ± std`` (or just the mean for one value)."""
        if self.n == 1:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"


def spread(values) -> Spread | None:
    """The :class:`Spread` of ``values``, or None when there are none."""
    values = [float(v) for v in values]
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return Spread(mean=mean, std=std, min=min(values), max=max(values), n=n)


@dataclass(frozen=True)
class GroupSummary:
    """One row of the summary: a task and variant setting, with per-bin spreads over seeds."""

    task: str
    variant: str
    label: str
    setting_hash: str
    bins: tuple[str, ...]
    seeds: tuple[int, ...]
    fitted_seeds: tuple[int, ...]
    all: dict
    fitted: dict
    mse: dict | None
    counts: dict
    unfinished: int
    pe: str | None = None  # ``model.pe`` of the setting's resolved config (None: not recorded)


def _labels(records) -> dict[str, str]:
    """A label per setting: the variant, plus the keys that tell same-variant settings apart."""
    by_variant: dict = defaultdict(dict)
    for r in records:
        by_variant[(r.task, r.variant)][r.setting_hash] = flatten(r.config)
    labels = {}
    for (_, variant), settings in by_variant.items():
        if len(settings) == 1:
            labels.update({h: variant for h in settings})
            continue
        keys = sorted({k for cfg in settings.values() for k in cfg} - {"seed"})
        differ = [k for k in keys if len({repr(cfg.get(k)) for cfg in settings.values()}) > 1]
        for h, cfg in settings.items():
            labels[h] = f"{variant} (" + ", ".join(f"{k}={cfg.get(k)}" for k in differ) + ")"
    return labels


def setting_pe(runs) -> str | None:
    """The positional encoding (``model.pe``) of one setting's runs, read from their resolved
    configs; None when a run does not record it (or, impossibly for one setting, they differ).

    >>> class R:
    ...     config = {"model": {"pe": "ape"}}
    >>> setting_pe([R(), R()])
    'ape'
    """
    found = {(r.config.get("model") or {}).get("pe") for r in runs}
    return found.pop() if len(found) == 1 else None


def summarize(records) -> list[GroupSummary]:
    """Group runs by (task, setting) and aggregate finished seeds; order: task, label."""
    labels = _labels(records)
    groups: dict = defaultdict(list)
    for r in records:
        groups[(r.task, r.setting_hash)].append(r)
    out = []
    for (task, setting), runs in groups.items():
        done = [r for r in runs if r.status == "done" and r.metrics]
        fitted = [r for r in done if r.fitted]
        bins = bin_order(b for r in done for b in r.metrics["bins"])
        regression = any(r.metrics.get("mse") for r in done)
        counts = {}
        for r in done:
            for b, c in r.metrics.get("counts", {}).items():
                counts.setdefault(b, c)
        out.append(
            GroupSummary(
                task=task,
                variant=runs[0].variant,
                label=labels[setting],
                setting_hash=setting,
                bins=tuple(bins),
                seeds=tuple(sorted(r.seed for r in done)),
                fitted_seeds=tuple(sorted(r.seed for r in fitted)),
                all={
                    b: spread(r.metrics["bins"][b] for r in done if b in r.metrics["bins"])
                    for b in bins
                },
                fitted={
                    b: spread(r.metrics["bins"][b] for r in fitted if b in r.metrics["bins"])
                    for b in bins
                },
                mse={
                    b: spread(r.metrics["mse"][b] for r in done if r.metrics.get("mse"))
                    for b in bins
                }
                if regression
                else None,
                counts=counts,
                unfinished=len(runs) - len(done),
                pe=setting_pe(runs),
            )
        )
    return sorted(out, key=lambda g: (g.task, g.label))
