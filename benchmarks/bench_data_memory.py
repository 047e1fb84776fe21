"""Benchmark: peak memory of ``rasplab data`` for a small and a large ``--n``; one JSON object.

    python benchmarks/bench_data_memory.py [--task parity] [--small 10] [--large 100000]
                                           [--split train] [--bin A-B]

Each side runs ``rasplab data TASK --split SPLIT --n N`` in a fresh process with stdout
thrown away, and reports that process's peak resident set size (``ru_maxrss``, MiB) and wall
time. A streamed writer keeps the large side near the small one (a batch of examples, not
all of them, is in memory); the ratio ``large / small`` shows it. To compare two checkouts,
run the script with each one's ``src`` first on ``PYTHONPATH``.

Output: ``{"task": .., "peak_rss_mib": {"10": .., "100000": ..}, "ratio": .., "seconds": {..}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = """
import resource, sys
from rasplab.cli import main
try:
    main(sys.argv[1:])
finally:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def peak(task: str, split: str, n: int, bin: str | None) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of one ``rasplab data`` process."""
    argv = [sys.executable, "-c", CHILD, "data", task, "--split", split, "--n", str(n)]
    argv += [] if bin is None else ["--bin", bin]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, check=True
    )
    seconds = time.perf_counter() - start
    kib = int(done.stderr.strip().splitlines()[-1])
    return kib / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="parity")
    parser.add_argument("--split", default="train")
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--large", type=int, default=100000)
    parser.add_argument("--bin", default=None, help="Length bin (default: the split's).")
    args = parser.parse_args()
    small = peak(args.task, args.split, args.small, args.bin)
    large = peak(args.task, args.split, args.large, args.bin)
    report = {
        "task": args.task,
        "split": args.split,
        "bin": args.bin,
        "peak_rss_mib": {str(args.small): round(small[0], 1), str(args.large): round(large[0], 1)},
        "ratio": round(large[0] / small[0], 2),
        "seconds": {str(args.small): round(small[1], 2), str(args.large): round(large[1], 2)},
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
