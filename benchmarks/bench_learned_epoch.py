"""Benchmark: CPU seconds per training epoch of the learned-program model, the fast forward
(:class:`rasplab.learned.model.DiscreteTransformer`) against the einsum formulation it
replaced (:class:`rasplab.learned.reference.ReferenceTransformer`), in one run; prints one
JSON object.

    python benchmarks/bench_learned_epoch.py [--quick] [--steps N]

For each configuration (the paper's ``rasp_sort`` and ``rasp_dyck1`` of Table 1, heads split
evenly into categorical and counting heads; 1 and 5 seeds in one seed batch): ``--steps``
Adam steps of 256 examples (the same batches, Gumbel draws and initial weights for both
forwards), scaled to one epoch of the paper's 16,000 examples (63 steps), plus one
validation pass over 2,000 examples (the discretised model). Times are
``time.process_time`` (CPU seconds of this process, one thread), old and new interleaved
twice with the faster repetition kept, so that a loaded machine biases both alike. Also
reported: the largest difference between the two forwards' logits after those steps (float
rounding only) and whether the discretised predictions on the validation set are identical.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from rasplab.learned import LearnConfig, build  # noqa: E402
from rasplab.learned.data import encode  # noqa: E402
from rasplab.learned.reference import ReferenceTransformer  # noqa: E402
from rasplab.learned.train import predict, step_loss  # noqa: E402

CONFIGS = {
    "rasp_sort": dict(layers=3, cat_heads=4, count_heads=4, mlps=4),
    "rasp_dyck1": dict(layers=3, cat_heads=4, count_heads=4, mlps=2),
}
TRAIN_N, VAL_N, BATCH = 16000, 2000, 256


def run_steps(model, data, steps: int, seeds: int) -> float:
    """CPU seconds of ``steps`` training steps (fixed batches and Gumbel noise)."""
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(0)
    start = time.process_time()
    for s in range(steps):
        batch = data.rows(torch.arange(s * BATCH, (s + 1) * BATCH))
        loss = step_loss(model, batch, 1.0, gen, seeds)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return time.process_time() - start


def epoch(task_name: str, seeds: int, steps: int, val_n: int) -> dict:
    """Per-epoch CPU seconds (training, validation) of both forwards and their ratio."""
    task, fast = build(LearnConfig(task=task_name, **CONFIGS[task_name]), seeds=tuple(range(seeds)))
    data = encode(task.dataset("train", n=steps * BATCH, seed=0), task.vocab, task.classes)
    val = encode(task.dataset("val", n=val_n, seed=0), task.vocab, task.classes)
    init = {k: v.clone() for k, v in fast.state_dict().items()}
    old = ReferenceTransformer(fast.shape, fast.seeds)
    train_s, val_s = {"old": [], "new": []}, {"old": [], "new": []}
    for _ in range(2):
        for name, model in (("old", old), ("new", fast)):
            model.load_state_dict(init)
            train_s[name].append(run_steps(model, data, steps, seeds))
            start = time.process_time()
            predict(model, val)
            val_s[name].append(time.process_time() - start)
    per_epoch = math.ceil(TRAIN_N / BATCH) / steps
    batch = data.rows(torch.arange(BATCH))
    with torch.no_grad():
        new_logits = fast(batch.ids, batch.mask, tau=1.0, gen=torch.Generator().manual_seed(1))
        old_logits = old(batch.ids, batch.mask, tau=1.0, gen=torch.Generator().manual_seed(1))
    diff = (new_logits - old_logits).abs()
    out = {"task": task_name, **CONFIGS[task_name], "seeds": seeds, "steps_timed": steps}
    for name in ("old", "new"):
        tr, va = min(train_s[name]) * per_epoch, min(val_s[name]) * VAL_N / val_n
        out[name] = {
            "train_cpu_s": round(tr, 2),
            "val_cpu_s": round(va, 2),
            "epoch_cpu_s": round(tr + va, 2),
        }
    out["speedup_train"] = round(out["old"]["train_cpu_s"] / out["new"]["train_cpu_s"], 2)
    out["speedup_val"] = round(out["old"]["val_cpu_s"] / out["new"]["val_cpu_s"], 2)
    out["speedup_epoch"] = round(out["old"]["epoch_cpu_s"] / out["new"]["epoch_cpu_s"], 2)
    out["max_logit_difference_after_training"] = float(diff.max())
    out["identical_discretised_predictions"] = bool(
        torch.equal(predict(fast, val), predict(old, val))
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 steps, 1 seed, 200 val")
    parser.add_argument("--steps", type=int, default=8, help="training steps timed per run")
    args = parser.parse_args()
    torch.set_num_threads(1)
    steps, val_n = (2, 200) if args.quick else (args.steps, VAL_N)
    seed_counts = (1,) if args.quick else (1, 5)
    rows = [epoch(t, s, steps, val_n) for t in CONFIGS for s in seed_counts]
    print(json.dumps({"epoch": rows}, indent=2))


if __name__ == "__main__":
    main()
