"""The Figure-5-style picture of trace supervision: accuracy by length and by number of ones.

Each result is the JSON a ``rasplab trace-supervise`` run writes (``result.json``): per test
example its length, number of ones and whether the assembled model was right. The figure has
two panels, accuracy against the length and against the number of ones, one line per program,
with the longest training length marked.

>>> r = {"program": "p", "split": 2, "lengths": [1, 3, 3], "ones": [0, 1, 3],
...      "correct": [True, True, False]}
>>> by_value(r, "lengths")
([1, 3], [1.0, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def by_value(result: dict, key: str) -> tuple[list[int], list[float]]:
    """``(values, accuracy at each value)`` of ``result[key]`` (``lengths`` or ``ones``)."""
    values = np.array(result[key])
    correct = np.array(result["correct"], dtype=float)
    xs = sorted(set(values.tolist()))
    return xs, [float(correct[values == x].mean()) for x in xs]


def trace_figure(results: Sequence[dict], path: str | Path) -> None:
    """Write the two-panel PNG for ``results`` (one line per program) to ``path``."""
    from rasplab.reports.plots import plt, save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    for ax, key, label in zip(axes, ("lengths", "ones"), ("length", "number of ones")):
        for r in results:
            xs, acc = by_value(r, key)
            ax.plot(xs, acc, marker=".", label=r["program"])
        split = results[0]["split"] if results else 0
        ax.axvline(split + 0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel(label)
        ax.set_title(f"accuracy by {label} (train: <= {split})")
        ax.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel("accuracy (trace supervision)")
    axes[1].legend(fontsize=8, loc="lower left")
    save_figure(fig, Path(path))
