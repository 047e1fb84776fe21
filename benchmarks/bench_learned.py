"""Benchmark: learned transformer programs; prints one JSON object.

    python benchmarks/bench_learned.py [--quick]

Sections:
  hist_to_999   train rasp_hist until the discretised model reaches >= 99.9% test accuracy,
                on one core: CPU seconds of the whole run (data, training, decompile,
                verify) and wall seconds of training, for a one-counting-head model and for the paper's configuration
                (1 layer, 4 heads, 2 MLPs), epochs doubling from 4 until the target is met.
                Reference: the original implementation took 25-40 CPU-minutes (250 epochs).
  seed_batch    training 5 seeds as one seed batch vs 5 one-seed runs (2 epochs of the
                paper's rasp_hist configuration): CPU seconds and their ratio.
  program_speed seconds per sequence of the decompiled program (pure Python, one sequence
                at a time) on the 2,000 test sequences, next to the discretised torch model
                run one sequence at a time and batched; ratio against the original's
                published 0.2-0.5 s per sequence (lower end used).

Timings are ``time.process_time`` (CPU seconds of this process), so a loaded machine
inflates them less than wall clock does.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from rasplab.learned import LearnConfig, build, learn  # noqa: E402
from rasplab.learned.data import encode  # noqa: E402
from rasplab.learned.decompile import load_learned_program  # noqa: E402
from rasplab.learned.train import predict, train  # noqa: E402

ORIGINAL_SECONDS_PER_SEQUENCE = 0.2  # lower end of the published 0.2-0.5 s


def hist_to_target(shape: dict, quick: bool) -> dict:
    """Smallest doubling of epochs that reaches 99.9% test accuracy (CPU seconds)."""
    epochs = 4
    while True:
        cpu = time.process_time()
        done = learn(LearnConfig(task="rasp_hist", epochs=epochs, **shape))
        cpu = time.process_time() - cpu
        row = {
            "epochs": epochs,
            "test_accuracy": done.result["test_accuracy"],
            "train_wall_seconds": round(done.result["train_seconds"], 2),
            "run_cpu_seconds": round(cpu, 2),
        }
        if done.result["test_accuracy"] >= 0.999 or epochs >= (8 if quick else 64):
            return {**shape, **row, "reached": done.result["test_accuracy"] >= 0.999}
        epochs *= 2


def seed_batch(quick: bool) -> dict:
    """CPU seconds of training 5 seeds batched vs one at a time."""
    task, _ = build(LearnConfig(task="rasp_hist"))
    n = 2000 if quick else 16000
    data = encode(task.dataset("train", n=n), task.vocab, task.classes)
    val = encode(task.dataset("val", n=300), task.vocab, task.classes)
    config = LearnConfig(task="rasp_hist", layers=1, cat_heads=2, count_heads=2, mlps=2, epochs=2)
    start = time.process_time()
    for seed in range(5):
        train(build(config, seeds=(seed,))[1], data, val, config)
    alone = time.process_time() - start
    start = time.process_time()
    train(build(config, seeds=tuple(range(5)))[1], data, val, config)
    batched = time.process_time() - start
    return {
        "one_at_a_time_cpu_seconds": alone,
        "batched_cpu_seconds": batched,
        "speedup": alone / batched,
    }


def program_speed(quick: bool) -> dict:
    """Per-sequence time of the program vs the discretised model."""
    done = learn(
        LearnConfig(task="rasp_hist", layers=1, cat_heads=2, count_heads=2, mlps=2, epochs=4)
    )
    task = done.task
    run = load_learned_program(done.source)["run"]
    examples = task.dataset("test", n=300 if quick else 2000, seed=0)
    start = time.process_time()
    for ex in examples:
        run(list(ex.tokens))
    program = (time.process_time() - start) / len(examples)
    start = time.process_time()
    for ex in examples[:300]:
        predict(done.model, encode([ex], task.vocab, task.classes))
    single = (time.process_time() - start) / min(300, len(examples))
    start = time.process_time()
    predict(done.model, encode(examples, task.vocab, task.classes))
    batched = (time.process_time() - start) / len(examples)
    return {
        "sequences": len(examples),
        "program_seconds_per_sequence": program,
        "model_one_at_a_time_seconds_per_sequence": single,
        "model_batched_seconds_per_sequence": batched,
        "speedup_vs_original": ORIGINAL_SECONDS_PER_SEQUENCE / program,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller settings (smoke test)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    small = {"cat_heads": 0, "count_heads": 1, "mlps": 0}
    paper = {"layers": 1, "cat_heads": 2, "count_heads": 2, "mlps": 2}
    if args.quick:
        small.update(train_n=2000, val_n=300, test_n=300, verify_length=3, random_checks=100)
        paper.update(train_n=2000, val_n=300, test_n=300, verify_length=3, random_checks=100)
    out = {
        "hist_to_999": [hist_to_target(small, args.quick), hist_to_target(paper, args.quick)],
        "seed_batch": seed_batch(args.quick),
        "program_speed": program_speed(args.quick),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
