"""Start-up time of the command line: ``rasplab --help`` against a bare interpreter, as JSON.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_cli_startup.py [--repeats 5]

Each command runs in a fresh process (``python -c pass``, ``python -m rasplab.cli --help``,
and for scale ``python -c "import torch"``, what ``--help`` would also pay if a command module
imported torch at its top); the median wall time of ``--repeats`` runs is reported, with the
ratios to the bare interpreter, and whether ``--help`` imported torch (read from
``-X importtime``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "python_pass": ["-c", "pass"],
    "rasplab_help": ["-m", "rasplab.cli", "--help"],
    "import_torch": ["-c", "import torch"],
}


def wall_seconds(args: list[str], repeats: int) -> float:
    """Median wall time of ``python ARGS`` over ``repeats`` fresh processes."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def help_imports_torch() -> bool:
    """Whether ``rasplab --help`` imports torch (from ``python -X importtime``)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *CASES["rasplab_help"]],
        check=True,
        capture_output=True,
        text=True,
    )
    return any(line.rsplit("|", 1)[-1].strip() == "torch" for line in proc.stderr.splitlines())


def main() -> None:
    """Time the cases and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per case")
    args = parser.parse_args()
    seconds = {name: wall_seconds(argv, args.repeats) for name, argv in CASES.items()}
    print(
        json.dumps(
            {
                "repeats": args.repeats,
                "seconds": {k: round(v, 3) for k, v in seconds.items()},
                "help_vs_python": round(seconds["rasplab_help"] / seconds["python_pass"], 2),
                "import_torch_vs_python": round(
                    seconds["import_torch"] / seconds["python_pass"], 2
                ),
                "help_imports_torch": help_imports_torch(),
            }
        )
    )


if __name__ == "__main__":
    main()
