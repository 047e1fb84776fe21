"""Benchmark: how long a large sweep grid takes to prepare before its first run; one JSON object.

    python benchmarks/bench_sweep_prep.py [--seeds 1000] [--lrs 100]

The grid is ``seed × train.lr`` on ``binary_majority`` (``--seeds * --lrs`` points, 100,000
by default). Three stages are timed (wall clock, this process, one thread): ``expand`` (grid
points to resolved configs, duplicates removed), ``validate`` (every distinct task setting
built and checked) and ``register`` (the runs written to a fresh results store and their
statuses read back). Their sum is the time between the grid-size line and the first run of
``rasplab sweep``. ``ms_per_point`` is ``expand`` per grid point. To compare two checkouts,
run the script with each one's ``src`` first on ``PYTHONPATH``.

Output: ``{"points": N, "seconds": {"expand": .., "validate": .., "register": ..},
"total_seconds": .., "ms_per_point": ..}``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from rasplab.harness.store import ResultsStore  # noqa: E402
from rasplab.harness.sweep import validate_runs  # noqa: E402
from rasplab.harness.sweepconfig import sweep_from_dict  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--lrs", type=int, default=100)
    args = parser.parse_args()
    grid = {"seed": list(range(args.seeds)), "train.lr": [1e-3 * (k + 1) for k in range(args.lrs)]}
    config = sweep_from_dict({"name": "big", "base": {"task": "binary_majority"}, "grid": grid})
    seconds = {}
    start = time.perf_counter()
    runs = config.expand()
    seconds["expand"] = time.perf_counter() - start
    start = time.perf_counter()
    validate_runs(runs)
    seconds["validate"] = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        store = ResultsStore(Path(folder) / "r.sqlite")
        store.register_many(runs, "big", [str(Path(folder) / r.hash()) for r in runs])
        store.statuses()
        store.close()
        seconds["register"] = time.perf_counter() - start
    points = args.seeds * args.lrs
    report = {
        "points": points,
        "runs": len(runs),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "total_seconds": round(sum(seconds.values()), 2),
        "ms_per_point": round(1000 * seconds["expand"] / points, 3),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
