"""Benchmark: training steps of seed 004's bounds model per CPU-second, before and after; JSON.

    python benchmarks/bench_bounds.py [--config configs/bounds_fig1.yaml] [--option omega]
                                      [--value 2] [--N 32] [--seeds 8] [--steps 10]

One setting of a bounds sweep config (the x option at ``--value``, training bin 1-N, the
config's batch size, 1,024 in the paper protocol) at seeds 0..K-1, ``--steps`` steps each,
on one thread, timed in CPU seconds of this process (``time.process_time``):

* ``separate`` (before): the K runs one after another through
  :func:`rasplab.harness.train.train` (the path a sweep without ``--batch-runs`` takes: the
  full model at every token), drawing batches through the per-example path (``sample_many``,
  ``Example`` objects, ``Encoder.encode``) as before the array path existed;
* ``grouped`` (after): the K runs as one stacked group, :func:`rasplab.harness.group.train_group`
  (one forward/backward for all K; the last block past its attention only at the scored
  last position; batches drawn as arrays, ``sample_arrays``).

Both evaluate once at the end on one small test bin (16 tokens, 50 examples), so that the
numbers are training steps. ``data`` times the batch draw alone per step, through both paths
(``data_ratio``: examples / arrays). Output: ``{"run_steps_per_cpu_second": {"separate": ..,
"grouped": ..}, "ratio": .., "cpu_ms_per_run_step": {...}, "data_ratio": ..,
"loss_difference": ..}``; ``loss_difference`` is the largest difference of the runs' mean
training loss between the two sides (the same runs and batches: only float rounding
separates them).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from rasplab.harness.config import experiment_from_dict  # noqa: E402
from rasplab.harness.encoding import Encoder  # noqa: E402
from rasplab.harness.group import train_group  # noqa: E402
from rasplab.harness.setup import prepare_run  # noqa: E402
from rasplab.harness.sweepconfig import load_sweep  # noqa: E402
from rasplab.harness.train import train  # noqa: E402
from rasplab.seeding import generator  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def configs(args) -> list:
    """The K runs: the sweep config's base at one setting, ``--steps`` steps, seeds 0..K-1."""
    sweep = load_sweep(args.config)
    out = []
    for seed in range(args.seeds):
        data = json.loads(json.dumps(sweep.base))
        data.setdefault("task_options", {})[args.option] = (
            int(args.value) if args.option == "p" else float(args.value)
        )
        data["seed"] = seed
        data["train"].update(
            bin=f"1-{args.N}", steps=args.steps, eval_every=args.steps, threads=1, stop_loss=0.0
        )
        data["eval"].update(bins=["16-16"], size=50, batch_size=50)
        out.append(experiment_from_dict(data))
    return out


def example_path(fn):
    """``fn()`` with every encoder drawing training batches through the per-example path."""
    real = Encoder.__init__

    def init(self, task):
        real(self, task)
        self._arrays = False

    Encoder.__init__ = init
    try:
        return fn()
    finally:
        Encoder.__init__ = real


def timed(fn):
    """(result, CPU seconds) of ``fn()``."""
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "bounds_fig1.yaml"))
    parser.add_argument("--option", default="omega")
    parser.add_argument("--value", type=float, default=2.0)
    parser.add_argument("--N", type=int, default=32)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = configs(args)
    run_steps = len(runs) * args.steps
    separate, t_sep = timed(lambda: example_path(lambda: [train(c) for c in runs]))
    grouped, t_grp = timed(lambda: train_group(runs))
    setup = prepare_run(runs[0])
    P = setup.positions if setup.offsets else None
    batch = runs[0].train.batch_size

    def draws():
        for step in range(args.steps):
            setup.encoder.train_batch(generator(0, "harness", "train", step), setup.train_bin,
                                      batch, P, 0)  # fmt: skip

    _, t_data = timed(draws)
    setup.encoder._arrays = False
    _, t_examples = timed(draws)
    diff = max(
        abs(a["loss"] - b["loss"])
        for g, s in zip(grouped, separate)
        for a, b in zip(g.curves, s.curves)
    )
    print(json.dumps({
        "setting": {"config": Path(args.config).name, args.option: args.value, "N": args.N,
                    "batch_size": batch, "seeds": args.seeds, "steps": args.steps,
                    "threads": torch.get_num_threads()},
        "run_steps_per_cpu_second": {"separate": run_steps / t_sep, "grouped": run_steps / t_grp},
        "ratio": t_sep / t_grp,
        "cpu_ms_per_run_step": {"separate": 1e3 * t_sep / run_steps,
                                "grouped": 1e3 * t_grp / run_steps,
                                "data_arrays": 1e3 * t_data / args.steps,
                                "data_examples": 1e3 * t_examples / args.steps},
        "data_ratio": t_examples / t_data,
        "loss_difference": diff,
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
