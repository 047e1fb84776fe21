"""Score a finished PTG harness run on every named PTG split (whole trace, first error).

The data side (``rasplab.tasks.ptg.evaluate``) scores any ``predict`` function; this module
turns a trained harness model into one and runs it on a saved run folder::

    python -m rasplab.harness.ptg_eval RUN_DIR [--n 200] [--seed 0] [--splits id_mid,...]

It prints one JSON object: the run's variant and seed and, per split, whole-trace accuracy,
teacher-forced step accuracy and the mean number of steps before the first error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import torch

from rasplab.harness.setup import load_run as load_harness_run
from rasplab.tasks.ptg.evaluate import Predict, evaluate_splits


def harness_predictor(model, encoder) -> Predict:
    """A ``predict`` function for a harness model (``model(ids, mask, None) -> [B, T, C]``)."""

    def predict(examples):
        batch = encoder.encode(list(examples))
        with torch.inference_mode():
            ids = model(batch.input_ids, batch.pad_mask, None).argmax(-1)  # [B, T]
        classes = encoder.classes
        return [
            [classes[i] for i in row[: len(ex.tokens)].tolist()] for ex, row in zip(examples, ids)
        ]

    return predict


def load_run(run_dir: str):
    """The config, task, encoder and trained model of a finished harness run folder."""
    config, setup = load_harness_run(run_dir)
    return config, setup.task, setup.encoder, setup.model


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m rasplab.harness.ptg_eval RUN_DIR [--n N] [--seed S]``: one JSON object."""
    parser = argparse.ArgumentParser(description="Score a trained ptg run on every PTG split.")
    parser.add_argument("run_dir")
    parser.add_argument("--n", type=int, default=200, help="test programs per split")
    parser.add_argument("--seed", type=int, default=0, help="test-set seed")
    parser.add_argument("--splits", default=None, help="comma-separated split names")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    config, task, encoder, model = load_run(args.run_dir)
    if config.task != "ptg":
        print(f"rasplab: error: {args.run_dir} is a {config.task!r} run, not ptg", file=sys.stderr)
        sys.exit(2)
    splits = None if args.splits is None else args.splits.split(",")
    scores = evaluate_splits(harness_predictor(model, encoder), task, splits, args.n, args.seed)
    print(
        json.dumps(
            {
                "run_dir": args.run_dir,
                "variant": config.variant,
                "seed": config.seed,
                "n": args.n,
                "splits": scores,
            }
        )
    )


if __name__ == "__main__":
    main()
