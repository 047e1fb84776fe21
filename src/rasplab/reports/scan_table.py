"""SCAN end-to-end results as seed 001's Table 5: split x weight sharing x positions by layers.

The generic report groups runs by task and variant; SCAN runs of one sweep differ also by the
split (``task_options.split``) and the depth (``model.layers``), so this table puts those in
the rows and columns. Each cell is the mean whole-sequence test accuracy (%) over the finished
seeds of that setting (``-``: no finished run).

    python -m rasplab.reports.scan_table --db runs/scan_cpu.sqlite [--fit 1000] [--paper] [--out table.md]

``--fit N`` adds a second table: each run's accuracy on N commands of its own training split
(loading the run's saved weights), which says whether the model learned what it was shown.

>>> rows = [{"split": "length", "variant": "relative_shared", "layers": 2, "accuracy": 0.11}]
>>> print(markdown(rows))
| split | weight sharing | positions | 2 |
| --- | --- | --- | --- |
| length | yes | relative | 11.0 |
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from rasplab.errors import RasplabError
from rasplab.files import publish
from rasplab.harness.split_eval import score_split
from rasplab.harness.store import ResultsStore

SPLIT_ORDER = ("length", "mcd1", "mcd2", "mcd3")
PAPER_LAYERS = (2, 6, 16, 32, 64, 128, 256)
PAPER_TABLE5 = {
    ("length", "relative_shared"): (11, 10, 9, 7, 7, 7, 5),
    ("length", "absolute_shared"): (8, 9, 7, 5, 5, 6, 4),
    ("length", "relative"): (9, 9, 11, 10, 10),
    ("length", "absolute"): (9, 6, 7, 6, 4),
    ("mcd1", "relative_shared"): (5, 3, 2, 4, 3, 3, 2),
    ("mcd1", "absolute_shared"): (4, 1, 3, 2, 2, 2, 1),
    ("mcd1", "relative"): (4, 4, 3, 2, 2),
    ("mcd1", "absolute"): (5, 2, 1, 1, 2),
    ("mcd2", "relative_shared"): (9, 13, 9, 5, 4, 7, 3),
    ("mcd2", "absolute_shared"): (5, 6, 2, 2, 2, 2, 2),
    ("mcd2", "relative"): (13, 7, 4, 5, 4),
    ("mcd2", "absolute"): (4, 4, 2, 2, 1),
    ("mcd3", "relative_shared"): (12, 12, 6, 5, 7, 2, 3),
    ("mcd3", "absolute_shared"): (3, 4, 3, 3, 3, 2, 2),
    ("mcd3", "relative"): (8, 8, 7, 3, 2),
    ("mcd3", "absolute"): (4, 5, 2, 3, 1),
}
"""Test accuracy (%) quoted from seed 001 (ALTA), Appendix D.4, Table 5, per (split, variant)
for the layers of :data:`PAPER_LAYERS` (no entry: not trained). Encoder-decoder models of width
128 trained 100k steps; "relative"/"absolute" is the encoder's positional encoding."""


def scan_rows(db: str | Path) -> list[dict]:
    """One dict per finished SCAN run: split, variant, layers, test accuracy (0-1)."""
    if not Path(db).is_file():
        raise RasplabError(f"results database {str(db)!r} does not exist")
    with ResultsStore(db, create=False) as store:
        runs = [r for r in store.runs(status="done") if r.task == "scan"]
    rows = []
    for run in runs:
        metrics = run.metrics or {}
        bins, counts = metrics.get("bins") or {}, metrics.get("counts") or {}
        if not bins:
            continue
        total = sum(counts.get(b, 0) for b in bins)
        accuracy = (
            sum(acc * counts[b] for b, acc in bins.items()) / total
            if total and all(b in counts for b in bins)
            else sum(bins.values()) / len(bins)
        )  # the share of test commands right, not a mean over length bins
        rows.append(
            {
                "split": (run.config.get("task_options") or {}).get("split", "length"),
                "variant": run.variant,
                "layers": run.config.get("model", {}).get("layers"),
                "accuracy": accuracy,
                "run_dir": run.run_dir,
            }
        )
    return rows


