"""Examples of a RASP task as tensors: token ids, a mask of real positions, class targets.

>>> from rasplab.tasks import get_task
>>> task = get_task("rasp_hist")
>>> batch = encode([task.example("aba")], task.vocab, task.classes)
>>> batch.ids.tolist(), batch.targets.tolist()
([[1, 2, 3, 2]], [[-100, 1, 0, 1]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from rasplab.errors import RasplabError
from rasplab.tasks.base import Example

IGNORE = -100
"""The target id of an unscored position."""
UNKNOWN = -1
"""The target id of a label outside the model's classes (longer inputs: scored, never right)."""


@dataclass(frozen=True)
class Batch:
    """ids [B, T] (0 = ``<pad>``), mask [B, T] (real positions), targets [B, T] (class ids,
    ``IGNORE`` where unscored, ``UNKNOWN`` for a label the model has no class for)."""

    ids: torch.Tensor
    mask: torch.Tensor
    targets: torch.Tensor

    def __len__(self) -> int:
        return self.ids.shape[0]

    def rows(self, index: torch.Tensor) -> Batch:
        """The examples at ``index``, trimmed to their longest."""
        mask = self.mask[index]
        t = int(mask.sum(1).max())
        return Batch(self.ids[index, :t], mask[:, :t], self.targets[index, :t])


def encode(examples: Sequence[Example], vocab: Sequence[str], classes: Sequence[str]) -> Batch:
    """Pad ``examples`` to one batch (token and class ids by their index in ``vocab``/``classes``)."""
    token_id = {tok: i for i, tok in enumerate(vocab)}
    class_id = {c: i for i, c in enumerate(classes)}
    t = max((len(ex.tokens) for ex in examples), default=1)
    ids = torch.zeros(len(examples), t, dtype=torch.long)
    mask = torch.zeros(len(examples), t, dtype=torch.bool)
    targets = torch.full((len(examples), t), IGNORE, dtype=torch.long)
    for b, ex in enumerate(examples):
        for i, (tok, y) in enumerate(zip(ex.tokens, ex.targets)):
            if tok not in token_id:
                raise RasplabError(f"token {tok!r} is not in the vocabulary {list(vocab)}")
            ids[b, i] = token_id[tok]
            if y is not None:
                targets[b, i] = class_id.get(y, UNKNOWN)
        mask[b, : len(ex.tokens)] = True
    return Batch(ids, mask, targets)
