"""Training a discrete transformer: Adam on the Gumbel-relaxed model, temperature annealed
geometrically from ``tau_start`` to ``tau_end`` over all steps; after every epoch the
*discretised* model is scored on the validation set and the best state (ties: the later
epoch, trained at a lower temperature) is the one kept. Batches come from a
``torch.Generator`` derived from the run's seed, so a run repeats exactly.
"""

from __future__ import annotations

import copy
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
    """The kept (best-by-validation) model and how training went."""

    model: DiscreteTransformer
    best_epoch: int
    val_accuracy: float
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
    """The discretised model's class ids [B, T]."""
    out = []
    for lo in range(0, len(batch), chunk):
        index = torch.arange(lo, min(lo + chunk, len(batch)))
        part = batch.rows(index)
        pred = model(part.ids, part.mask, hard=True).argmax(-1)
        out.append(torch.nn.functional.pad(pred, (0, batch.ids.shape[1] - pred.shape[1])))
    return torch.cat(out) if out else batch.targets.clone()


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


def train(
    model: DiscreteTransformer,
    data: Batch,
    val: Batch,
    config: LearnConfig,
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train ``model`` on ``data``; keep the state whose discretised model scores best on ``val``."""
    torch.set_num_threads(1)
    gen = torch_generator(config.seed, "learned", config.task)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    steps = math.ceil(len(data) / config.batch_size)
    total = config.epochs * steps
    best, best_acc, best_epoch, history = None, -1.0, 0, []
    start, step = time.perf_counter(), 0
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(data), generator=gen)
        losses = []
        for s in range(steps):
            batch = data.rows(order[s * config.batch_size : (s + 1) * config.batch_size])
            tau = temperature(config, step / max(total - 1, 1))
            logits = model(batch.ids, batch.mask, tau=tau, hard=False, gen=gen)
            loss = torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
        acc = accuracy(predict(model, val), val)
        history.append({"epoch": epoch, "tau": tau, "loss": sum(losses) / len(losses), "val": acc})
        if log:
            log(
                f"epoch {epoch}/{config.epochs} tau {tau:.3f} loss {history[-1]['loss']:.4f} val {acc:.4f}"
            )
        if acc >= best_acc:
            best, best_acc, best_epoch = copy.deepcopy(model.state_dict()), acc, epoch
    model.load_state_dict(best)
    return TrainResult(model, best_epoch, best_acc, time.perf_counter() - start, history)
