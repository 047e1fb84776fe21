"""Plot a budget ladder: longer-bin accuracy against training budget, per task and encoding.

Reads a results store of ``configs/probes/fig1_ladder_cpu.yaml`` runs (variants ending in
``_x1``, ``_x2``, ``_x4``: steps times 1, 2, 4; ``_w2``: width times 2 at x1 steps) and
draws one panel per task, one line per encoding: the mean over the seeds every rung finished
of the mean longer-bin accuracy at each step rung (the table's score), the width rung as an
open square at x1, and every finished run as a small dot (its own longer-bin mean).
Prints one JSON object per (task, encoding): the scores, the trend and the rungs at which
the encoding generalizes by the table's rule
(:mod:`rasplab.reports.crasp_table.ladder`); ``--runs`` also prints a Markdown table of
every finished run (rung, steps, width, seed, accuracy per test bin).

    python benchmarks/probes/plot_ladder.py runs/fig1_ladder_cpu.sqlite \
        --out docs/fig1_ladder_cpu.png --runs
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rasplab.bins import bin_order, is_bin  # noqa: E402
from rasplab.harness.store import ResultsStore  # noqa: E402
from rasplab.reports.crasp_table.ladder import (  # noqa: E402
    RUNGS,
    STEP_RUNGS,
    generalizes_text,
    generalizing,
    ladder,
    rung_of,
    score,
    scores_of,
    trend_word,
)
from rasplab.reports.crasp_table.measure import encoding_of, summarize_runs  # noqa: E402

MULTIPLIER = {"x1": 1, "x2": 2, "x4": 4, "w2": 1}
ENCODING_ORDER = ("APE", "APE+reg", "NoPE")
PANELS_PER_ROW = 4


def finished_runs(db: str) -> list[dict]:
    """Every finished ladder run: task, encoding, rung, seed, steps, width, the accuracy per
    test bin and the mean over its longer bins (outside the training lengths, the table's rule)."""
    with ResultsStore(db, create=False) as store:
        records = store.runs(status="done")
    out = []
    for r in records:
        encoding, rung = encoding_of(r.config), rung_of(r.variant)
        if encoding is None or rung is None or not r.metrics:
            continue
        bins = {b: a for b, a in r.metrics["bins"].items() if is_bin(b)}
        one = summarize_runs(r.task, encoding, [r], threshold=0.9)  # the table's bin rule
        longer = score(one)
        out.append(
            {
                "task": r.task,
                "encoding": encoding,
                "rung": rung,
                "seed": r.seed,
                "steps": r.config["train"]["steps"],
                "width": r.config["model"]["width"],
                "bins": {b: bins[b] for b in bin_order(bins)},
                "longer": math.nan if longer is None else longer,
            }
        )
    return out


def draw(data: dict, runs: list[dict], out: str) -> None:
    """One panel per task: the scores per encoding (lines), width rung (squares), runs (dots)."""
    tasks = sorted({task for (task, _), rungs in data.items() if scores_of(rungs)})
    cols = min(len(tasks), PANELS_PER_ROW)
    rows = math.ceil(len(tasks) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.1 * cols + 0.6, 3.6 * rows), squeeze=False)
    colors = dict(zip(ENCODING_ORDER, ("tab:blue", "tab:orange", "tab:green"), strict=True))
    for ax in axes.flat[len(tasks) :]:
        ax.set_visible(False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        for encoding in ENCODING_ORDER:
            if not scores_of(data.get((task, encoding), {})):
                continue
            scores, color = scores_of(data[(task, encoding)]), colors[encoding]
            held = generalizes_text(generalizing(data[(task, encoding)]))
            steps = [r for r in STEP_RUNGS if r in scores]
            ax.plot(
                [MULTIPLIER[r] for r in steps],
                [100 * scores[r] for r in steps],
                "o-",
                color=color,
                label=f"{encoding} ({'; '.join(filter(None, (trend_word(scores), held)))})",
            )
            if "w2" in scores:
                ax.plot([1], [100 * scores["w2"]], "s", color=color, mfc="none", ms=9)
            dots = [r for r in runs if (r["task"], r["encoding"]) == (task, encoding)]
            offset = {"APE": -0.04, "APE+reg": 0.04, "NoPE": 0.0}[encoding]
            ax.plot(
                [MULTIPLIER[r["rung"]] * 2 ** (offset + (0.1 if r["rung"] == "w2" else 0))
                 for r in dots],
                [100 * r["longer"] for r in dots],
                ".", color=color, alpha=0.45, ms=5,
            )  # fmt: skip
        ax.set_title(task, fontsize=10)
        ax.set_xlabel("steps x grid; square: width x2; dots: runs", fontsize=7)
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4], ["x1", "x2", "x4"])
        ax.set_xlim(0.8, 5.0)
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    for row in axes:
        row[0].set_ylabel("longer bins, mean accuracy (%)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def runs_table(runs: list[dict]) -> str:
    """A Markdown table of the finished runs, by task, encoding, rung and seed."""
    lines = [
        "| task | encoding | rung | steps | width | seed | accuracy per test bin (%) | longer |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    key = {e: i for i, e in enumerate(ENCODING_ORDER)}
    for r in sorted(runs, key=lambda r: (r["task"], key[r["encoding"]], RUNGS.index(r["rung"]),
                                         r["seed"])):  # fmt: skip
        accs = " / ".join(f"{100 * a:.1f}" for a in r["bins"].values())
        lines.append(
            f"| {r['task']} | {r['encoding']} | {r['rung']} | {r['steps']:,} | {r['width']} "
            f"| {r['seed']} | {' / '.join(r['bins'])}: {accs} | {100 * r['longer']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, draw the figure, print the JSON lines (and the runs table)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", help="the ladder's results store")
    parser.add_argument("--out", default="fig1_ladder.png", help="the PNG to write")
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--runs", action="store_true", help="also print every finished run")
    args = parser.parse_args()
    if not Path(args.db).is_file():
        sys.exit(f"{args.db}: no such results store")
    data = ladder(args.db, threshold=args.threshold)
    if not data:
        sys.exit(f"{args.db}: no ladder runs (variants ending _x1/_x2/_x4/_w2)")
    runs = finished_runs(args.db)
    if not runs:
        sys.exit(f"{args.db}: no finished ladder run yet")
    draw(data, runs, args.out)
    for (task, encoding), rungs in sorted(data.items()):
        scores = scores_of(rungs)
        print(json.dumps({"task": task, "encoding": encoding, "trend": trend_word(scores),
                          "scores": scores, "generalizes": list(generalizing(rungs)),
                          "seeds": {r: list(m.seeds) for r, m in rungs.items()}}))  # fmt: skip
    if args.runs:
        print(runs_table(runs))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
