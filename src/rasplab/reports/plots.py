"""Plots rebuilt from the results store (PNG, matplotlib's Agg backend).

* ``accuracy_by_bin.png``: one panel per task; per variant the mean accuracy over all seeds by
  bin (solid), the min-max band over seeds, each seed as a dot, and the fitted-seed mean
  (dashed) — the length-generalization picture of seed 003, Figure 1; named splits
  (``eval.splits``) come after the bins on the same axis.
* ``accuracy_table.png``: the Figure-1-style grid, tasks × (variant, bin), mean over all seeds.
* ``training_curves.png``: in-distribution accuracy against step for every run, by variant.
"""

from __future__ import annotations

from rasplab.bins import bin_order, is_bin
from rasplab.plotting import panel_grid, plt, save_figure
from rasplab.reports.aggregate import GroupSummary

_grid = panel_grid  # the old private name, which reports.slices used
__all__ = [
    "accuracy_by_bin_figure",
    "accuracy_table_figure",
    "plt",
    "run_curves_figure",
    "save_figure",  # from rasplab.plotting; still importable from here
    "training_curves_figure",
]


def accuracy_by_bin_figure(groups: list[GroupSummary], records):
    """Accuracy by length bin per task and variant, with the spread over seeds."""
    tasks = sorted({g.task for g in groups})
    fig, axes = panel_grid(len(tasks))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labels = sorted({g.label for g in groups})
    color = {label: colors[i % len(colors)] for i, label in enumerate(labels)}
    for ax, task in zip(axes, tasks):
        rows = [g for g in groups if g.task == task and g.bins]
        bins = bin_order(b for g in rows for b in g.bins)
        for k, g in enumerate(rows):
            shift = (k - (len(rows) - 1) / 2) * 0.06
            xs = [bins.index(b) + shift for b in g.bins]
            c = color[g.label]
            ax.plot(xs, [g.all[b].mean for b in g.bins], "-o", color=c, label=g.label, ms=4)
            ax.fill_between(
                xs,
                [g.all[b].min for b in g.bins],
                [g.all[b].max for b in g.bins],
                color=c,
                alpha=0.15,
                lw=0,
            )
            fitted = [(x, g.fitted[b].mean) for x, b in zip(xs, g.bins) if g.fitted.get(b)]
            if fitted and len(g.fitted_seeds) != len(g.seeds):
                ax.plot(*zip(*fitted), "--", color=c, lw=1)
            for r in records:
                if r.task == task and r.setting_hash == g.setting_hash and r.metrics:
                    pts = [(bins.index(b) + shift, a) for b, a in r.metrics["bins"].items()]
                    ax.scatter(*zip(*pts), color=c, s=8, alpha=0.5, zorder=3)
        ax.set_xticks(range(len(bins)), bins)
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(task, fontsize=10)
        ax.set_xlabel("length bin" if all(map(is_bin, bins)) else "bin, then split", fontsize=8)
        ax.set_ylabel("accuracy", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        "accuracy by length bin: mean over all seeds (line), min-max (band),\n"
        "each seed (dots), mean over fitted seeds (dashed)",
        fontsize=8,
    )
    # keep the two-line title clear of the first row's titles (about 0.4 inch)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))
    return fig


def accuracy_table_figure(groups: list[GroupSummary]):
    """A heat map: rows are tasks, columns (variant, bin); cells the mean over all seeds."""
    tasks = sorted({g.task for g in groups})
    labels = sorted({g.label for g in groups})
    bins = bin_order(b for g in groups for b in g.bins)
    cols = [(label, b) for label in labels for b in bins]
    values = [[float("nan")] * len(cols) for _ in tasks]
    for g in groups:
        for b in g.bins:
            values[tasks.index(g.task)][cols.index((g.label, b))] = g.all[b].mean
    fig, ax = plt.subplots(figsize=(1.5 + 0.9 * len(cols), 1.2 + 0.38 * len(tasks)))
    ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{100 * v:.0f}", ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
    names = [label.replace(" (", "\n(").replace(", ", ",\n") for label, _ in cols]
    ax.set_xticks(range(len(cols)), [f"{n}\n{b}" for n, (_, b) in zip(names, cols)], fontsize=7)
    ax.set_title("Mean accuracy (%) over all seeds", fontsize=9)
    fig.tight_layout()
    return fig


def training_curves_figure(records):
    """In-distribution accuracy (first bin) against training step, one line per run."""
    runs = [r for r in records if r.curves]
    tasks = sorted({r.task for r in runs})
    fig, axes = panel_grid(len(tasks))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    variants = sorted({r.variant for r in runs})
    for ax, task in zip(axes, tasks):
        shown = set()
        for r in (r for r in runs if r.task == task):
            first = bin_order(r.curves[0]["bins"])[0]
            c = colors[variants.index(r.variant) % len(colors)]
            label = None if r.variant in shown else r.variant
            shown.add(r.variant)
            ax.plot(
                [p["step"] for p in r.curves],
                [p["bins"][first] for p in r.curves],
                color=c,
                alpha=0.7,
                lw=1,
                label=label,
            )
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"{task}: accuracy on the first bin", fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def run_curves_figure(curves: list, title: str):
    """One run's curves: training loss and accuracy per bin against step."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    steps = [p["step"] for p in curves]
    left.plot(steps, [p["loss"] for p in curves], "-o", ms=3)
    if all(p["loss"] > 0 for p in curves):
        left.set_yscale("log")
    left.set_title("training loss", fontsize=9)
    for b in bin_order(curves[0]["bins"]) if curves else []:
        right.plot(steps, [p["bins"][b] for p in curves], "-o", ms=3, label=b)
    right.set_ylim(-0.03, 1.03)
    right.set_title("accuracy by bin", fontsize=9)
    right.legend(fontsize=7)
    for ax in (left, right):
        ax.set_xlabel("step", fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
