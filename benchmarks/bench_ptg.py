"""Benchmark: PTG programs with traces per second per core, and the fast tracer vs settrace.

    python benchmarks/bench_ptg.py [--n 2000] [--splits id_mid,id_short,...] [--scale cpu]

For each split, one process on one core generates ``--n`` distinct programs with their traces
(the work of ``rasplab data``: planning, filling, the train/test partition, tracing, the token
limit) and reports programs per CPU-second (the target for ``id_mid`` is >= 1,000) and per wall
second (lower on a shared machine). On the same programs it then times the fast tracer (which
interprets the grammar directly) against the naive tracer (``reference.python_trace``: real
Python under ``sys.settrace``), checks that both give the same traces, and reports the ratio.
It also reports the share of programs with a list loop (``while lst != []:``) and the share
whose trace gets longer when every input list gets three more elements.
CPU seconds are ``time.process_time`` of this process: they do not count time other users
take from a shared core. Prints one JSON object.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

from rasplab.tasks.ptg import splits as S  # noqa: E402
from rasplab.tasks.ptg.program import WHILEL  # noqa: E402
from rasplab.tasks.ptg.reference import python_trace  # noqa: E402
from rasplab.tasks.ptg.tokens import count_tokens, trace_tokens  # noqa: E402
from rasplab.tasks.ptg.tracer import trace  # noqa: E402


def _timed(fn):
    """``(result, cpu_seconds, wall_seconds)`` of one call."""
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c, time.perf_counter() - w


def _grows(inst) -> bool:
    """Whether the trace gets longer when every input list gets three more elements."""
    longer = tuple((k, v + [0, 0, 0] if type(v) is list else v) for k, v in inst.inputs)
    try:
        return len(trace(inst.program, longer)) > len(inst.trace)
    except IndexError:  # a branch the longer input now takes pops an empty list
        return False


def bench_split(name: str, n: int, seed: int, scale: str = "paper") -> dict:
    """Generation rate for ``name`` and the fast-vs-settrace tracer comparison on its programs."""
    split = S.get_split(name, scale)
    instances, cpu, wall = _timed(lambda: S.dataset(split, n, seed=seed))
    calls = [(i.program.source(), i.call, i.first_line) for i in instances]
    fast, fast_cpu, _ = _timed(
        lambda: [trace(i.program, i.inputs, i.first_line) for i in instances]
    )
    naive, naive_cpu, _ = _timed(lambda: [python_trace(*c) for c in calls])
    if fast != naive:
        raise AssertionError(f"{name}: the fast tracer and settrace disagree")
    steps = [len(i.trace) for i in instances]
    return {
        "split": name,
        "scale": scale,
        "programs": n,
        "programs_per_cpu_second": round(n / cpu, 1),
        "programs_per_wall_second": round(n / wall, 1),
        "mean_steps": round(sum(steps) / n, 1),
        "mean_tokens": round(sum(count_tokens(i) for i in instances) / n, 1),
        "mean_trace_tokens": round(sum(len(trace_tokens(i.trace)) for i in instances) / n, 1),
        "share_with_list_loop": round(
            sum(any(ln[0] == WHILEL for ln in i.program.lines) for i in instances) / n, 3
        ),
        "share_longer_with_longer_lists": round(sum(map(_grows, instances)) / n, 3),
        "fast_tracer_us_per_program": round(1e6 * fast_cpu / n, 1),
        "settrace_us_per_program": round(1e6 * naive_cpu / n, 1),
        "tracer_speedup_vs_settrace": round(naive_cpu / fast_cpu, 1),
        "traces_agree": True,
    }


def main() -> None:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="programs per split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--splits", default="id_mid", help="comma-separated split names, or 'all'")
    parser.add_argument("--scale", default="paper", choices=S.SCALES, help="split table")
    args = parser.parse_args()
    names = S.SPLIT_NAMES if args.splits == "all" else tuple(args.splits.split(","))
    rows = [bench_split(name, args.n, args.seed, args.scale) for name in names]
    out = {
        "benchmark": "ptg",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "target": "id_mid >= 1000 programs with traces per CPU-second (one core)",
        "splits": rows,
    }
    id_mid = [r for r in rows if r["split"] == "id_mid"]
    if id_mid:
        out["id_mid_meets_target"] = id_mid[0]["programs_per_cpu_second"] >= 1000
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
