"""Benchmark: runs per CPU-hour of a sweep, stacked run groups vs one run per process; one JSON.

    python benchmarks/bench_sweep.py [--tasks tomita4,d2,aa_star] [--seeds 5] [--steps 250]
                                     [--batch-runs 15] [--workers 2]
                                     [--config configs/fig1_cpu_scale.yaml]

Both sides run the same slice of a sweep config's grid (the tasks given, the config's
variants, seeds 0..N-1, at most ``--steps`` steps each, early stopping as configured)
through :func:`rasplab.harness.run_sweep` with ``--workers`` worker processes (default 2; 1
runs in this process) and one thread per run (``threads_per_run=1``), into two fresh results
databases: ``batched`` with ``batch_runs=K`` (compatible runs stacked into groups of up to
K, a group per worker task), ``separate`` as a sweep runs them without ``--batch-runs``: one
run at a time in each worker process. CPU time counts this process and its worker processes
(``time.process_time`` plus the reaped children's ``getrusage`` time), so the workers'
start-up and imports count on both sides; before either side is timed, one run of the slice
trains one step grouped and alone in this process (:func:`warm_up`), so that with
``--workers 1`` (both sweeps in this process) one-time imports count on neither side. The
JSON also reports how far the two sides' accuracies differ (``max_accuracy_difference``:
they train the same runs, so only float rounding separates them) and, untimed, where that
difference comes from (``loss_drift``): the slice's first ``--drift-seeds`` seeds (default
1) of every task and variant trained again in this process, grouped (stacked among
themselves, groups of up to K) and alone, with every step's training loss recorded
(``on_step``), giving per run the loss difference at step 1, the largest in the first 10
steps, the first step where the two differ by more than 1e-4, and the largest accuracy
difference of the two final evaluations. ``--drift-only`` runs just that part (a few
minutes) and prints ``{"loss_drift": ..}``; ``--drift-seeds 0`` leaves it out
(``loss_drift`` null).

Output: ``{"runs_per_cpu_hour": {"batched": .., "separate": ..}, "ratio": ..,
"cpu_seconds": {..}, "runs": N, "max_accuracy_difference": .., "loss_drift": {..}, ...}``.

``--fixed`` instead times a fixed amount of work per model size, without early stopping, in
this process: ``--batch-runs`` seeds of tomita4 with APE (200 steps of batch 32, one
evaluation at the end) trained as one group, against 2 of them trained one after another; it
prints the CPU seconds per run of each side and their ratio for widths 16 (1 layer, 1 head),
32 and 64 (2 layers, 2 heads).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from rasplab.harness import ResultsStore, run_sweep  # noqa: E402
from rasplab.harness.sweepconfig import load_sweep, sweep_from_dict  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def sweep_slice(config: str, tasks: list[str], seeds: int, steps: int) -> dict:
    """The sweep config cut to ``tasks`` x its variants x seeds, at most ``steps`` steps."""
    sweep = load_sweep(config)
    data = {
        "name": "bench_sweep",
        "base": sweep.base,
        "grid": {"task": tasks, "variant": sweep.grid["variant"], "seed": list(range(seeds))},
        "variants": sweep.variants,
        "overrides": [
            *sweep.overrides,
            {"match": {}, "set": {"train.steps": steps, "train.eval_every": min(steps, 250)}},
        ],
    }
    sweep_from_dict(data).expand()  # validates the slice
    return data


def cpu_seconds() -> float:
    """CPU time of this process plus its finished (reaped) child processes."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def warm_up(sweep: dict) -> None:
    """Train the slice's first run for one step, as a group and alone, untimed: the lazy
    imports and first-call set-ups of both trainers (e.g. AdamW imports ``torch._dynamo``,
    about 2 CPU s) then count on neither side. With ``--workers 1`` both sweeps run in this
    process, and without this the side timed first paid them alone."""
    from rasplab.harness.config import experiment_from_dict
    from rasplab.harness.group import train_group
    from rasplab.harness.sweep import with_threads
    from rasplab.harness.train import train

    data = sweep_from_dict(sweep).expand()[0].to_dict()
    data["train"].update(steps=1, eval_every=1)
    run = with_threads(experiment_from_dict(data), 1, 1)
    train_group([run])  # a group of one: the stacked trainer
    train(run)