def add_fit(rows: list[dict], n: int) -> None:
    """Add ``fit``: each run's whole-sequence accuracy on ``n`` commands of its own training
    split (:func:`rasplab.harness.split_eval.score_split`), so a failure on the test split can
    be told apart from a failure to learn the training split."""
    for row in rows:
        if not row.get("run_dir"):
            raise RasplabError("a SCAN run in the store has no run folder; cannot score its fit")
        row["fit"] = score_split(row["run_dir"], "train", n).accuracy


def paper_value(split: str, variant: str, layers: int) -> int | None:
    """The seed's Table-5 test accuracy (%) for a setting, or None where it has none.

    >>> paper_value("mcd2", "relative", 2), paper_value("length", "absolute", 128)
    (13, None)
    """
    row = PAPER_TABLE5.get((split, variant), ())
    i = PAPER_LAYERS.index(layers) if layers in PAPER_LAYERS else len(row)
    return row[i] if i < len(row) else None


def markdown(rows: list[dict], key: str = "accuracy", paper: bool = False) -> str:
    """The Table-5 layout of ``rows[key]`` (means over seeds), as Markdown; with ``paper``,
    each cell also shows the seed's Table-5 value in brackets (``-`` where it has none)."""
    cells: dict = defaultdict(list)
    for row in rows:
        cells[(row["split"], row["variant"], row["layers"])].append(row[key])
    layers = sorted({row["layers"] for row in rows})
    settings = sorted(
        {(row["split"], row["variant"]) for row in rows},
        key=lambda s: (SPLIT_ORDER.index(s[0]) if s[0] in SPLIT_ORDER else 99, s),
    )
    lines = [
        "| split | weight sharing | positions | " + " | ".join(str(n) for n in layers) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in layers) + " |",
    ]
    for split, variant in settings:
        shared = "yes" if variant.endswith("_shared") else "no"
        positions = variant.removesuffix("_shared")
        values = []
        for n in layers:
            accs = cells.get((split, variant, n))
            cell = f"{100 * sum(accs) / len(accs):.1f}" if accs else "-"
            if paper:
                quoted = paper_value(split, variant, n)
                cell += f" ({'-' if quoted is None else quoted})"
            values.append(cell)
        lines.append(f"| {split} | {shared} | {positions} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="results database of a SCAN sweep")
    parser.add_argument("--out", help="write the Markdown table here too")
    parser.add_argument(
        "--fit",
        type=int,
        default=0,
        metavar="N",
        help="also score each run on N commands of its training split (a second table)",
    )
    parser.add_argument(
        "--paper", action="store_true", help="show the seed's Table-5 value beside each test cell"
    )
    args = parser.parse_args(argv)
    try:
        if args.fit < 0:
            raise RasplabError(f"--fit must be a number of commands >= 0, got {args.fit}")
        rows = scan_rows(args.db)
        if not rows:
            raise RasplabError(f"{args.db} holds no finished SCAN run")
        if args.fit:
            add_fit(rows, args.fit)
    except RasplabError as err:
        print(f"rasplab: error: {err}", file=sys.stderr)
        return 2
    head = "Test split, whole-sequence accuracy (%)"
    if args.paper:
        head += "; in brackets the seed's Table 5 (quoted)"
    table = head + ":\n\n" + markdown(rows, paper=args.paper)
    if args.fit:
        table += (
            f"\n\nTraining split ({args.fit} commands), whole-sequence accuracy (%):\n\n"
            + markdown(rows, "fit")
        )
    print(table)
    if args.out:
        tmp = Path(args.out).with_name(f".{Path(args.out).name}.tmp")
        tmp.write_text(table + "\n")
        publish(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
