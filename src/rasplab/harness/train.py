"""Train one run and evaluate it by length bin: :func:`train` (config → :class:`RunResult`).

The steps, in order: build the task and its encoder, size the position table for the longest
test sequence, build the model (seeded init), restore a checkpoint if one exists, then loop:
sample a fresh batch (APE: random position offsets; ``train.pack_tokens``: rows packed from
several examples, attended causally as one sequence), AdamW step with warmup + decay and
clipping, evaluate every ``train.eval_every`` steps on every test bin and then every named
split (``eval.splits``; their metrics sit under the split names next to the bins'),
checkpoint, and stop early once the in-distribution bins are at 100% (or, with
``train.stop_loss``, once a training batch's loss falls below it). Every random draw
derives from the run seed and the step number, so a resumed run ends exactly where an
uninterrupted one does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from rasplab.files import atomic_write_text
from rasplab.harness.checkpoint import load_checkpoint, save_checkpoint
from rasplab.harness.config import ExperimentConfig, TrainConfig, save_config
from rasplab.harness.encoding import encoded_test_set
from rasplab.harness.evaluate import evaluate
from rasplab.harness.param_groups import parameter_groups
from rasplab.harness.progress import start_progress
from rasplab.harness.regularizer import penalties
from rasplab.harness.setup import (  # noqa: F401  (re-exported for callers of the harness)
    CHECKPOINT,
    FINAL,
    build_task,
    check_encodable,
    in_distribution,
    load_run,
    max_positions,
    prepare_run,
    run_bins,
    run_threads,
)
from rasplab.harness.store import code_version, finite_json
from rasplab.models.pretrained import write_config_json
from rasplab.seeding import generator, torch_generator


@dataclass
class RunResult:
    """The outcome of one run: accuracy per bin and named split (and MSE), curves, timing."""

    run_id: str
    config_hash: str
    task: str
    variant: str
    seed: int
    status: str
    bins: dict[str, float]
    counts: dict[str, int]
    mse: dict[str, float] | None
    fitted: bool
    steps: int
    stopped_early: bool
    wall_time: float
    curves: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    run_dir: str | None = None
    code_version: str = ""
    loss_reached_step: int | None = None
    slices: dict | None = None  # test set -> slice -> value -> [right, count] (eval.slices)
    threads: int | None = None  # CPU threads the run trained with (its last session's)

    def to_json(self, curves: bool = False) -> dict:
        """Plain data for ``--json`` (curves and config left out unless ``curves``)."""
        data = asdict(self)
        if not curves:
            data.pop("curves")
            data.pop("config")
        return data


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Learning-rate multiplier at ``step``: linear warmup, then cosine/linear/constant decay.

    >>> cfg = TrainConfig(steps=10, warmup_steps=2, schedule="linear")
    >>> [round(lr_factor(s, cfg), 3) for s in (0, 1, 2, 6, 9)]
    [0.5, 1.0, 1.0, 0.5, 0.125]
    """
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    low = cfg.min_lr_ratio
    if cfg.schedule == "cosine":
        return low + (1 - low) * 0.5 * (1 + math.cos(math.pi * progress))
    if cfg.schedule == "linear":
        return 1 - (1 - low) * progress
    return 1.0


def _optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not on biases, norms or 1-D gains);
    ``param_groups="mup"``: learning rates per group (``param_groups.py``)."""
    groups = parameter_groups(model, cfg.weight_decay, cfg.param_groups)
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), foreach=False)


def _loss(outputs: torch.Tensor, batch) -> torch.Tensor:
    """Mean cross-entropy (or squared error) over the scored positions of the batch."""
    if batch.targets.dtype.is_floating_point:
        err = outputs[..., 0][batch.scored] - batch.targets[batch.scored]
        return (err * err).mean()
    return F.cross_entropy(outputs[batch.scored], batch.targets[batch.scored])


def _penalty(model: torch.nn.Module, cfg: TrainConfig) -> torch.Tensor | float:
    """Seed 003's regularizer terms weighted as ``cfg`` says (0.0 when both are off)."""
    if not (cfg.pe_penalty or cfg.weight_penalty):
        return 0.0
    params = {n: p[None] for n, p in model.named_parameters()}
    weights = (torch.tensor([cfg.pe_penalty]), torch.tensor([cfg.weight_penalty]))
    return penalties(params, model.config, *weights)[0]


def _metrics_json(metrics) -> dict:
    """Metrics per bin and split as plain data: {"bins": {...}, "counts": {...}, "mse": ...},
    plus ``"slices"`` (test set -> slice -> value -> [right, count]) when ``eval.slices`` is set."""
    mse = (
        {k: m.mse for k, m in metrics.items()}
        if any(m.mse is not None for m in metrics.values())
        else None
    )
    data = {
        "bins": {k: m.accuracy for k, m in metrics.items()},
        "counts": {k: m.count for k, m in metrics.items()},
        "mse": mse,
    }
    if any(m.slices for m in metrics.values()):
        data["slices"] = {
            k: {s: {str(v): list(c) for v, c in t.items()} for s, t in m.slices.items()}
            for k, m in metrics.items()
            if m.slices
        }
    return data


