"""Evaluate a model on fixed test sets (length bins, named splits): whole-sequence accuracy.

An example is correct only if every scored position is right (argmax class; for regression,
within ``tolerance`` of the target, and the MSE is reported too). Padding and unscored
(filler) positions never count. A test set whose batches carry slice values
(``eval.slices``) is also broken down by them: :func:`tally` counts, per slice and value, the
examples and the right ones.

For answer tasks ``decoding="greedy"`` feeds the model its own predictions. For a causal
model the whole-sequence result is exactly the teacher-forced one: until the first wrong
prediction the fed-back tokens are the teacher's, and after it the example is wrong either
way. :func:`evaluate` therefore scores greedy decoding of causal models with one
teacher-forced pass, and runs the token-by-token loop (:func:`greedy_correct`, which hides
the not-yet-generated positions) only for non-causal models.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rasplab.harness.encoding import Batch, Encoder


@dataclass(frozen=True)
class BinMetrics:
    """Metrics of one test bin: accuracy, example count, MSE for regression tasks, and per
    slice and value ``(right, count)`` when the set is sliced (``eval.slices``)."""

    accuracy: float
    count: int
    mse: float | None = None
    slices: dict[str, dict[int, tuple[int, int]]] | None = None


def tally(into: dict, ok: torch.Tensor, values: dict[str, torch.Tensor]) -> None:
    """Add ``(right, count)`` per slice and value to ``into`` (slice -> value -> [right, n]).

    >>> into = {}
    >>> tally(into, torch.tensor([True, False, True]), {"ones": torch.tensor([2, 2, 5])})
    >>> into
    {'ones': {2: [1, 2], 5: [1, 1]}}
    """
    ok = ok.cpu()
    for name, vals in values.items():
        table = into.setdefault(name, {})
        for v, right in zip(vals.tolist(), ok.tolist()):
            cell = table.setdefault(v, [0, 0])
            cell[0] += int(right)
            cell[1] += 1


def sequence_correct(outputs: torch.Tensor, batch: Batch, tolerance: float = 0.0) -> torch.Tensor:
    """Bool[B]: every scored position right (classes: argmax; regression: |error| <= tol).

    >>> from rasplab.harness.encoding import Batch
    >>> logits = torch.tensor([[[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]])   # predicts 1, 0, 1
    >>> b = Batch(torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 3, dtype=torch.bool),
    ...           torch.tensor([[-100, 0, 0]]), torch.tensor([[False, True, False]]), None)
    >>> sequence_correct(logits, b).tolist()      # position 2 is wrong but not scored
    [True]
    """
    if batch.targets.dtype.is_floating_point:
        ok = (outputs[..., 0] - batch.targets).abs() <= tolerance  # [B, T]
    else:
        ok = outputs.argmax(-1) == batch.targets  # [B, T]
    return (ok | ~batch.scored).all(dim=-1)


def squared_error(outputs: torch.Tensor, batch: Batch) -> tuple[float, int]:
    """Sum of squared errors over scored positions, and their count (regression)."""
    err = (outputs[..., 0] - batch.targets)[batch.scored]
    return float((err * err).sum()), int(batch.scored.sum())


def greedy_correct(model, encoder: Encoder, batch: Batch) -> torch.Tensor:
    """Bool[B] for answer tasks with greedy decoding: each prediction is fed back as input."""
    ids = batch.input_ids.clone()  # [B, T]
    B, T = ids.shape
    device = ids.device
    feed = encoder.class_input_ids().to(device)
    positions = torch.arange(T, device=device)
    order = torch.where(batch.scored, positions, T).sort(dim=1).values  # scored positions first
    correct = torch.ones(B, dtype=torch.bool, device=device)
    rows = torch.arange(B, device=device)
    for k in range(int(batch.scored.sum(1).max())):
        if not bool(correct.any()):
            break  # every example already has a wrong prediction
        pos = order[:, k]  # [B], T where exhausted
        active = pos < T
        pos_c = pos.clamp(max=T - 1)
        visible = batch.pad_mask & (positions[None, :] <= pos_c[:, None])
        logits = model(ids, visible, None)  # [B, T, C]
        pred = logits[rows, pos_c].argmax(-1)  # [B]
        correct &= ~active | (pred == batch.targets[rows, pos_c])
        nxt = pos_c + 1
        write = active & (nxt < T)
        ids[rows[write], nxt[write]] = feed[pred[write]]
    return correct


@torch.inference_mode()
def evaluate(
    model,
    encoder: Encoder,
    test_sets: dict,
    decoding: str = "teacher_forced",
    tolerance: float = 0.05,
    causal: bool = True,
) -> dict[str, BinMetrics]:
    """Metrics per name for ``test_sets`` (bin or split name → (list of Batch, count)); a set
    given under two names (the same object) is scored once."""
    was_training = model.training
    model.eval()
    results = {}
    regression = encoder.kind == "regression"
    device = next(model.parameters(), torch.empty(0)).device
    scored: dict[int, BinMetrics] = {}
    for name, test_set in test_sets.items():
        if id(test_set) in scored:
            results[name] = scored[id(test_set)]
            continue
        batches, count = test_set
        right, sq, n_pos = 0, 0.0, 0
        sliced: dict = {}
        for batch in batches:
            batch = batch.to(device)
            if decoding == "greedy" and encoder.kind == "answer" and not causal:
                ok = greedy_correct(model, encoder, batch)
            else:
                outputs = model(batch.input_ids, batch.pad_mask, None)  # [B, T, C]
                ok = sequence_correct(outputs, batch, tolerance if regression else 0.0)
                if regression:
                    s, c = squared_error(outputs, batch)
                    sq, n_pos = sq + s, n_pos + c
            right += int(ok.sum())
            if batch.slices:
                tally(sliced, ok, batch.slices)
        accuracy = right / count if count else 0.0
        mse = (sq / n_pos if n_pos else 0.0) if regression else None
        slices = {k: {v: tuple(c) for v, c in sorted(t.items())} for k, t in sliced.items()}
        results[name] = scored[id(test_set)] = BinMetrics(
            accuracy=accuracy, count=count, mse=mse, slices=slices or None
        )
    model.train(was_training)
    return results
