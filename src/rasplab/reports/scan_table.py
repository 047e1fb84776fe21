"""SCAN end-to-end results as seed 001's Table 5: split x weight sharing x positions by layers.

The generic report groups runs by task and variant; SCAN runs of one sweep differ also by the
split (``task_options.split``) and the depth (``model.layers``), so this table puts those in
the rows and columns. Each cell is the mean whole-sequence test accuracy (%) over the finished
seeds of that setting (``-``: no finished run).

    python -m rasplab.reports.scan_table --db runs/scan_cpu.sqlite [--out table.md]

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

SPLIT_ORDER = ("length", "mcd1", "mcd2", "mcd3")


def scan_rows(db: str | Path) -> list[dict]:
    """One dict per finished SCAN run: split, variant, layers, test accuracy (0-1)."""
    from rasplab.harness.store import ResultsStore

    if not Path(db).is_file():
        raise RasplabError(f"results database {str(db)!r} does not exist")
    with ResultsStore(db, create=False) as store:
        runs = [r for r in store.runs(status="done") if r.task == "scan"]
    rows = []
    for run in runs:
        bins = (run.metrics or {}).get("bins") or {}
        if not bins:
            continue
        rows.append(
            {
                "split": (run.config.get("task_options") or {}).get("split", "length"),
                "variant": run.variant,
                "layers": run.config.get("model", {}).get("layers"),
                "accuracy": sum(bins.values()) / len(bins),
            }
        )
    return rows


def markdown(rows: list[dict]) -> str:
    """The Table-5 layout of ``rows`` (means over seeds), as Markdown."""
    cells: dict = defaultdict(list)
    for row in rows:
        cells[(row["split"], row["variant"], row["layers"])].append(row["accuracy"])
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
            values.append(f"{100 * sum(accs) / len(accs):.1f}" if accs else "-")
        lines.append(f"| {split} | {shared} | {positions} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="results database of a SCAN sweep")
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parser.parse_args(argv)
    try:
        rows = scan_rows(args.db)
        if not rows:
            raise RasplabError(f"{args.db} holds no finished SCAN run")
    except RasplabError as err:
        print(f"rasplab: error: {err}", file=sys.stderr)
        return 2
    table = markdown(rows)
    print(table)
    if args.out:
        from rasplab.files import publish

        tmp = Path(args.out).with_name(f".{Path(args.out).name}.tmp")
        tmp.write_text(table + "\n")
        publish(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
