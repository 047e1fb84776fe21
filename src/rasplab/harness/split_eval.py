"""Score a finished run on any named split of its task, e.g. its own training split.

A run is scored during training on its test bins and on the named splits of ``eval.splits``,
which may not name the training distribution. For a finite task with a fixed train/test
partition (``scan``) the question "did the model fit what it was trained on?" needs exactly
that, so this module loads a finished run folder and scores whole-sequence accuracy on
``n`` examples of a named split with the harness's own test-set builder and evaluator::

    python -m rasplab.harness.split_eval RUN_DIR --split train [--n 1000] [--seed 0]

It prints one JSON object: ``{"run_dir", "split", "n", "seed", "accuracy", "count"}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from rasplab.errors import RasplabError
from rasplab.harness.encoding import encoded_test_set
from rasplab.harness.evaluate import BinMetrics, evaluate
from rasplab.harness.setup import load_run


def score_split(
    run_dir: str | Path, split: str, n: int = 1000, seed: int = 0, batch_size: int = 250
) -> BinMetrics:
    """Whole-sequence metrics of the finished run in ``run_dir`` on ``n`` examples of the
    task's named ``split`` (drawn with ``seed``; fewer when the split is smaller)."""
    if n < 1:
        raise RasplabError(f"--n must be a positive number of examples, got {n}")
    config, setup = load_run(run_dir)
    task = setup.task
    if split not in getattr(task, "splits", ()):
        have = ", ".join(getattr(task, "splits", ())) or "none"
        raise RasplabError(f"task {config.task!r} has no split {split!r} (it has: {have})")
    test_set = encoded_test_set(
        setup.encoder, config.task_options, None, n, seed, batch_size, split=split
    )
    if test_set[1] == 0:
        raise RasplabError(f"split {split!r} of task {config.task!r} is empty")
    return evaluate(
        setup.model,
        setup.encoder,
        {split: test_set},
        config.eval.decoding,
        config.eval.tolerance,
        causal=config.model.causal,
    )[split]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rasplab.harness.split_eval RUN_DIR --split NAME``: one JSON object."""
    parser = argparse.ArgumentParser(description="Score a finished run on a named split.")
    parser.add_argument("run_dir")
    parser.add_argument("--split", required=True, help="a split of the run's task, e.g. train")
    parser.add_argument("--n", type=int, default=1000, help="examples (at most the split)")
    parser.add_argument("--seed", type=int, default=0, help="which examples are drawn")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        metrics = score_split(args.run_dir, args.split, args.n, args.seed)
    except RasplabError as err:
        print(f"rasplab: error: {err}", file=sys.stderr)
        return 2
    result = {"run_dir": args.run_dir, "split": args.split, "n": args.n, "seed": args.seed}
    print(json.dumps({**result, "accuracy": metrics.accuracy, "count": metrics.count}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
