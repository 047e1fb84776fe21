"""Encode task examples as padded tensors: input ids, padding mask, targets at scored positions.

One encoding for every target kind (``task.target_kind``):

* ``answer``: next-token classification over ``task.classes`` at the scored positions only
  (the ANSWER tokens and the final ``<eos>``), teacher forced;
* ``labels`` / ``next_set``: per-position classification over ``task.classes`` (a next-symbol
  set is one atomic class) at the scored positions;
* ``regression``: one float output per position, scored where the target is not ``None``.

Padding (right) and ``None`` targets are never scored (``scored`` is False there).

Training batches either hold one example per row or, with ``pack_tokens`` (``train.pack_tokens``),
rows packed from several examples by the task's ``pack`` (see :func:`packed_examples`).
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import torch

from rasplab.bins import Bin

IGNORE = -100
PAD = "<pad>"


@dataclass
class Batch:
    """A padded batch: ``input_ids``/``pad_mask``/``targets``/``scored`` are [B, T]; a test
    batch may carry ``slices``, per slice name the examples' values (``Task.slice_value``)."""

    input_ids: torch.Tensor  # [B, T] long
    pad_mask: torch.Tensor  # [B, T] bool, True = real token
    targets: torch.Tensor  # [B, T] long class ids (IGNORE where unscored) or float
    scored: torch.Tensor  # [B, T] bool, True = position is scored
    offsets: torch.Tensor | None  # [B] long position offsets (APE training) or None
    slices: dict | None = None  # slice name -> [B] long values (CPU), or None

    @classmethod
    def of_arrays(cls, ids, mask, targets, scored, offsets=None) -> Batch:
        """A batch of NumPy arrays (shared, not copied) and optional offsets."""
        return cls(*(torch.from_numpy(a) for a in (ids, mask, targets, scored)), offsets)

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    def to(self, device) -> Batch:
        """The same batch on ``device`` (itself when already there)."""
        if self.input_ids.device == torch.device(device):
            return self
        move = lambda t: None if t is None else t.to(device, non_blocking=True)  # noqa: E731
        return Batch(
            move(self.input_ids),
            move(self.pad_mask),
            move(self.targets),
            move(self.scored),
            move(self.offsets),
            self.slices,
        )


