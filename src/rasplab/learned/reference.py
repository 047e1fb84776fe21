"""The discrete transformer's relaxed and discretised forward pass written directly from
§3 of Friedman, Wettig & Chen (2023), one einsum per formula: the second computation that
``tests/learned/test_model.py`` and ``benchmarks/bench_learned.py`` compare the fast forward
of :class:`~rasplab.learned.model.DiscreteTransformer` with (same parameters, same Gumbel
draws in the same order; the residual stream as ``[S, B, T, N, C]``, every variable read an
einsum over the whole stream). It is the forward ``rasplab learn`` used before the fast one.

>>> import torch
>>> from rasplab.learned.model import Shape
>>> shape = Shape(vocab=("<pad>", "<bos>", "a", "b"), classes=("1", "2"), width=4, layers=1,
...               cat_heads=1, count_heads=1, mlps=1)
>>> ref = ReferenceTransformer(shape, seeds=(0, 1))
>>> ids = torch.tensor([[1, 2, 3, 2]]); mask = torch.ones(1, 4, dtype=torch.bool)
>>> bool((ref(ids, mask, hard=True) == DiscreteTransformer.forward(ref, ids, mask, hard=True)).all())
True
"""

from __future__ import annotations

import torch
from torch import nn

from rasplab.learned.model import DiscreteTransformer, choose, relaxed_bool


def heads(module, x, mask, tau: float, hard: bool, gen) -> torch.Tensor:
    """One :class:`~rasplab.learned.model.Heads` module: x [S, B, T, N, C], mask [B, T]
    -> new variables [S, B, T, H, C]."""
    read = lambda p: torch.einsum("sbtnc,shn->sbhtc", x, choose(p, tau, hard, gen))  # noqa: E731
    q, k, v = read(module.query), read(module.key), read(module.value)
    pred = relaxed_bool(module.predicate, tau, hard, gen)
    match = torch.einsum("sbhic,shcd,sbhjd->sbhij", q, pred, k)  # [S, B, H, T, T]
    keys = mask[None, :, None, None, :]
    width = module.width
    if module.kind == "count":
        members = torch.einsum("sbhjc,shc->sbhj", v, relaxed_bool(module.members, tau, hard, gen))
        keys = keys.clone()
        keys[..., 0] = False
        counts = (match * members[..., None, :] * keys).sum(-1).clamp(max=width - 1)
        levels = torch.arange(width, dtype=x.dtype)
        if hard:
            out = nn.functional.one_hot(counts.round().long(), width).to(x.dtype)
        else:
            out = torch.relu(1 - (counts[..., None] - levels).abs())
    else:
        t = x.shape[2]
        order = torch.arange(t, dtype=x.dtype) / (2 * t)
        score = (match - order).masked_fill(~keys, float("-inf"))
        if hard:
            pick = score.argmax(-1)  # leftmost match, else position 0
            out = torch.gather(v, 3, pick[..., None].expand(-1, -1, -1, -1, width))
        else:
            out = torch.einsum("sbhij,sbhjc->sbhic", torch.softmax(score / tau, -1), v)
    return out.permute(0, 1, 3, 2, 4)


def lookups(module, x, tau: float, hard: bool, gen, logits: bool = False) -> torch.Tensor:
    """One :class:`~rasplab.learned.model.Lookups` module: x [S, B, T, N, C] ->
    [S, B, T, M, out]."""
    a = torch.einsum("sbtnc,smn->sbtmc", x, choose(module.first, tau, hard, gen))
    b = torch.einsum("sbtnc,smn->sbtmc", x, choose(module.second, tau, hard, gen))
    if logits:
        table = module.table
    elif hard:
        table = nn.functional.one_hot(module.table.argmax(-1), module.table.shape[-1])
        table = table.to(x.dtype)
    else:
        table = torch.softmax(module.table / tau, -1)
    return torch.einsum("sbtmc,sbtmd,smcde->sbtme", a, b, table)


class ReferenceTransformer(DiscreteTransformer):
    """A :class:`DiscreteTransformer` (same parameters and state dict) whose forward is the
    direct einsum formulation above."""

    def stream(self, ids, mask, tau: float = 1.0, hard: bool = True, gen=None) -> torch.Tensor:
        """The residual stream [S, B, T, N, C]."""
        c = self.shape.width
        t = ids.shape[1]
        pos = torch.arange(t).clamp(max=c - 1).expand_as(ids)
        onehot = lambda z: nn.functional.one_hot(z, c).float()  # noqa: E731
        x = torch.stack([onehot(ids), onehot(pos)], dim=2)
        x = x.expand(len(self.seeds), *x.shape)
        for cat, count, mlp in zip(self.cat, self.count, self.mlp):
            parts = [x]
            if self.shape.cat_heads:
                parts.append(heads(cat, x, mask, tau, hard, gen))
            if self.shape.count_heads:
                parts.append(heads(count, x, mask, tau, hard, gen))
            x = torch.cat(parts, dim=3)
            if self.shape.mlps:
                x = torch.cat([x, lookups(mlp, x, tau, hard, gen)], dim=3)
        return x

    def forward(self, ids, mask, tau: float = 1.0, hard: bool = False, gen=None):
        """Class logits [S, B, T, K]."""
        x = self.stream(ids, mask, tau, hard, gen)
        return lookups(self.readout, x, tau, hard, gen, logits=True)[..., 0, :]
