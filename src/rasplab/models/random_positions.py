"""Randomized positional encodings (Ruoss et al. 2023): positions drawn, not counted.

A sequence of T tokens reads the absolute encodings of T positions drawn as a sorted uniform
random subset of ``0 .. L-1``, with ``L`` (:data:`RANDOM_RANGE`, at least the model's
``max_positions``) much longer than any training sequence, so that the positions a long test
sequence needs were all seen in training. The subset is drawn afresh at every forward pass,
in training one subset per batch (padding rows use its first positions), from torch's global
generator (which the harness seeds at every step, so a resumed run draws the same positions);
in evaluation one subset per sequence, of its own real length n, from a generator seeded with
:data:`EVAL_SEED` and n (the same positions at every evaluation of the same length, whatever
padding the batch carries, so a sequence's outputs do not depend on its batch). Two tables are randomized:

* ``random_sin``: the sinusoidal table of :class:`~rasplab.models.positional.Sinusoidal`;
* ``random_ape``: a learned table of ``L`` rows (initialised like the token embeddings).

>>> from rasplab.models.config import ModelConfig
>>> pe = RandomSinusoidal(ModelConfig(pe="random_sin", width=8, heads=2), max_positions=16)
>>> pos = pe.positions(5, torch.Generator().manual_seed(0))
>>> pos.tolist() == sorted(set(pos.tolist())), 0 <= min(pos.tolist()), max(pos.tolist()) < 2048
(True, True, True)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn

from rasplab.errors import RasplabError
from rasplab.models.positional import INIT_STD, PositionalEncoding, sinusoidal_table

if TYPE_CHECKING:
    from rasplab.models.config import ModelConfig

RANDOM_RANGE = 2048
"""L, the range the positions are drawn from (Ruoss et al.'s published example uses 2048 for
test lengths up to 500); a model whose ``max_positions`` is larger uses that instead."""
EVAL_SEED = 0


class RandomizedAbsolute(PositionalEncoding):
    """The shared draw: T sorted distinct positions out of ``0 .. L-1`` per forward pass."""

    def __init__(self, config: ModelConfig, max_positions: int) -> None:
        super().__init__(config, max_positions)
        self.range = max(RANDOM_RANGE, max_positions)

    def positions(self, length: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Long[T]: a uniform random subset of ``0 .. L-1`` of size ``length``, increasing."""
        if length > self.range:
            raise RasplabError(
                f"randomized positions are drawn from {self.range} positions, but a sequence "
                f"has {length} tokens; use inputs of at most {self.range} tokens"
            )
        keys = torch.rand(self.range, generator=generator, dtype=torch.float64)
        return keys.argsort()[:length].sort().values

    def draw(self, length: int) -> torch.Tensor:
        """This forward pass's positions: global generator in training, seeded in eval."""
        if self.training:
            return self.positions(length)
        seeded = torch.Generator().manual_seed(EVAL_SEED * 1_000_003 + length)
        return self.positions(length, seeded)

    def table_rows(self, positions: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        """Vectors [T, D] of the given positions: rows of the fixed ``table`` buffer (a
        learned table overrides this)."""
        return self.table[positions].to(like.device, like.dtype)

    def embed(self, like, offset, pad_mask=None, reference=False):
        """The vectors of :meth:`draw`'s positions (offsets are not used): [1, T, D] in training
        or without padding; in evaluation with padding [B, T, D], each sequence's real tokens
        reading the positions drawn for its own real length (padding reads position 0)."""
        length = like.shape[1]
        if self.training or pad_mask is None:
            return self.table_rows(self.draw(length).to(like.device), like).unsqueeze(0)
        positions = torch.zeros(pad_mask.shape, dtype=torch.long)
        drawn: dict[int, torch.Tensor] = {}
        for row, real in enumerate(pad_mask.cpu()):
            n = int(real.sum())
            if n not in drawn:
                drawn[n] = self.draw(n)
            positions[row, real] = drawn[n]
        return self.table_rows(positions.to(like.device), like)


class RandomSinusoidal(RandomizedAbsolute):
    """``random_sin``: sinusoidal vectors of randomized positions, scaled like ``sinusoidal``."""

    def __init__(self, config: ModelConfig, max_positions: int) -> None:
        super().__init__(config, max_positions)
        table = sinusoidal_table(self.range, self.width)[0] * (INIT_STD * math.sqrt(2.0))
        self.register_buffer("table", table.to(torch.float32), persistent=False)


class RandomLearned(RandomizedAbsolute):
    """``random_ape``: a learned table of L rows read at randomized positions."""

    def __init__(self, config: ModelConfig, max_positions: int) -> None:
        super().__init__(config, max_positions)
        self.table = nn.Embedding(self.range, config.width)

    def table_rows(self, positions, like):
        """Rows of the learned table."""
        return self.table(positions)
