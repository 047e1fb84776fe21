"""Plot a budget ladder: longer-bin accuracy against training budget, per task and encoding.

Reads a results store of ``configs/probes/fig1_ladder_cpu.yaml`` runs (variants ending in
``_x1``, ``_x2``, ``_x4``: steps times 1, 2, 4; ``_w2``: width times 2 at x1 steps) and
draws, per (task, encoding), the mean over the seeds every rung finished of the mean longer-bin accuracy at
each step rung (a line), with the width rung as an open square at x1.
Prints one JSON object per (task, encoding): the scores and the trend
(:mod:`rasplab.reports.crasp_table.ladder`).

    python benchmarks/probes/plot_ladder.py runs/fig1_ladder_cpu.sqlite --out docs/fig1_ladder_cpu.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rasplab.reports.crasp_table.ladder import (  # noqa: E402
    STEP_RUNGS,
    ladder,
    scores_of,
    trend_word,
)

MULTIPLIER = {"x1": 1, "x2": 2, "x4": 4}


def main() -> None:
    """Parse the arguments, draw the figure, print the JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", help="the ladder's results store")
    parser.add_argument("--out", default="fig1_ladder.png", help="the PNG to write")
    parser.add_argument("--threshold", type=float, default=0.9)
    args = parser.parse_args()
    data = ladder(args.db, threshold=args.threshold)
    if not data:
        sys.exit(f"{args.db}: no ladder runs (variants ending _x1/_x2/_x4/_w2)")
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for (task, encoding), rungs in sorted(data.items()):
        scores = scores_of(rungs)
        steps = [r for r in STEP_RUNGS if r in scores]
        label = f"{task} {encoding} ({trend_word(scores)})"
        line = ax.plot(
            [MULTIPLIER[r] for r in steps], [100 * scores[r] for r in steps], "o-", label=label
        )[0]
        if "w2" in scores:
            ax.plot([1], [100 * scores["w2"]], "s", color=line.get_color(), mfc="none", ms=9)
        print(json.dumps({"task": task, "encoding": encoding, "trend": trend_word(scores),
                          "scores": scores, "seeds": {r: list(m.seeds) for r, m in rungs.items()}}))  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 2, 4], ["x1", "x2", "x4"])
    ax.set_xlabel("training steps (times the grid's count); open square: width x2 at x1")
    ax.set_ylabel("longer bins, mean accuracy (%)")
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
