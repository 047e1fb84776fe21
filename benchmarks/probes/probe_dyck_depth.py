"""Probe: how often a D_n word reaches depth n, and which test strings trained runs get wrong.

    python benchmarks/probes/probe_dyck_depth.py [--task d12] [--max-length 50] [--per-length 200]
        [--runs RUN_DIR ...] [--bin 1-50]

Draws ``--per-length`` words of every even length 2..``--max-length`` with the task's own
sampler (uniform among the words of that length) and counts those whose nesting reaches the
task's depth bound (the only prefixes whose legal next set is {b}). With ``--runs``, each
finished run folder is loaded (:func:`rasplab.harness.setup.load_run`), its own test set for
``--bin`` rebuilt (:func:`rasplab.harness.train.run_test_sets`), and every wrongly answered
string listed as (length, maximum depth). One JSON object. Results: docs/results/fig1.md, "Why D12
never fitted 1-50".
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402

import torch  # noqa: E402

from rasplab.harness.evaluate import sequence_correct  # noqa: E402
from rasplab.harness.setup import load_run  # noqa: E402
from rasplab.harness.train import run_test_sets  # noqa: E402
from rasplab.seeding import generator  # noqa: E402
from rasplab.tasks.base import get_task  # noqa: E402


def max_depth(symbols) -> int:
    """The deepest nesting of a word over a (open) / b (close)."""
    depth = deepest = 0
    for s in symbols:
        depth += 1 if s == "a" else -1
        deepest = max(deepest, depth)
    return deepest


def wrong_strings(run_dir: str, bin_name: str) -> list[tuple[int, int]]:
    """(length, maximum depth) of each test string of ``bin_name`` the run gets wrong."""
    config, setup = load_run(run_dir)
    batches, _ = run_test_sets(config, setup)[bin_name]
    tokens = setup.encoder.tokens
    out = []
    for batch in batches:
        with torch.no_grad():
            ok = sequence_correct(setup.model(batch.input_ids, batch.pad_mask, None), batch)
        for i in torch.nonzero(~ok).flatten().tolist():
            word = [tokens[t] for t in batch.input_ids[i][batch.pad_mask[i]].tolist()][1:-1]
            out.append((len(word), max_depth(word)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="d12")
    parser.add_argument("--max-length", type=int, default=50)
    parser.add_argument("--per-length", type=int, default=200)
    parser.add_argument("--runs", nargs="*", default=[])
    parser.add_argument("--bin", default="1-50")
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = get_task(args.task)
    bound = int(args.task.removeprefix("d"))
    rng = generator(0, "probe_dyck_depth")
    hits: dict[int, int] = {}
    total = 0
    for n in range(2, args.max_length + 1, 2):
        for _ in range(args.per_length):
            total += 1
            if max_depth(task.sample(rng, n).tokens[1:-1]) >= bound:
                hits[n] = hits.get(n, 0) + 1
    result = {
        "task": args.task,
        "words": total,
        "reaching_the_bound": sum(hits.values()),
        "by_length": hits,
        "runs": {r: wrong_strings(r, args.bin) for r in args.runs},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
