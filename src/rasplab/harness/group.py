"""Train a group of runs at once: :func:`train_group` (K configs → K :class:`RunResult`).

The steps: start each run as :func:`~rasplab.harness.train.train` does (set-up, seeded
model, AdamW, restore its own checkpoint), stack the unfinished runs' weights and optimizer
state (:class:`~rasplab.harness.stacked.StackedRuns`), then loop: draw each run's own batch
from its own seed and step (the same draw a separate run makes), lay the K batches out on
one token axis (:func:`~rasplab.harness.stacked.token_layout`), run one stacked forward and backward pass, clip and step each run with its own
learning rate and schedule, and for each run at its own evaluation, checkpoint and stopping
steps copy its weights back into its own model and do what the separate trainer does there
(evaluate on its test sets, write its checkpoint in its run folder, stop once it fits).
A finished run leaves the stack; the others go on.

A run's checkpoint is the separate trainer's format, so a run started in a group can resume
alone and the other way round; a group killed at any moment loses at most each run's steps
since its last checkpoint. Wall time in a run's result is the group's time while the run was
in it (shared with the other runs).

Runs can share a group when :func:`group_key` agrees: same stackable model config and
parameter shapes (vocabulary, outputs, position table), batch size, random offsets or not,
threads, device CPU, target kind (classes or regression) and no packing.
:func:`train_group` refuses anything else. Each run keeps its own learning rate, schedule,
optimizer groups (``train.param_groups``, e.g. μP's), clipping and stopping rules (early
stopping at 100%, or ``train.stop_loss`` on its training loss).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import torch

from rasplab.errors import RasplabError
from rasplab.harness.checkpoint import save_checkpoint
from rasplab.harness.config import ExperimentConfig
from rasplab.harness.encoding import Encoder
from rasplab.harness.evaluate import evaluate
from rasplab.harness.regularizer import penalties
from rasplab.harness.setup import (
    CHECKPOINT,
    FINAL,
    build_task,
    max_positions,
    resolve_device,
    run_bins,
    run_splits,
    run_threads,
)
from rasplab.harness.stacked import (
    StackedRuns,
    per_run,
    scored_tokens,
    stackable,
    stacked_loss,
    token_layout,
)
from rasplab.harness.train import (
    RunResult,
    _metrics_json,
    finish_result,
    lr_factor,
    run_test_sets,
    start_run,
    use_threads,
)
from rasplab.seeding import generator


def group_key(config: ExperimentConfig) -> tuple | None:
    """What runs must share to train in one group, or None when the run trains alone.

    Builds the task (cheap) to learn its vocabulary, outputs and position-table size.

    >>> from rasplab.harness.config import experiment_from_dict
    >>> a = experiment_from_dict({"task": "tomita2", "seed": 0})
    >>> b = experiment_from_dict({"task": "tomita3", "seed": 1, "train": {"lr": 0.01}})
    >>> group_key(a) == group_key(b)
    True
    >>> group_key(experiment_from_dict({"task": "tomita1", "model": {"pe": "rope"}})) is None
    True
    """
    cfg = config.train
    if not stackable(config.model) or cfg.pack_tokens or resolve_device(cfg.device).type != "cpu":
        return None
    task = build_task(config)
    encoder = Encoder(task)
    train_bin, test_bins = run_bins(config, task)
    positions = max_positions(task, [train_bin, *test_bins], run_splits(config, task, test_bins))
    offsets = config.model.pe == "ape" if cfg.random_offset is None else cfg.random_offset
    return (config.model, encoder.vocab_size, encoder.num_outputs, positions, cfg.batch_size,
            bool(offsets), cfg.threads, task.target_kind == "regression")  # fmt: skip


def plan_groups(experiments: list[ExperimentConfig], batch_runs: int) -> list[list]:
    """Split runs into groups of at most ``batch_runs`` that share a :func:`group_key`, in
    the order they come; a run with no key (or ``batch_runs`` 1) is a group of its own
    (and trains alone, as without groups). ``batch_runs`` is at least 1 (the sweep's options
    check it: :func:`~rasplab.harness.validation.check_batch_runs`).

    >>> from rasplab.harness.config import experiment_from_dict
    >>> runs = [experiment_from_dict({"task": t, "seed": s, "model": {"pe": pe}})
    ...         for t, s, pe in [("tomita2", 0, "ape"), ("tomita2", 0, "rope"),
    ...                          ("tomita3", 1, "ape"), ("tomita2", 2, "ape")]]
    >>> [[(c.task, c.seed, c.model.pe) for c in g] for g in plan_groups(runs, 2)]
    [[('tomita2', 0, 'ape'), ('tomita3', 1, 'ape')], [('tomita2', 0, 'rope')], [('tomita2', 2, 'ape')]]
    """
    open_groups: dict = {}
    groups: list[list] = []
    for config in experiments:
        key = group_key(config) if batch_runs > 1 else None
        group = open_groups.get(key) if key is not None else None
        if group is None or len(group) >= batch_runs:
            group = []
            groups.append(group)
            if key is not None:
                open_groups[key] = group
        group.append(config)
    return groups


class _Member:
    """One run of a group: its config, set-up, optimizer, trainer state and test sets."""

    def __init__(self, config: ExperimentConfig, run_dir, resume: bool) -> None:
        self.config = config
        self.setup, self.optimizer, self.state, self.run_path = start_run(config, run_dir, resume)
        self.test_sets = None if self.state["done"] else run_test_sets(config, self.setup)
        self.losses: list[float] = list(self.state.get("pending_losses", []))
        self.joined = time.perf_counter() - self.state["wall_time"]

    def batch(self):
        """This run's training batch of its current step (the separate trainer's draw)."""
        cfg, setup = self.config.train, self.setup
        rng = generator(self.config.seed, "harness", "train", self.state["step"])
        P = setup.positions if setup.offsets else None
        return setup.encoder.train_batch(rng, setup.train_bin, cfg.batch_size, P, 0)

    def draw_key(self) -> tuple:
        """What this step's batch depends on: runs of a group with equal keys (e.g. two
        variants of one task and seed) draw the same batch, so it is drawn once."""
        c, setup = self.config, self.setup
        options = json.dumps(c.task_options, sort_keys=True, default=str)
        P = setup.positions if setup.offsets else None
        return (c.task, options, c.seed, self.state["step"], str(setup.train_bin),
                c.train.batch_size, P)  # fmt: skip

    def _metrics(self) -> dict:
        """Metrics of the run's model (weights copied in) on its test sets, as train() has them."""
        ev, setup = self.config.eval, self.setup
        return evaluate(setup.model, setup.encoder, self.test_sets, ev.decoding, ev.tolerance, True)

    def evaluate(self) -> bool:
        """Evaluate, record the curve point; True when the run should stop early."""
        state, setup = self.state, self.setup
        metrics = self._metrics()
        state["metrics"] = _metrics_json(metrics)
        state["curves"].append(
            {
                "step": state["step"],
                "loss": sum(self.losses) / len(self.losses),
                "bins": state["metrics"]["bins"],
            }
        )
        self.losses = []
        fitted = all(metrics[b].accuracy == 1.0 for b in setup.id_bins)
        if self.config.train.early_stop and fitted:
            state["stopped_early"] = state["step"] < self.config.train.steps
            return True
        return False

    def checkpoint(self) -> None:
        """Write this run's resumable checkpoint (weights already copied into its model)."""
        self.state["wall_time"] = time.perf_counter() - self.joined
        self.state["pending_losses"] = self.losses
        save_checkpoint(self.run_path / CHECKPOINT, self.setup.model, self.optimizer, self.state)

    def finish(self) -> RunResult:
        """Close the run: final metrics, ``model.safetensors``, its result."""
        state = self.state
        if state["metrics"] is None:  # zero steps left but no evaluation yet
            state["metrics"] = _metrics_json(self._metrics())
        state["done"] = True
        state.pop("pending_losses", None)
        state["wall_time"] = time.perf_counter() - self.joined
        if self.run_path is not None:
            save_checkpoint(self.run_path / FINAL, self.setup.model, None, state)
            (self.run_path / CHECKPOINT).unlink(missing_ok=True)
        return finish_result(self.config, self.setup, state, self.run_path)


