"""Delétang et al.'s score for a trained run, beside rasplab's whole-sequence accuracy by bin.

The paper scores a model per test length: the accuracy of each output token (for a one-token
answer, of that token; for the outputs with a termination token, up to and including it:
:meth:`~rasplab.tasks.chomsky.ChomskyTask.paper_positions`), averaged over the examples of
that length, then averaged over the lengths 41-500 (:data:`~rasplab.tasks.chomsky.SCORE_LENGTHS`).
rasplab's own measure is stricter: an example counts only if every scored token (with
``<eos>``) is right, per bin.

:func:`run_score` loads a finished run folder (its weights and config), regenerates the run's
own test sets of the bins inside 41-500 (same seed and size as its evaluation) and scores each
example by teacher forcing, which for a causal model is the greedy decoding of the first
wrong token onward (``harness/evaluate.py``). The paper draws 512 examples per length; here
the lengths are those the test sets hold (uniform over each bin), so the average is over the
lengths present. :func:`select_best` is the paper's selection: per task and variant, the run
with the best score over seeds and learning rates.

>>> per_length_average({41: [1.0, 0.5], 42: [0.0]})
0.375
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.harness.setup import load_run
from rasplab.harness.store import ResultsStore
from rasplab.tasks import get_task
from rasplab.tasks.chomsky import SCORE_LENGTHS, ChomskyTask


@dataclass(frozen=True)
class ChomskyScore:
    """One run's paper score, its per-length accuracies and whole-sequence accuracy by bin."""

    run_id: str
    task: str
    variant: str
    seed: int
    learning_rate: float | None
    score: float
    per_length: dict[int, float]
    sequence_by_bin: dict[str, float]
    examples: int

    def to_json(self) -> dict:
        """Plain JSON data (per-length keys as strings)."""
        return {
            "run_id": self.run_id,
            "task": self.task,
            "variant": self.variant,
            "seed": self.seed,
            "learning_rate": self.learning_rate,
            "score": self.score,
            "per_length": {str(k): v for k, v in sorted(self.per_length.items())},
            "sequence_by_bin": self.sequence_by_bin,
            "examples": self.examples,
        }


def per_length_average(token_accuracy: dict[int, list[float]]) -> float:
    """The mean over lengths of the mean per-example token accuracy at that length."""
    if not token_accuracy:
        raise RasplabError("no test examples with a length in 41-500 to score")
    means = [sum(v) / len(v) for v in token_accuracy.values()]
    return sum(means) / len(means)


def score_bins(test_bins: Iterable[str]) -> list[Bin]:
    """The run's test bins that lie inside the paper's score lengths (41-500)."""
    out = []
    for b in test_bins:
        b = Bin.parse(b)
        if b.lo >= SCORE_LENGTHS.lo and b.hi <= SCORE_LENGTHS.hi:
            out.append(b)
    return out


@torch.inference_mode()
def example_scores(model, encoder, task: ChomskyTask, examples, batch_size: int = 64):
    """Per example: (length, paper token accuracy, whole sequence right)."""
    out = []
    for i in range(0, len(examples), batch_size):
        chunk = examples[i : i + batch_size]
        batch = encoder.encode(chunk)
        logits = model(batch.input_ids, batch.pad_mask, None)  # [B, T, C]
        right = logits.argmax(-1) == batch.targets  # [B, T]
        whole = (right | ~batch.scored).all(dim=-1)  # [B]
        for b, ex in enumerate(chunk):
            pos = task.paper_positions(ex)
            tokens = right[b, pos].float().mean().item()
            out.append((ex.length, tokens, bool(whole[b])))
    return out


def run_score(run_dir: str, run_id: str = "") -> ChomskyScore:
    """The paper's score of the finished run in ``run_dir`` (see the module docstring)."""
    config, setup = load_run(run_dir)
    task = setup.encoder.task
    if not isinstance(task, ChomskyTask):
        raise RasplabError(
            f"run {run_dir!r} trained task {config.task!r}, not a Chomsky-hierarchy task; "
            "the paper's score applies to the chomsky family only"
        )
    ev = config.eval
    bins = score_bins(str(b) for b in setup.test_bins)
    if not bins:
        raise RasplabError(
            f"run {run_dir!r} has no test bin inside 41-500 (its bins: "
            f"{', '.join(str(b) for b in setup.test_bins)}); the paper's score needs one"
        )
    eval_seed = config.seed if ev.seed is None else ev.seed
    by_length: dict[int, list[float]] = defaultdict(list)
    sequence: dict[str, float] = {}
    count = 0
    for b in bins:
        examples = task.dataset("test", b, ev.size, eval_seed)
        scored = example_scores(setup.model, setup.encoder, task, examples, ev.batch_size)
        for length, tokens, _ in scored:
            by_length[length].append(tokens)
        sequence[str(b)] = sum(w for *_, w in scored) / len(scored)
        count += len(scored)
    return ChomskyScore(
        run_id=run_id or config.hash(),
        task=config.task,
        variant=config.variant,
        seed=config.seed,
        learning_rate=config.train.lr,
        score=per_length_average(by_length),
        per_length={k: sum(v) / len(v) for k, v in by_length.items()},
        sequence_by_bin=sequence,
        examples=count,
    )


def select_best(scores: Iterable[ChomskyScore]) -> list[ChomskyScore]:
    """The paper's selection: per (task, variant), the run with the highest score over seeds
    and learning rates (ties: the first in the order given).

    >>> a = ChomskyScore("r1", "t", "nope", 0, 1e-3, 0.6, {}, {}, 1)
    >>> b = ChomskyScore("r2", "t", "nope", 1, 3e-4, 0.7, {}, {}, 1)
    >>> [s.run_id for s in select_best([a, b])]
    ['r2']
    """
    best: dict[tuple[str, str], ChomskyScore] = {}
    for s in scores:
        key = (s.task, s.variant)
        if key not in best or s.score > best[key].score:
            best[key] = s
    return list(best.values())


def store_scores(db: str, run_ids: list[str] | None = None) -> list[ChomskyScore]:
    """The paper's score of every finished Chomsky-task run of the store ``db`` that kept its
    run folder (optionally only ``run_ids``), in the store's order."""
    with ResultsStore(db, create=False) as store:
        records = store.runs(status="done")
    wanted = None if run_ids is None else set(run_ids)
    out = []
    for r in records:
        if wanted is not None and r.run_id not in wanted:
            continue
        if r.run_dir is None or not isinstance(get_task(r.task), ChomskyTask):
            continue
        out.append(run_score(r.run_dir, r.run_id))
    return out


def markdown(scores: list[ChomskyScore], selected: bool = False) -> str:
    """A Markdown table: task, variant, seed, learning rate, the paper's score and rasplab's
    whole-sequence accuracy per bin (in %).

    >>> s = ChomskyScore("r", "bucket_sort", "nope", 0, 1e-3, 0.5, {}, {"41-100": 0.25}, 9)
    >>> print(markdown([s]).splitlines()[2])
    | bucket_sort | nope | 0 | 0.001 | 50.0 | 25.0 |
    """
    bins = sorted({b for s in scores for b in s.sequence_by_bin}, key=lambda b: Bin.parse(b))
    title = "score (best over seeds and lr)" if selected else "score"
    head = ["task", "variant", "seed", "lr", f"paper {title}", *(f"whole {b}" for b in bins)]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for s in scores:
        cells = [s.task, s.variant, str(s.seed), f"{s.learning_rate:g}", f"{100 * s.score:.1f}"]
        cells += [
            f"{100 * s.sequence_by_bin[b]:.1f}" if b in s.sequence_by_bin else "–" for b in bins
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
