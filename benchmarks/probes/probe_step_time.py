"""Probe: a training step's time and page faults, stacked group vs one run alone; one JSON.

    OMP_NUM_THREADS=1 python benchmarks/probes/probe_step_time.py [--task copy_unique] [--steps 100]
                                                           [--skip 60]

Trains the bench_sweep slice's APE runs of one task (``configs/fig1_cpu_scale.yaml``: ``ape``
and ``ape_reg``, seeds 0..4, :func:`profile_group_step.slice_configs`) for ``--steps`` steps,
once as one stacked group and once the first of them alone, in this process with one
thread, and reads the clock, the process CPU time and the minor page faults
(``getrusage``) at every step. It reports two windows, steps 5 to ``--skip`` and the
steps after (the process's memory grows for the first few tens of steps of a group, while
the allocator finds room for the step's tensors, and every new page costs a fault): wall
and CPU ms per run-step of each side, their ratio, and minor faults per step. Unlike
``profile_group_step.py`` no profiler runs, so the times are the step's own.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_group_step import slice_configs  # noqa: E402


def sample() -> tuple[float, float, int]:
    """(wall s, CPU s, minor faults) of this process now."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), time.process_time(), usage.ru_minflt


def per_step(marks: list, start: int, end: int | None, runs: int) -> dict:
    """ms per run-step (wall, CPU) and faults per step between marks ``start`` and ``end``
    (None: the last mark)."""
    end = len(marks) - 1 if end is None else end
    (w0, c0, f0), (w1, c1, f1) = marks[start], marks[end]
    steps = end - start
    return {
        "wall_ms_per_run_step": round((w1 - w0) / steps / runs * 1e3, 2),
        "cpu_ms_per_run_step": round((c1 - c0) / steps / runs * 1e3, 2),
        "minor_faults_per_step": round((f1 - f0) / steps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="copy_unique")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--skip", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(1)
    from rasplab.harness.group import train_group
    from rasplab.harness.train import train

    if not 5 < args.skip < args.steps - 1:
        raise SystemExit(f"probe_step_time: need 5 < --skip < --steps - 1; got {args.skip}")
    configs = slice_configs(args.task, 5, args.steps)
    grouped: list = []

    def tick(run: int, step: int, loss: float) -> None:
        if run == 0:
            grouped.append(sample())

    train_group(configs, on_step=tick)
    alone: list = []
    train(configs[0], on_step=lambda step, loss: alone.append(sample()))
    out: dict = {"task": args.task, "runs_in_group": len(configs), "steps": args.steps}
    windows = {
        f"steps 5-{args.skip}": (5, args.skip),
        f"steps {args.skip}-{args.steps}": (args.skip, None),
    }
    for name, (start, end) in windows.items():
        group = per_step(grouped, start, end, len(configs))
        one = per_step(alone, start, end, 1)
        ratio = one["cpu_ms_per_run_step"] / group["cpu_ms_per_run_step"]
        out[name] = {"grouped": group, "separate": one, "ratio_cpu": round(ratio, 2)}
    out["malloc"] = os.environ.get("LD_PRELOAD") or "glibc"
    out["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