class Encoder:
    """Maps a task's tokens and targets to ids; builds training and test batches."""

    def __init__(self, task) -> None:
        self.task = task
        self.kind = task.target_kind
        vocab = list(task.vocab)
        if PAD not in vocab:
            vocab.append(PAD)
        self.tokens = tuple(vocab)
        self.token_ids = {tok: i for i, tok in enumerate(self.tokens)}
        self.pad_id = self.token_ids[PAD]
        self.vocab_size = len(self.tokens)
        self.classes = tuple(task.classes) if self.kind != "regression" else ()
        self.class_ids = {c: i for i, c in enumerate(self.classes)}
        self.num_outputs = 1 if self.kind == "regression" else len(self.classes)
        # a regression task drawing whole batches as arrays (seed 004's, ``tasks/bounds.py``),
        # with tokens only (vocabulary index = token id) and the base class's APE offsets
        from rasplab.tasks.base import Task

        self._arrays = (
            self.kind == "regression"
            and hasattr(task, "sample_arrays")
            and tuple(self.tokens[: len(task.vocab)]) == tuple(task.vocab)
            and type(task).sample_offset is Task.sample_offset
            and type(task).offset_range is Task.offset_range
        )
        # a classification task drawing whole batches as arrays (``sample_label_arrays``, the
        # regular languages), with the base class's length draws and APE offsets
        self._label_arrays = (
            self.kind in ("next_set", "labels")
            and hasattr(task, "sample_label_arrays")
            and type(task).sample_bin is Task.sample_bin
            and type(task).sample_offset is Task.sample_offset
            and type(task).offset_range is Task.offset_range
            and self.classes == tuple(task.classes)
        )
        if self.kind != "regression" and not self.classes:
            raise ValueError(f"task {task.name!r} ({self.kind}) declares no output classes")

    def class_input_ids(self) -> torch.Tensor:
        """For answer tasks: the input id of each output class (to feed predictions back)."""
        missing = [c for c in self.classes if c not in self.token_ids]
        if missing:
            raise ValueError(f"task {self.task.name!r}: classes {missing} are not input tokens")
        return torch.tensor([self.token_ids[c] for c in self.classes], dtype=torch.long)

    def encode(self, examples, offsets=None) -> Batch:
        """Pad ``examples`` into one :class:`Batch` (``offsets``: per-example position offsets)."""
        B = len(examples)
        T = max(len(ex.tokens) for ex in examples)
        ids = np.full((B, T), self.pad_id, dtype=np.int64)
        mask = np.zeros((B, T), dtype=bool)
        scored = np.zeros((B, T), dtype=bool)
        regression = self.kind == "regression"
        targets = np.zeros((B, T), dtype=np.float32) if regression else np.full((B, T), IGNORE)
        for b, ex in enumerate(examples):
            n = len(ex.tokens)
            try:
                ids[b, :n] = [self.token_ids[tok] for tok in ex.tokens]
            except KeyError as err:
                raise ValueError(
                    f"task {self.task.name!r}: token {err} is not in its vocab"
                ) from err
            mask[b, :n] = True
            for t, y in enumerate(ex.targets):
                if y is None:
                    continue
                scored[b, t] = True
                if regression:
                    targets[b, t] = float(y)
                else:
                    try:
                        targets[b, t] = self.class_ids[y]
                    except KeyError as err:
                        raise ValueError(
                            f"task {self.task.name!r}: target {y!r} is not one of its classes"
                        ) from err
        off = None if offsets is None else torch.as_tensor(np.asarray(offsets), dtype=torch.long)
        return Batch.of_arrays(ids, mask, targets, scored, off)

    def train_batch(
        self,
        rng: np.random.Generator,
        bin: Bin,
        size: int,
        max_positions: int | None,
        pack_tokens: int = 0,
    ) -> Batch:
        """``size`` fresh examples of ``bin`` (``Task.sample_bin``: for most tasks the length
        uniform over ``bin``); with ``max_positions`` each row gets a random position offset
        ``o`` uniform in ``[0, P - len]`` (APE training; multiples of ``task.offset_step``).

        With ``pack_tokens`` > 0 each of the ``size`` rows is a packed sequence of at most
        ``pack_tokens`` tokens (:func:`packed_examples`), attended causally as one sequence.
        """
        if pack_tokens:
            examples = packed_examples(self.task, rng, bin, size, pack_tokens)
        elif self._arrays:
            return self._array_batch(rng, bin, size, max_positions)
        elif self._label_arrays:
            return self._label_batch(rng, bin, size, max_positions)
        else:
            examples = self.task.sample_bin(rng, bin, size)
        offsets = None
        if max_positions is not None:
            offsets = [
                self.task.sample_offset(rng, len(ex.tokens), max_positions) for ex in examples
            ]
        return self.encode(examples, offsets)

    def _array_batch(
        self, rng: np.random.Generator, bin: Bin, size: int, max_positions: int | None
    ) -> Batch:
        """:meth:`train_batch` of a task with ``sample_arrays``: the same draws and the same
        batch as through ``sample_many`` and :meth:`encode`, without per-example objects
        (one target, scored at each row's last token)."""
        task = self.task
        lengths, ids, y = task.sample_arrays(rng, task.draw_lengths(rng, bin, size))
        T = int(lengths.max())
        mask = np.arange(T)[None, :] < lengths[:, None]
        ids = np.where(mask, ids[:, :T], self.pad_id)
        last = np.arange(lengths.size), lengths - 1
        scored = np.zeros((lengths.size, T), dtype=bool)
        scored[last] = True
        targets = np.zeros((lengths.size, T), dtype=np.float32)
        targets[last] = y.astype(np.float32)
        offsets = _array_offsets(task, rng, lengths, max_positions)
        return Batch.of_arrays(ids, mask, targets, scored, offsets)

    def _label_batch(
        self, rng: np.random.Generator, bin: Bin, size: int, max_positions: int | None
    ) -> Batch:
        """:meth:`train_batch` of a task with ``sample_label_arrays``: the same draws and the
        same batch as through ``sample_bin``, ``sample_offset`` and :meth:`encode`, without
        per-example objects."""
        task = self.task
        n, tokens, classes = task.sample_label_arrays(rng, task.draw_lengths(rng, bin, size))
        T = int(n.max())
        tokens, classes = tokens[:, :T], classes[:, :T]
        mask = np.arange(T)[None, :] < n[:, None]
        vocab_ids = np.array([self.token_ids[tok] for tok in task.vocab], dtype=np.int64)
        ids = np.where(mask, vocab_ids[tokens], self.pad_id)
        scored = mask & (classes >= 0)
        targets = np.where(scored, classes, IGNORE)
        offsets = _array_offsets(task, rng, n, max_positions)
        return Batch.of_arrays(ids, mask, targets, scored, offsets)