def timed(sweep: dict, db: Path, batch_runs: int, workers: int) -> float:
    """CPU seconds of one sweep into ``db`` (its worker processes included)."""
    start = cpu_seconds()
    summary = run_sweep(
        sweep, db, workers=workers, progress=False, batch_runs=batch_runs, threads_per_run=1
    )
    if summary.failed:
        raise SystemExit(f"{summary.failed} runs failed in the {batch_runs=} sweep")
    return cpu_seconds() - start


#: losses further apart than this count as "differ" in :func:`loss_drift`
DRIFT_TOLERANCE = 1e-4


def loss_drift(sweep: dict, seeds: int, batch_runs: int) -> dict:
    """Step-by-step training losses of the slice's seeds ``0..seeds-1``, grouped vs alone.

    The chosen runs (every task and variant) are trained once as groups of up to
    ``batch_runs`` (:func:`~rasplab.harness.group.plan_groups` over them alone) and once each
    alone, one thread, in this process; ``per_run`` lists, for each run, ``step1`` (the
    absolute loss difference at step 1), ``first10`` (the largest in steps 1-10),
    ``first_step_over`` (the first step where the losses differ by more than
    :data:`DRIFT_TOLERANCE`, None if never), ``at_step`` (the difference at a few steps:
    how it grows) and ``accuracy`` (the largest difference of the final accuracies).
    """
    from rasplab.harness.group import plan_groups, train_group
    from rasplab.harness.sweep import with_threads
    from rasplab.harness.train import train

    runs = [with_threads(c, 1, 1) for c in sweep_from_dict(sweep).expand() if c.seed < seeds]
    grouped: dict[str, list[float]] = {c.hash(): [] for c in runs}
    results: dict[str, object] = {}
    for group in plan_groups(runs, batch_runs):  # groups need not keep the runs' order

        def record(i: int, step: int, loss: float, group: list = group) -> None:
            grouped[group[i].hash()].append(loss)

        for config, result in zip(group, train_group(group, on_step=record)):
            results[config.hash()] = result
    per_run = []
    for config in runs:
        alone: list[float] = []
        result = train(config, on_step=lambda step, loss, alone=alone: alone.append(loss))
        mine = grouped[config.hash()]
        diff = [abs(a - b) for a, b in zip(alone, mine)]
        over = next((s + 1 for s, d in enumerate(diff) if d > DRIFT_TOLERANCE), None)
        per_run.append(
            {
                "run": f"{config.task}/{config.variant}/seed {config.seed}",
                "steps": [len(alone), len(mine)],
                "step1": diff[0],
                "first10": max(diff[:10]),
                "first_step_over": over,
                "at_step": {s: diff[s - 1] for s in (25, 50, 75, 100, 150, 250) if s <= len(diff)},
                "accuracy": max(
                    abs(x - results[config.hash()].bins[k]) for k, x in result.bins.items()
                ),
            }
        )
    overs = [r["first_step_over"] for r in per_run if r["first_step_over"] is not None]
    return {
        "tolerance": DRIFT_TOLERANCE,
        "runs": len(per_run),
        "max_step1_difference": max(r["step1"] for r in per_run),
        "max_difference_first_10_steps": max(r["first10"] for r in per_run),
        "earliest_step_over_tolerance": min(overs) if overs else None,
        "runs_never_over_tolerance": len(per_run) - len(overs),
        "max_accuracy_difference": max(r["accuracy"] for r in per_run),
        "per_run": per_run,
    }