def train_group(
    configs: list[ExperimentConfig],
    run_dirs: list[str | Path | None] | None = None,
    resume: bool = True,
    on_finish: Callable[[int, RunResult], None] | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> list[RunResult]:
    """Train ``configs`` as one stacked group; results in the order of ``configs``.

    ``on_finish(i, result)`` is called as soon as run ``i`` has finished (the others may
    still be training), e.g. to store its result at once. ``on_step(i, step, loss)`` receives
    run ``i``'s training loss of each step, as :func:`~rasplab.harness.train.train`'s
    ``on_step`` does for a run alone. The group computes on its runs'
    ``train.threads`` (one value: they share a :func:`group_key`), by default on every
    available core (:func:`~rasplab.harness.setup.run_threads`).
    """
    if not configs:
        return []
    keys = {group_key(c) for c in configs}
    if None in keys or len(keys) > 1:
        raise RasplabError(
            "runs of one group must share a stackable model config, vocabulary, outputs, "
            "position table and batch size; train the others separately"
        )
    run_dirs = run_dirs or [None] * len(configs)
    members = [_Member(c, d, resume) for c, d in zip(configs, run_dirs)]
    results: dict[int, RunResult] = {}

    def done(i: int, result: RunResult) -> None:
        results[i] = result
        if on_finish is not None:
            on_finish(i, result)

    active = [i for i, m in enumerate(members) if not m.state["done"]]
    for i, m in enumerate(members):
        if m.state["done"]:  # finished before: its stored result, as train() gives it
            done(i, finish_result(m.config, m.setup, m.state, m.run_path))
    if active:
        threads = use_threads(run_threads(configs[0].train))
        for i in active:
            members[i].state["threads"] = threads
        _loop([members[i] for i in active], done, active, on_step)
    return [results[i] for i in range(len(configs))]


def _loop(members: list[_Member], done, index: list[int], on_step=None) -> None:
    """Train ``members`` (result slots ``index``) stacked until every one has finished;
    ``done(slot, result)`` receives each result."""
    stack = StackedRuns(
        [m.setup.model for m in members], [m.config.train.param_groups for m in members]
    )
    for k, m in enumerate(members):
        stack.load_run(k, m.setup.model, m.optimizer)
    cfgs = [m.config.train for m in members]
    while members:
        drawn: dict = {}  # one draw per distinct batch (see _Member.draw_key)
        for m in members:
            key = m.draw_key()
            if key not in drawn:
                drawn[key] = m.batch()
        batches = [drawn[m.draw_key()] for m in members]
        layout = token_layout(batches, [m.setup.encoder.pad_id for m in members])
        lr = per_run([c.lr * lr_factor(m.state["step"], c) for c, m in zip(cfgs, members)])
        params = stack.params  # one view of the flat weights for the forward and the penalty
        picked = scored_tokens(layout)  # the last block computes only where a loss reads it
        losses = stacked_loss(stack.forward(layout, params, picked), layout, picked)
        total = losses + _penalties(params, stack.config, cfgs)
        stack.zero_grad()
        total.sum().backward()
        stack.clip(per_run([c.grad_clip for c in cfgs]))
        stack.step(
            lr,
            per_run([c.weight_decay for c in cfgs]),
            per_run([c.beta1 for c in cfgs]),
            per_run([c.beta2 for c in cfgs]),
        )
        keep = []
        for k, (m, cfg, loss) in enumerate(zip(members, cfgs, total.tolist())):
            m.losses.append(loss)
            step = m.state["step"] = m.state["step"] + 1
            if on_step is not None:
                on_step(index[k], step, loss)
            if not math.isfinite(loss):  # as the separate trainer: ``diverged``, never ``done``
                m.state["diverged"] = True
                stack.store_run(k, m.setup.model)
                m.state["metrics"] = _metrics_json(m._metrics())
                done(index[k], m.finish())
                continue
            stop = step >= cfg.steps
            reached = loss < cfg.stop_loss  # stop_loss 0 (off) is never reached
            if reached:
                m.state["loss_reached_step"] = step
            if step % cfg.eval_every == 0 or stop or reached:
                stack.store_run(k, m.setup.model)
                stop = m.evaluate() or stop
                if reached:
                    m.state["stopped_early"] = step < cfg.steps
                    stop = True
            every = cfg.checkpoint_every or cfg.eval_every
            if stop:
                stack.store_run(k, m.setup.model)
                done(index[k], m.finish())
                continue
            if m.run_path is not None and step % every == 0:
                stack.store_run(k, m.setup.model, m.optimizer)
                m.checkpoint()
            keep.append(k)
        if len(keep) < len(members):
            stack.keep(keep)
            members = [members[k] for k in keep]
            index = [index[k] for k in keep]
            cfgs = [cfgs[k] for k in keep]


def _penalties(params: dict, config, cfgs: list) -> torch.Tensor | float:
    """Seed 003's regularizer per run, [R] (0.0 when no run uses it); ``params`` are
    :attr:`StackedRuns.params`."""
    pe = per_run([c.pe_penalty for c in cfgs])
    wp = per_run([c.weight_penalty for c in cfgs])
    if not (bool(pe.any()) or bool(wp.any())):
        return 0.0
    return penalties(params, config, pe, wp)