def _array_offsets(task, rng: np.random.Generator, lengths: np.ndarray, max_positions):
    """The APE offsets of rows of ``lengths`` (None without a position table): the same
    numbers as one :meth:`Task.sample_offset` per row, in order (multiples of the task's
    ``offset_step``)."""
    if max_positions is None:
        return None
    if int(lengths.max()) > max_positions:  # as sample_offset says it
        task.offset_range(int(lengths.max()), max_positions)
    step = task.offset_step
    return torch.from_numpy(step * rng.integers(0, (max_positions - lengths) // step + 1))


def packed_examples(task, rng: np.random.Generator, bin: Bin, rows: int, pack_tokens: int) -> list:
    """``rows`` packed sequences of at most ``pack_tokens`` tokens from fresh examples of ``bin``.

    Examples are drawn from ``rng`` in chunks and concatenated in order by ``task.pack``
    (greedily: a sequence is closed when the next example does not fit), until ``rows``
    sequences are closed; the sequence still open then, and any closed beyond ``rows``, are
    dropped, so a batch depends on ``rng`` alone (nothing carries over to the next step).
    Every example keeps its own ``<bos>`` and targets, so only its scored positions are scored.

    >>> from rasplab.tasks import get_task
    >>> ptg = get_task("ptg", scale="cpu")
    >>> rows = packed_examples(ptg, np.random.default_rng(0), ptg.train_bin, 4, 2048)
    >>> len(rows), all(len(r.tokens) <= 2048 for r in rows)
    (4, True)
    >>> all(r.tokens.count("<bos>") > 1 for r in rows)
    True
    """
    out: list = []
    open_row: list = []  # the sequence being filled (at most one packed example)
    drawn = tokens = 0
    while len(out) < rows:
        # the first chunk is one example per row; later ones what the rows still need, going
        # by the mean example size so far (a deterministic function of the draws)
        need = rows if not drawn else math.ceil((rows - len(out)) * pack_tokens * drawn / tokens)
        chunk = task.sample_bin(rng, bin, max(1, need))
        drawn += len(chunk)
        tokens += sum(len(ex.tokens) for ex in chunk)
        packed = task.pack([*open_row, *chunk], pack_tokens)
        out.extend(packed[:-1])
        open_row = packed[-1:]
    return out[:rows]


_TEST_CACHE: OrderedDict = OrderedDict()
_TEST_CACHE_SIZE = 64


def encoded_test_set(
    encoder: Encoder,
    options: dict,
    bin: Bin | None,
    n: int,
    seed: int,
    batch_size: int,
    split: str = "test",
    slices: tuple[str, ...] = (),
):
    """The fixed test set of ``bin`` (or named ``split``, ``bin`` None: the split's own) as
    encoded batches (sorted by length), cached per process; each batch carries the values of
    ``slices`` (``Task.slice_value``) of its examples.

    Returns ``(batches, count)``; ``count`` may be below ``n`` when the bin has fewer strings.
    """
    task = encoder.task
    key = (
        task.name,
        json.dumps(options, sort_keys=True, default=str),
        split,
        str(bin),
        n,
        seed,
        batch_size,
        encoder.tokens,
        encoder.classes,
        tuple(slices),
    )
    if key in _TEST_CACHE:
        _TEST_CACHE.move_to_end(key)
        return _TEST_CACHE[key]
    examples = sorted(task.dataset(split, bin, n, seed), key=lambda ex: len(ex.tokens))
    batches = []
    for i in range(0, len(examples), batch_size):
        chunk = examples[i : i + batch_size]
        batch = encoder.encode(chunk)
        if slices:
            batch.slices = {
                s: torch.tensor([task.slice_value(ex, s) for ex in chunk], dtype=torch.long)
                for s in slices
            }
        batches.append(batch)
    _TEST_CACHE[key] = (batches, len(examples))
    while len(_TEST_CACHE) > _TEST_CACHE_SIZE:
        _TEST_CACHE.popitem(last=False)
    return batches, len(examples)
