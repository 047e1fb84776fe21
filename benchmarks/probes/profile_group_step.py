"""Probe: where a training step of a stacked group and of a separate run goes; one JSON.

    OMP_NUM_THREADS=1 python benchmarks/probes/profile_group_step.py [--task tomita4] [--steps 20]

Trains the bench_sweep slice's runs of one task (``configs/fig1_cpu_scale.yaml``: its
variants x seeds 0..4, only as many steps as the profile needs) under ``torch.profiler``
(CPU, one thread, ``record_shapes``), skipping the first ``--warmup`` steps and stopping the
profile after ``--steps`` more (evaluations come later and are not in the profile): once as
the group the benchmark forms for the APE variants (``ape`` + ``ape_reg``, 10 runs) and
once as one of those runs alone. Prints, per side, ms per run-step and the top ops by self
time with calls per step (the profiler's times: wall-clock, its own overhead included, so
larger than CPU time), and an arithmetic floor: the step's matrix-product FLOPs (the
profiler's count for mm/bmm/addmm/baddbmm, plus attention's two products and the separate
model's oneDNN linear layers counted from their shapes) over the single-core GEMM rate
measured on this machine for the step's product shapes.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile, schedule  # noqa: E402

from rasplab.harness.sweepconfig import sweep_from_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GEMMS = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm")


def slice_configs(task: str, seeds: int, steps: int) -> list:
    """The bench slice's runs of ``task`` with APE (``ape`` and ``ape_reg``), one thread."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_sweep import sweep_slice

    from rasplab.harness.sweep import with_threads

    sweep = sweep_slice(str(ROOT / "configs" / "fig1_cpu_scale.yaml"), [task], seeds, steps)
    runs = [with_threads(c, 1, 1) for c in sweep_from_dict(sweep).expand()]
    return [c for c in runs if c.variant in ("ape", "ape_reg")]


def profiled(fn, warmup: int, steps: int):
    """Run ``fn(on_step)`` under the profiler; profile steps warmup+1..warmup+steps."""
    sched = schedule(wait=warmup, warmup=1, active=steps, repeat=1)
    with profile(
        activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True, schedule=sched
    ) as prof:
        fn(lambda *args: prof.step())
    return prof


def gemm_rate(shapes: list[tuple]) -> float:
    """Best single-core FLOP/s of ``torch.mm`` over the [M, K] x [K, N] ``shapes`` given."""
    best = 0.0
    for m, k, n in shapes:
        a, b = torch.randn(m, k), torch.randn(k, n)
        reps = max(3, int(2e8 / (2 * m * k * n)))
        torch.mm(a, b)
        start = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b)
        best = max(best, 2 * m * k * n * reps / (time.perf_counter() - start))
    return best


def summary(prof, steps: int, runs: int, top: int) -> dict:
    """Top self-CPU ops (ms per run-step, calls per step) and the step's matmul FLOPs."""
    events = prof.key_averages()
    total_us = sum(e.self_cpu_time_total for e in events)
    ops = sorted(events, key=lambda e: -e.self_cpu_time_total)[:top]
    flops = sum(e.flops for e in events if e.key in GEMMS)
    sdpa = 0.0  # products the profiler does not count: attention, oneDNN linear
    for e in prof.events():  # attention's two products, from its input shapes
        if e.name == "aten::_scaled_dot_product_flash_attention_for_cpu" and e.input_shapes:
            b, h, t, d = e.input_shapes[0]
            sdpa += 2 * 2 * b * h * t * t * d / 2 * 3  # causal half; backward twice the forward
        elif e.name == "mkldnn::_linear_pointwise" and len(e.input_shapes) > 1:
            x, w = e.input_shapes[0], e.input_shapes[1]  # a run's forward nn.Linear (oneDNN)
            sdpa += 2 * math.prod(x) * int(w[0])  # the profiler counts no FLOPs for it
    return {
        "cpu_ms_per_run_step": round(total_us / 1e3 / steps / runs, 3),
        "matmul_gflop_per_run_step": round((flops + sdpa) / 1e9 / steps / runs, 4),
        "top_self_cpu": [
            {
                "op": e.key,
                "ms_per_run_step": round(e.self_cpu_time_total / 1e3 / steps / runs, 3),
                "share": round(e.self_cpu_time_total / total_us, 3),
                "calls_per_step": round(e.count / steps, 1),
            }
            for e in ops
        ],
    }


def product_shapes(prof) -> list[tuple]:
    """The [M, K] x [K, N] shapes of the profiled step's 2-D products (bmm: per batch)."""
    seen = defaultdict(int)
    for e in prof.events():
        if e.name in GEMMS and e.input_shapes:
            shapes = [s for s in e.input_shapes if len(s) >= 2]
            if len(shapes) >= 2:
                a, b = shapes[-2], shapes[-1]
                seen[(int(a[-2]), int(a[-1]), int(b[-1]))] += 1
    return sorted(seen, key=lambda s: -seen[s])[:6]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="tomita4")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    from rasplab.harness.group import train_group
    from rasplab.harness.train import train

    total = args.warmup + 1 + args.steps + 1
    configs = slice_configs(args.task, args.seeds, total)  # one evaluation, after the profile

    def grouped(tick):
        train_group(configs, on_step=lambda run, step, loss: tick() if run == 0 else None)

    def separate(tick):
        train(configs[0], on_step=lambda step, loss: tick())

    group = profiled(grouped, args.warmup, args.steps)
    alone = profiled(separate, args.warmup, args.steps)
    shapes = product_shapes(alone) + product_shapes(group)
    rate = gemm_rate(shapes)
    out = {
        "task": args.task,
        "runs_in_group": len(configs),
        "gemm_gflops_single_core": round(rate / 1e9, 1),
    }
    for name, prof, runs in (("grouped", group, len(configs)), ("separate", alone, 1)):
        s = summary(prof, args.steps, runs, args.top)
        s["floor_ms_per_run_step"] = round(s["matmul_gflop_per_run_step"] * 1e9 / rate * 1e3, 3)
        out[name] = s
    out["load_average"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