def train(
    config: ExperimentConfig,
    run_dir: str | Path | None = None,
    resume: bool = True,
    progress: bool = False,
    on_step: Callable[[int, float], None] | None = None,
) -> RunResult:
    """Train and evaluate one run; with ``run_dir``, checkpoint there and resume from it.

    ``on_step(step, loss)`` (if given) receives each step's training loss (the batch's loss
    plus any regularizer: the values the curves average) right after the step, e.g. to
    compare a run step by step with the same run trained in a group (:func:`train_group`).

    The run computes on ``train.threads`` CPU threads, by default on every available core
    (:func:`~rasplab.harness.setup.run_threads`; a sweep divides the cores among its workers).
    """
    setup, optimizer, state, run_path = start_run(config, run_dir, resume)
    if not state["done"]:
        state["threads"] = use_threads(run_threads(config.train))
        state = _loop(config, setup, optimizer, state, run_path, progress, on_step)
    return finish_result(config, setup, state, run_path)


def use_threads(n: int) -> int:
    """Set torch's CPU threads to ``n``; return the count torch reports it now uses."""
    torch.set_num_threads(n)
    return torch.get_num_threads()


def start_run(config: ExperimentConfig, run_dir: str | Path | None, resume: bool = True):
    """Set up a run, its optimizer and its trainer state, restored from ``run_dir`` when it
    holds a checkpoint; returns ``(setup, optimizer, state, run_path)``."""
    setup = prepare_run(config)
    model, cfg = setup.model, config.train
    optimizer = _optimizer(model, cfg)
    state = {
        "step": 0,
        "curves": [],
        "metrics": None,
        "done": False,
        "stopped_early": False,
        "wall_time": 0.0,
    }

    run_path = Path(run_dir) if run_dir is not None else None
    if run_path is not None and resume and (run_path / FINAL).is_file():
        state = load_checkpoint(run_path / FINAL, model)
    elif run_path is not None and resume and (run_path / CHECKPOINT).is_file():
        state = load_checkpoint(run_path / CHECKPOINT, model, optimizer)
    if run_path is not None:
        save_config(config, run_path / "config.yaml")
        write_config_json(model, run_path)  # the run opens with Transformer.from_pretrained
    return setup, optimizer, state, run_path


def finish_result(config: ExperimentConfig, setup, state: dict, run_path: Path | None) -> RunResult:
    """The :class:`RunResult` of a finished run's state (written to ``result.json`` too)."""
    metrics = state["metrics"]
    result = RunResult(
        run_id=config.hash(),
        config_hash=config.hash(),
        task=config.task,
        variant=config.variant,
        seed=config.seed,
        status="diverged" if state.get("diverged") else "done",
        bins=metrics["bins"],
        counts=metrics["counts"],
        mse=metrics["mse"],
        fitted=all(metrics["bins"][b] == 1.0 for b in setup.id_bins),
        steps=state["step"],
        stopped_early=state["stopped_early"],
        wall_time=state["wall_time"],
        curves=state["curves"],
        config=config.to_dict(),
        run_dir=str(run_path) if run_path is not None else None,
        code_version=code_version(),
        loss_reached_step=state.get("loss_reached_step"),
        slices=metrics.get("slices"),
        threads=state.get("threads"),
    )
    if run_path is not None:
        atomic_write_text(
            run_path / "result.json", finite_json(result.to_json(curves=True), indent=1)
        )
    return result


