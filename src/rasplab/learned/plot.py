"""The length-generalization plot of a learned-program sweep: accuracy of the discretised
model at each length past training, mean and spread over seeds, one line per task and
training length."""

from __future__ import annotations

import statistics
from pathlib import Path


def by_length_series(rows: list[dict]) -> dict[str, dict[int, list[float]]]:
    """``{"task (n=10)": {length: [accuracy per seed]}}`` from sweep rows with ``by_length``.

    >>> rows = [{"task": "rasp_hist", "by_length": {"11": {"model": 0.5}}, "trained_up_to": 10}]
    >>> by_length_series(rows)
    {'rasp_hist (n=10)': {11: [0.5]}}
    """
    series: dict[str, dict[int, list[float]]] = {}
    for row in rows:
        if not row.get("by_length"):
            continue
        label = f"{row['task']} (n={row['trained_up_to']})"
        for length, acc in row["by_length"].items():
            series.setdefault(label, {}).setdefault(int(length), []).append(acc["model"])
    return series


def plot_by_length(rows: list[dict], path: str | Path) -> Path:
    """Write the PNG (atomically) and return its path. A legend only when there are lines (a
    sweep whose runs tested no length past training gives an empty plot saying so)."""
    from rasplab.plotting import plt, save_figure  # start-up time: matplotlib

    fig, ax = plt.subplots(figsize=(7, 4))
    series = by_length_series(rows)
    for label, points in sorted(series.items()):
        xs = sorted(points)
        means = [statistics.fmean(points[x]) for x in xs]
        sds = [statistics.stdev(points[x]) if len(points[x]) > 1 else 0.0 for x in xs]
        ax.errorbar(xs, means, yerr=sds, marker="o", capsize=3, label=label)
    ax.set_xlabel("test length (symbols)")
    ax.set_ylabel("accuracy per position")
    ax.set_title("discretised model (= program), past the training length", fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if series:
        ax.legend(fontsize=8)
    else:  # a sweep that tested no length past training: an empty plot that says so
        ax.text(0.5, 0.5, "no test lengths past the training length", ha="center", va="center")
    fig.tight_layout()
    path = Path(path)
    save_figure(fig, path, dpi=120, tight=False)
    return path