def fixed_work(batch_runs: int, steps: int = 200) -> dict:
    """CPU seconds per run, grouped vs one at a time, for three model sizes (no early stop)."""
    from rasplab.harness.config import experiment_from_dict
    from rasplab.harness.group import train_group
    from rasplab.harness.train import train

    out = {}
    for width, layers, heads in ((16, 1, 1), (32, 2, 2), (64, 2, 2)):
        configs = [
            experiment_from_dict(
                {
                    "task": "tomita4",
                    "seed": seed,
                    "model": {"pe": "ape", "layers": layers, "heads": heads, "width": width},
                    "train": {
                        "steps": steps,
                        "batch_size": 32,
                        "lr": 3e-3,
                        "eval_every": steps,
                        "early_stop": False,
                        "threads": 1,
                    },
                    "eval": {"size": 200, "batch_size": 200},
                }
            )  # fmt: skip
            for seed in range(batch_runs)
        ]
        start = time.process_time()
        train_group(configs)
        grouped = (time.process_time() - start) / len(configs)
        start = time.process_time()
        for config in configs[:2]:
            train(config)
        alone = (time.process_time() - start) / 2
        out[f"width {width}, {layers} layers"] = {
            "cpu_s_per_run": {"batched": round(grouped, 2), "separate": round(alone, 2)},
            "ratio": round(alone / grouped, 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "fig1_cpu_scale.yaml"))
    parser.add_argument("--tasks", default="tomita4,d2,aa_star")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--batch-runs", type=int, default=15)
    parser.add_argument("--workers", type=int, default=2, help="worker processes per side")
    parser.add_argument("--fixed", action="store_true", help="fixed work per model size")
    parser.add_argument(
        "--drift-seeds",
        type=int,
        default=1,
        help="seeds per task and variant in loss_drift (0: no loss_drift)",
    )
    parser.add_argument("--drift-only", action="store_true", help="only the loss_drift part")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.fixed:
        result = {"fixed_work": fixed_work(args.batch_runs), "batch_runs": args.batch_runs}
        print(json.dumps(result | {"load_average": os.getloadavg()[0]}))
        return
    low = 1 if args.drift_only else 0
    if args.drift_seeds < low or args.drift_seeds > args.seeds:
        print(f"--drift-seeds must be {low}..{args.seeds}; got {args.drift_seeds}", file=sys.stderr)
        raise SystemExit(2)
    sweep = sweep_slice(args.config, args.tasks.split(","), args.seeds, args.steps)
    if args.drift_only:
        drift = loss_drift(sweep, args.drift_seeds, args.batch_runs)
        print(json.dumps({"loss_drift": drift, "load_average": os.getloadavg()[0]}))
        return
    warm_up(sweep)
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        dbs = {"batched": Path(tmp) / "batched.sqlite", "separate": Path(tmp) / "separate.sqlite"}
        cpu = {
            "batched": timed(sweep, dbs["batched"], args.batch_runs, args.workers),
            "separate": timed(sweep, dbs["separate"], 1, args.workers),
        }
        with ResultsStore(dbs["batched"]) as a, ResultsStore(dbs["separate"]) as b:
            runs = a.runs()
            diff = max(
                abs(x - b.get(r.run_id).metrics["bins"][k])
                for r in runs
                for k, x in r.metrics["bins"].items()
            )
    per_hour = {k: len(runs) / (v / 3600) for k, v in cpu.items()}
    drift = loss_drift(sweep, args.drift_seeds, args.batch_runs) if args.drift_seeds else None
    print(
        json.dumps(
            {
                "runs_per_cpu_hour": {k: round(v, 1) for k, v in per_hour.items()},
                "ratio": round(per_hour["batched"] / per_hour["separate"], 2),
                "cpu_seconds": {k: round(v, 1) for k, v in cpu.items()},
                "runs": len(runs),
                "batch_runs": args.batch_runs,
                "workers": args.workers,
                "tasks": args.tasks.split(","),
                "seeds": args.seeds,
                "max_steps": args.steps,
                "max_accuracy_difference": diff,
                "loss_drift": drift,
                "load_average": os.getloadavg()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