def _loop(config, setup, optimizer, state, run_path, progress, on_step=None) -> dict:
    """The training loop from ``state["step"]``; returns the final state (``done`` set)."""
    cfg = config.train
    model, encoder, P, id_bins = setup.model, setup.encoder, setup.positions, setup.id_bins
    started = time.perf_counter() - state["wall_time"]
    ev = config.eval
    test_sets = run_test_sets(config, setup)
    bar = _ProgressBar(config, cfg.steps, state["step"]) if progress else None

    def run_eval():
        return evaluate(model, encoder, test_sets, ev.decoding, ev.tolerance, config.model.causal)

    losses: list[float] = list(state.get("pending_losses", []))
    model.train()
    device = next(model.parameters()).device
    step = state["step"]
    while step < cfg.steps:
        rng = generator(config.seed, "harness", "train", step)
        batch = encoder.train_batch(
            rng, setup.train_bin, cfg.batch_size, P if setup.offsets else None, cfg.pack_tokens
        )
        batch = batch.to(device)
        for group in optimizer.param_groups:
            group["lr"] = cfg.lr * group.get("lr_scale", 1.0) * lr_factor(step, cfg)
        torch.manual_seed(torch_generator(config.seed, "harness", "dropout", step).initial_seed())
        outputs = model(batch.input_ids, batch.pad_mask, batch.offsets)  # [B, T, C]
        loss = _loss(outputs, batch) + _penalty(model, cfg)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        losses.append(loss.item())
        step += 1
        state["step"] = step
        if on_step is not None:
            on_step(step, losses[-1])
        if not math.isfinite(losses[-1]):  # stored as ``diverged``, never as ``done``
            state["diverged"] = True
            state["metrics"] = _metrics_json(run_eval())
            break
        reached = losses[-1] < cfg.stop_loss  # stop_loss 0 (off) is never reached
        if reached:
            state["loss_reached_step"] = step
        if step % cfg.eval_every == 0 or step == cfg.steps or reached:
            metrics = run_eval()
            state["metrics"] = _metrics_json(metrics)
            state["curves"].append(
                {"step": step, "loss": sum(losses) / len(losses), "bins": state["metrics"]["bins"]}
            )
            losses = []
            if bar is not None:
                bar.update(step, state["curves"][-1]["loss"], metrics[id_bins[0]].accuracy)
            if cfg.early_stop and all(metrics[b].accuracy == 1.0 for b in id_bins):
                state["stopped_early"] = step < cfg.steps
                break
            if reached:
                state["stopped_early"] = step < cfg.steps
                break
        elif bar is not None:
            bar.update(step, None, None)
        every = cfg.checkpoint_every or cfg.eval_every
        if run_path is not None and step < cfg.steps and step % every == 0:
            state["wall_time"] = time.perf_counter() - started
            state["pending_losses"] = losses
            save_checkpoint(run_path / CHECKPOINT, model, optimizer, state)
    if state["metrics"] is None:  # zero steps left but no evaluation yet
        state["metrics"] = _metrics_json(run_eval())
    if bar is not None:
        bar.close()
    state["done"] = True
    state["wall_time"] = time.perf_counter() - started
    if run_path is not None:
        save_checkpoint(run_path / FINAL, model, None, state)
        (run_path / CHECKPOINT).unlink(missing_ok=True)
    return state


def run_test_sets(config: ExperimentConfig, setup) -> dict:
    """A run's fixed test sets: name (bin or split) → (batches, count); checks they fit P."""
    ev = config.eval
    eval_seed = config.seed if ev.seed is None else ev.seed
    encoder, P = setup.encoder, setup.positions
    opts, sl = config.task_options, setup.slices
    test_sets = {
        str(b): encoded_test_set(encoder, opts, b, ev.size, eval_seed, ev.batch_size, slices=sl)
        for b in setup.test_bins
    }
    for name in setup.test_splits:
        split_set = encoded_test_set(
            encoder, opts, None, ev.size, eval_seed, ev.batch_size, split=name, slices=sl
        )
        # a split equal to a bin's set (ptg: id_mid and the bin 31-40) is scored once
        same = (s for s in test_sets.values() if _same_set(s, split_set))
        test_sets[name] = next(same, split_set)
    longest = max(b.input_ids.shape[1] for batches, _ in test_sets.values() for b in batches)
    if longest > P:
        raise ValueError(
            f"task {config.task!r}: a test sequence has {longest} tokens but "
            f"max_tokens() allows {P}"
        )
    return test_sets


def _same_set(a, b) -> bool:
    """Whether two encoded test sets ``(batches, count)`` hold the same examples."""
    (xs, n), (ys, m) = a, b
    return (
        n == m
        and len(xs) == len(ys)
        and all(
            x.input_ids.shape == y.input_ids.shape
            and torch.equal(x.input_ids, y.input_ids)
            and torch.equal(x.targets, y.targets)
            and torch.equal(x.scored, y.scored)
            for x, y in zip(xs, ys)
        )
    )


class _ProgressBar:
    """A rich progress bar on stderr: step, loss and in-distribution accuracy."""

    def __init__(self, config: ExperimentConfig, total: int, start: int) -> None:
        self.progress = start_progress()
        label = f"train {config.task} {config.variant} seed {config.seed}"
        self.task = self.progress.add_task(label, total=total, completed=start, info="")

    def update(self, step: int, loss: float | None, accuracy: float | None) -> None:
        """Advance to ``step``; show loss and in-distribution accuracy after an evaluation."""
        fields = {}
        if loss is not None:
            fields["info"] = f"loss {loss:.4f}  ID acc {accuracy:.3f}"
        self.progress.update(self.task, completed=step, **fields)

    def close(self) -> None:
        """Stop drawing the bar."""
        self.progress.stop()
