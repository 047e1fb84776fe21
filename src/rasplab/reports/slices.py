"""Accuracy by slice (``eval.slices``): per number of ones, per length, inside and past training.

A sliced run stores, per test set, slice and value, ``[right, count]``. Here the test sets of
a run are pooled (summed per value), and each slice is split at the longest training length
``T`` (a count such as the number of ones never exceeds the length, so values above ``T``
were never seen in training): ALTA's Table 3 column "Ones > 20" is the ``ones`` slice past
``T = 20``. Three outputs for the report:

* :func:`slice_markdown`: per setting and slice, accuracy at values <= T and > T (mean over
  seeds) with the number of test examples on each side;
* :func:`slices_csv`: every run's pooled ``right`` and ``count`` per slice and value;
* :func:`accuracy_by_slice_figure`: one panel per slice, accuracy against the value per
  setting (all seeds pooled), the training limit marked.

>>> metrics = {"1-2": {"ones": {"0": [3, 3], "2": [0, 1]}}, "3-4": {"ones": {"2": [1, 1]}}}
>>> pooled(metrics, "ones")
{0: [3, 3], 2: [1, 2]}
>>> side_accuracy(pooled(metrics, "ones"), 1)
((1.0, 3), (0.5, 2))
"""

from __future__ import annotations

from collections import defaultdict

from rasplab.bins import Bin
from rasplab.reports.aggregate import GroupSummary, spread
from rasplab.tasks import get_task


def pooled(slices: dict, name: str) -> dict[int, list[int]]:
    """Per value of slice ``name``, ``[right, count]`` summed over a run's test sets."""
    out: dict[int, list[int]] = {}
    for by_slice in slices.values():
        for value, (right, count) in by_slice.get(name, {}).items():
            cell = out.setdefault(int(value), [0, 0])
            cell[0] += right
            cell[1] += count
    return dict(sorted(out.items()))


def side_accuracy(table: dict[int, list[int]], limit: int):
    """``((accuracy, count) at values <= limit, (accuracy, count) above it)``; accuracy None
    where a side has no examples."""
    sides = []
    for inside in (True, False):
        cells = [c for v, c in table.items() if (v <= limit) == inside]
        right, count = sum(c[0] for c in cells), sum(c[1] for c in cells)
        sides.append((right / count if count else None, count))
    return tuple(sides)


def train_limit(record) -> int:
    """The longest training length of a stored run (``train.bin``, else the task's default)."""
    name = (record.config.get("train") or {}).get("bin")
    if name:
        return Bin.parse(name).hi
    return get_task(record.task, **(record.config.get("task_options") or {})).train_bin.hi


def _sliced(records, group: GroupSummary) -> list:
    """The finished, sliced runs of ``group``."""
    return [
        r
        for r in records
        if r.task == group.task
        and r.setting_hash == group.setting_hash
        and r.status == "done"
        and r.metrics
        and r.metrics.get("slices")
    ]


def slice_names(records) -> list[str]:
    """Every slice name any finished run stores, in first-seen order."""
    names: dict[str, None] = {}
    for r in records:
        for by_slice in ((r.metrics or {}).get("slices") or {}).values():
            names.update(dict.fromkeys(by_slice))
    return list(names)


def slice_markdown(groups: list[GroupSummary], records) -> list[str]:
    """The report section: per setting and slice, accuracy (%) inside and past training."""
    names = slice_names(records)
    if not names:
        return []
    lines = [
        "## Accuracy by slice",
        "",
        "Test sets pooled; a slice's values split at the longest training length T (values",
        "above it were never seen in training, e.g. more ones than any training input held).",
        "Mean ± std over seeds; n = test examples on each side (of one seed).",
        "",
        "| task | variant | seeds | slice | <= T | > T |",
        "|---|---|---|---|---|---|",
    ]
    for g in groups:
        runs = _sliced(records, g)
        for name in names:
            sides = [side_accuracy(pooled(r.metrics["slices"], name), train_limit(r)) for r in runs]
            if not sides or not any(s[0][1] or s[1][1] for s in sides):
                continue
            limit = train_limit(runs[0])
            cells = []
            for k in (0, 1):
                s = spread(x[k][0] * 100 for x in sides if x[k][0] is not None)
                n = sides[0][k][1]
                cells.append(f"{s.text(1)} (n={n})" if s else "–")
            lines.append(
                f"| {g.task} | {g.label} | {len(runs)} | {name} (T={limit}) | "
                + " | ".join(cells)
                + " |"
            )
    return [*lines, ""]


def slices_csv(records) -> str:
    """One row per sliced run, slice and value: the pooled right and count."""
    rows = ["run_id,task,variant,seed,slice,value,right,count"]
    for r in records:
        slices = (r.metrics or {}).get("slices")
        if r.status != "done" or not slices:
            continue
        for name in slice_names([r]):
            for value, (right, count) in pooled(slices, name).items():
                rows.append(
                    f"{r.run_id},{r.task},{r.variant},{r.seed},{name},{value},{right},{count}"
                )
    return "\n".join(rows) + "\n"


def accuracy_by_slice_figure(groups: list[GroupSummary], records):
    """One panel per (task, slice): accuracy against the value per setting, seeds pooled."""
    # start-up time: matplotlib loads only when a figure is drawn
    from rasplab.plotting import panel_grid

    panels = [(t, s) for t in sorted({g.task for g in groups}) for s in slice_names(
        [r for r in records if r.task == t])]  # fmt: skip
    fig, axes = panel_grid(len(panels), width=4.6, height=3.0)
    for ax, (task, name) in zip(axes, panels):
        limit = None
        for g in (g for g in groups if g.task == task):
            runs = _sliced(records, g)
            total: dict[int, list[int]] = defaultdict(lambda: [0, 0])
            for r in runs:
                limit = train_limit(r)
                for v, (right, count) in pooled(r.metrics["slices"], name).items():
                    total[v][0] += right
                    total[v][1] += count
            if total:
                xs = sorted(total)
                ax.plot(xs, [total[v][0] / total[v][1] for v in xs], ".-", label=g.label, ms=4)
        if limit is not None:
            ax.axvline(limit + 0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_title(f"{task}: accuracy by {name}", fontsize=9)
        ax.set_xlabel(name)
        ax.set_ylim(-0.05, 1.05)
        ax.legend(fontsize=6)
    return fig


__all__ = ["accuracy_by_slice_figure", "pooled", "side_accuracy", "slice_markdown", "slices_csv"]
