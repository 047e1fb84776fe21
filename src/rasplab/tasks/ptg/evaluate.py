"""Per-split PTG evaluation: whole-trace accuracy and steps to first error on the nine splits.

The harness scores length bins, which for ``ptg`` are the trace-steps factor; the other factors
(longer lists, more variables, longer programs, short programs) are named splits. This module
scores any model on named splits through a ``predict`` function (examples -> the argmax token
after every position, teacher forced; see ``scoring.py`` for why that equals greedy decoding).
It knows no model and no training loop: ``python -m rasplab.harness.ptg_eval RUN_DIR`` (the
harness side) applies it to a run saved by the harness.

>>> from rasplab.tasks import get_task
>>> oracle = lambda exs: [list(ex.targets) for ex in exs]  # a model that is always right
>>> evaluate_splits(oracle, get_task("ptg", scale="cpu"), ["id_short"], n=3)["id_short"]["whole_trace_accuracy"]
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rasplab.tasks.ptg.scoring import score_predictions, summarize

Predict = Callable[[Sequence], Sequence[Sequence]]


def evaluate_splits(
    predict: Predict,
    task,
    splits: Sequence[str] | None = None,
    n: int = 200,
    seed: int = 0,
    batch_size: int = 32,
) -> dict[str, dict]:
    """Score ``predict`` on ``n`` test examples of each split (default: the seven eval splits)."""
    names = [s for s in task.table if not task.table[s].train] if splits is None else list(splits)
    out = {}
    for name in names:
        examples = sorted(task.dataset(name, n=n, seed=seed), key=lambda ex: len(ex.tokens))
        scores = []
        for i in range(0, len(examples), batch_size):
            batch = examples[i : i + batch_size]
            for ex, pred in zip(batch, predict(batch)):
                scores.append(score_predictions(ex, pred))
        out[name] = summarize(scores)
    return out
