"""Training a discrete transformer: Adam on the Gumbel-relaxed model, temperature annealed
geometrically from ``tau_start`` to ``tau_end`` over all steps; after every epoch the
*discretised* model of each seed is scored on the validation set and each seed keeps its
best state (ties: the later epoch, trained at a lower temperature). The loss is the sum of
the seeds' losses, so each seed's gradient is its own. Batches and Gumbel noise come from a
``torch.Generator`` derived from the first seed, so a run (or a seed batch) repeats exactly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from rasplab.learned.config import LearnConfig
from rasplab.learned.data import IGNORE, Batch
from rasplab.learned.model import DiscreteTransformer
from rasplab.seeding import torch_generator


@dataclass
class TrainResult:
    """Per seed: the kept (best-by-validation) model, its epoch and validation accuracy;
    and how training went (``history``: per epoch, temperature, loss, validation per seed)."""

    models: list[DiscreteTransformer]
    best_epochs: list[int]
    val_accuracies: list[float]
    seconds: float
    history: list[dict] = field(default_factory=list)


def temperature(config: LearnConfig, progress: float) -> float:
    """The Gumbel temperature at ``progress`` in [0, 1] (geometric annealing).

    >>> temperature(LearnConfig(task="t", tau_start=2.0, tau_end=0.02), 0.5)
    0.2
    """
    return round(config.tau_start * (config.tau_end / config.tau_start) ** progress, 12)


@torch.no_grad()
def predict(model: DiscreteTransformer, batch: Batch, chunk: int = 2048) -> torch.Tensor:
    """The discretised model's class ids [S, B, T]."""
    out = []
    for lo in range(0, len(batch), chunk):
        index = torch.arange(lo, min(lo + chunk, len(batch)))
        part = batch.rows(index)
        pred = model(part.ids, part.mask, hard=True).argmax(-1)
        out.append(torch.nn.functional.pad(pred, (0, batch.ids.shape[1] - pred.shape[-1])))
    if not out:
        return batch.targets.expand(len(model.seeds), *batch.targets.shape).clone()
    return torch.cat(out, dim=1)


def accuracy(pred: torch.Tensor, batch: Batch) -> float:
    """Fraction of scored positions whose class is right (1.0 when nothing is scored)."""
    scored = batch.targets != IGNORE
    total = int(scored.sum())
    return float(((pred == batch.targets) & scored).sum()) / total if total else 1.0


def sequence_accuracy(pred: torch.Tensor, batch: Batch) -> float:
    """Fraction of examples whose every scored position is right (whole answers: a sum is
    right only when all its digits are; unscored filler never counts)."""
    scored = batch.targets != IGNORE
    wrong = ((pred != batch.targets) & scored).any(1)
    return float((~wrong).float().mean()) if len(batch) else 1.0


def step_loss(model: DiscreteTransformer, batch: Batch, tau: float, gen, seeds: int):
    """The training loss of one batch: cross-entropy of the relaxed (Gumbel-softmax at
    ``tau``) model, summed over the ``seeds`` stacked models (so each model's gradient is
    that of its own mean loss)."""
    logits = model(batch.ids, batch.mask, tau=tau, hard=False, gen=gen)
    targets = batch.targets.expand(seeds, *batch.targets.shape)
    return seeds * torch.nn.functional.cross_entropy(
        logits.flatten(0, 2), targets.flatten(), ignore_index=IGNORE
    )


def train(
    model: DiscreteTransformer,
    data: Batch,
    val: Batch,
    config: LearnConfig,
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train ``model`` (all its seeds) on ``data``; each seed keeps the state whose
    discretised model scores best on ``val``."""
    torch.set_num_threads(1)
    gen = torch_generator(model.seeds[0], "learned", config.task)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    steps = math.ceil(len(data) / config.batch_size)
    total = config.epochs * steps
    n_seeds = len(model.seeds)
    best = [model.select(i) for i in range(n_seeds)]
    best_acc, best_epoch, history = [-1.0] * n_seeds, [0] * n_seeds, []
    start, step = time.perf_counter(), 0
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(data), generator=gen)
        losses = []
        for s in range(steps):
            batch = data.rows(order[s * config.batch_size : (s + 1) * config.batch_size])
            tau = temperature(config, step / max(total - 1, 1))
            loss = step_loss(model, batch, tau, gen, n_seeds)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
        pred = predict(model, val)
        accs = [accuracy(pred[i], val) for i in range(n_seeds)]
        mean_loss = sum(losses) / len(losses) / n_seeds
        history.append({"epoch": epoch, "tau": tau, "loss": mean_loss, "val": accs})
        if log:
            shown = " ".join(f"{a:.4f}" for a in accs)
            log(f"epoch {epoch}/{config.epochs} tau {tau:.3f} loss {mean_loss:.4f} val {shown}")
        for i, acc in enumerate(accs):
            if acc >= best_acc[i]:
                best[i], best_acc[i], best_epoch[i] = model.select(i), acc, epoch
    return TrainResult(best, best_epoch, best_acc, time.perf_counter() - start, history)
