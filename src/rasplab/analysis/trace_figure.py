"""The Figure-5-style picture: accuracy by length and by number of ones, trace vs standard.

Two kinds of result, each a ``result.json``:

* a ``rasplab trace-supervise`` run (trace supervision): per test example its length, number
  of ones and whether the assembled model was right;
* a harness run (standard supervision, ``rasplab train`` or a sweep) sliced with
  ``eval.slices: [length, ones]``: per test set, slice and value, ``[right, count]``.

:func:`series` turns either into per-value ``(right, count)`` tables; the figure has two
panels, accuracy against the length and against the number of ones, one line per result
(trace supervision solid, standard supervision dashed), the longest training length marked.

>>> r = {"program": "p", "split": 2, "lengths": [1, 3, 3], "ones": [0, 1, 3],
...      "correct": [True, True, False]}
>>> by_value(r, "lengths")
([1, 3], [1.0, 0.5])
>>> h = {"variant": "rope", "config": {"model": {"layers": 2}, "train": {"bin": "1-2"}},
...      "slices": {"1-2": {"length": {"1": [1, 1], "2": [1, 2]}, "ones": {"0": [2, 2],
...      "2": [0, 1]}}}}
>>> by_value(h, "ones")
([0, 2], [1.0, 0.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rasplab.bins import Bin
from rasplab.errors import RasplabError

#: the figure's keys and the harness slice each one reads
KEYS = {"lengths": "length", "ones": "ones"}


@dataclass(frozen=True)
class Series:
    """One line pair of the figure: label, kind, training limit, per key value -> (right, n)."""

    label: str
    standard: bool
    split: int
    tables: dict


def series(result: dict) -> Series:
    """The :class:`Series` of a trace-supervise result or a sliced harness result."""
    if "correct" in result:
        tables = {}
        for key in KEYS:
            table: dict[int, list[int]] = {}
            for value, ok in zip(result[key], result["correct"]):
                cell = table.setdefault(int(value), [0, 0])
                cell[0] += bool(ok)
                cell[1] += 1
            tables[key] = table
        return Series(f"trace: {result['program']}", False, int(result["split"]), tables)
    slices = result.get("slices") or {}
    # start-up time: rasplab.reports loads the harness and torch; only standard runs need it
    from rasplab.reports.slices import pooled

    tables = {key: pooled(slices, name) for key, name in KEYS.items()}
    if not all(tables.values()):
        raise RasplabError(
            f"harness run {result.get('run_id', '?')!r} has no length and ones slices; "
            "train it with eval.slices=[length, ones]"
        )
    config = result.get("config") or {}
    train_bin = (config.get("train") or {}).get("bin")
    if not train_bin:
        raise RasplabError("harness run has no train.bin in its config; set train.bin")
    layers = (config.get("model") or {}).get("layers")
    label = f"standard: {result.get('variant', '?')}, {layers} layers"
    return Series(label, True, Bin.parse(train_bin).hi, tables)


def by_value(result: dict, key: str) -> tuple[list[int], list[float]]:
    """``(values, accuracy at each value)`` of ``key`` (``lengths`` or ``ones``)."""
    table = series(result).tables[key]
    xs = sorted(table)
    return xs, [table[x][0] / table[x][1] for x in xs]


def trace_figure(results: Sequence[dict], path: str | Path) -> None:
    """Write the two-panel PNG for ``results`` (one line each) to ``path``."""
    from rasplab.plotting import plt, save_figure  # start-up time: matplotlib

    lines = [series(r) for r in results]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for ax, key, label in zip(axes, KEYS, ("length", "number of ones")):
        for s in lines:
            xs = sorted(s.tables[key])
            acc = [s.tables[key][x][0] / s.tables[key][x][1] for x in xs]
            ax.plot(xs, acc, "--" if s.standard else "-", marker=".", label=s.label)
        split = lines[0].split if lines else 0
        ax.axvline(split + 0.5, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel(label)
        ax.set_title(f"accuracy by {label} (train: <= {split})")
        ax.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel("accuracy")
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    save_figure(fig, Path(path))
