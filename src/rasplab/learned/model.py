"""The discrete transformer: a residual stream of categorical variables, heads that choose
what they read, lookup-table MLPs (Friedman, Wettig & Chen 2023, "Learning Transformer
Programs", §3).

Every variable holds one of ``C`` values (``width``) at each position, as a one-hot vector.
The stream starts with ``tokens`` and ``positions`` (position ``i`` reads as ``min(i, C-1)``,
so any length runs); each layer appends one variable per head, then one per MLP:

* a **categorical head** chooses a query, a key and a value variable and learns a predicate
  (a boolean C x C table between query and key values); position i reads the value at the
  *leftmost* position j whose key matches its query, and position 0 (``<bos>``) when none
  matches;
* a **counting head** chooses query, key and value variables, a predicate and a set of value
  values; position i reads how many positions j >= 1 match its query and hold a value in the
  set, capped at C-1 (RASP's selector width);
* an **MLP** reads two variables and writes ``table[a, b]`` (a learned C x C table of values);
* the **readout** is an MLP whose table holds a class per pair of values.

Training relaxes every discrete choice: which variable to read is a Gumbel-softmax over the
variables available, predicates and value sets are relaxed Bernoulli (binary concrete)
variables, tables are softmax rows, the leftmost-match rule is a softmax over
``match - j / (2T)``, and counts are written as triangular one-hot codes. With ``hard=True``
the same module is the discretised model: argmax choices, predicates ``logit > 0``, exact
leftmost match and exact counts -- the computation the decompiled program repeats.

**Seed batching.** One module holds S independently initialised models (``seeds``), with a
leading seed dimension on every parameter; they see the same batches and Adam updates each
element on its own, so S seeds train in one pass. :meth:`DiscreteTransformer.select` cuts
out one seed as a model of its own, identical to one built with that seed alone.

Shapes: S seeds, B batch, T positions, N variables, C values, H heads, M MLPs, K classes.

>>> import torch
>>> net = DiscreteTransformer(Shape(vocab=("<pad>", "<bos>", "a", "b"), classes=("1", "2"),
...     width=4, layers=1, cat_heads=1, count_heads=1, mlps=1), seeds=(0, 1))
>>> net.num_variables
5
>>> ids = torch.tensor([[1, 2, 3, 2]]); mask = torch.ones(1, 4, dtype=torch.bool)
>>> tuple(net(ids, mask, tau=1.0, hard=True).shape)
(2, 1, 4, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from rasplab.errors import RasplabError


@dataclass(frozen=True)
class Shape:
    """What a model is built from: the token vocabulary (id = index), the output classes,
    the width C (values per variable) and per layer the counts of each component."""

    vocab: tuple[str, ...]
    classes: tuple[str, ...]
    width: int
    layers: int
    cat_heads: int
    count_heads: int
    mlps: int

    def __post_init__(self) -> None:
        if len(self.vocab) > self.width:
            raise RasplabError(
                f"width {self.width} is smaller than the vocabulary ({len(self.vocab)} tokens)"
            )

    def variables_before(self, layer: int, mlp: bool = False) -> int:
        """How many variables exist when ``layer``'s heads (or, with ``mlp``, MLPs) read."""
        per_layer = self.cat_heads + self.count_heads + self.mlps
        n = 2 + layer * per_layer
        return n + (self.cat_heads + self.count_heads if mlp else 0)

    @property
    def num_variables(self) -> int:
        """Variables in the finished stream (the readout reads among all of them)."""
        return self.variables_before(self.layers)


def gumbel(shape: tuple[int, ...], gen: torch.Generator | None) -> torch.Tensor:
    """Standard Gumbel noise."""
    u = torch.rand(shape, generator=gen).clamp(1e-9, 1 - 1e-9)
    return -torch.log(-torch.log(u))


def choose(logits: torch.Tensor, tau: float, hard: bool, gen) -> torch.Tensor:
    """Rows of ``logits`` [R, N] as one-hot (hard: argmax) or Gumbel-softmax weights."""
    if hard:
        return nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    return torch.softmax((logits + gumbel(tuple(logits.shape), gen)) / tau, dim=-1)


def relaxed_bool(logits: torch.Tensor, tau: float, hard: bool, gen) -> torch.Tensor:
    """Each entry true when its logit is > 0 (hard) or a binary-concrete relaxation."""
    if hard:
        return (logits > 0).to(logits.dtype)
    u = torch.rand(tuple(logits.shape), generator=gen).clamp(1e-9, 1 - 1e-9)
    return torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / tau)


class Heads(nn.Module):
    """``H`` heads of one kind reading among ``n`` variables of width ``C``, for each seed
    (one generator per seed draws its initial values)."""

    def __init__(self, kind: str, n: int, count: int, width: int, gens: list[torch.Generator]):
        super().__init__()
        self.kind, self.width = kind, width
        s = len(gens)
        self.query = nn.Parameter(torch.zeros(s, count, n))
        self.key = nn.Parameter(torch.zeros(s, count, n))
        self.value = nn.Parameter(torch.zeros(s, count, n))
        self.predicate = nn.Parameter(
            torch.stack([0.1 * torch.randn(count, width, width, generator=g) for g in gens])
        )
        self.members = nn.Parameter(
            torch.stack([0.1 * torch.randn(count, width, generator=g) for g in gens])
        )

    def draw(self, tau: float, hard: bool, gen) -> tuple[torch.Tensor, torch.Tensor, object]:
        """The relaxed (or hard) choices, drawn in a fixed order (query, key, value,
        predicate, members): read weights [S, 3H, N] (queries, then keys, then values),
        predicates [S, H, C, C] and, for counting heads, value sets [S, H, C]."""
        reads = torch.cat(
            [choose(p, tau, hard, gen) for p in (self.query, self.key, self.value)], 1
        )
        pred = relaxed_bool(self.predicate, tau, hard, gen)
        members = relaxed_bool(self.members, tau, hard, gen) if self.kind == "count" else None
        return reads, pred, members

    def attend(self, r, mask, tau: float, hard: bool, pred, members) -> torch.Tensor:
        """r [S, 3H, B, T, C] (what :meth:`draw`'s weights read: queries, keys, values),
        mask [B, T] -> new variables [S, H, B, T, C]."""
        s, h, (b, t, c) = r.shape[0], pred.shape[1], r.shape[2:]
        q, k, v = r.split(h, 1)
        qp = torch.matmul(q.reshape(s, h, b * t, c), pred).view(s * h * b, t, c)
        match = torch.bmm(qp, k.reshape(s * h * b, t, c).transpose(1, 2)).view(s, h, b, t, t)
        if self.kind == "count":
            keys = mask.clone()
            keys[:, 0] = False  # <bos> is never counted
            members = (v * members[:, :, None, None, :]).sum(-1)  # [S, H, B, T]
            counts = (match * (members * keys)[..., None, :]).sum(-1).clamp(max=self.width - 1)
            if hard:
                return nn.functional.one_hot(counts.round().long(), self.width).to(r.dtype)
            levels = torch.arange(self.width, dtype=r.dtype)
            return torch.relu(1 - (counts[..., None] - levels).abs())
        order = torch.arange(t, dtype=r.dtype) / (2 * t)
        score = (match - order).masked_fill(~mask[None, None, :, None, :], float("-inf"))
        if hard:
            pick = score.argmax(-1)  # leftmost match, else position 0
            return torch.gather(v, 3, pick[..., None].expand(-1, -1, -1, -1, self.width))
        attn = torch.softmax(score / tau, -1).view(s * h * b, t, t)
        return torch.bmm(attn, v.reshape(s * h * b, t, c)).view(s, h, b, t, c)


class Lookups(nn.Module):
    """``M`` lookup tables, each reading two of ``n`` variables and writing one of ``out``
    values (``logits=True``: the readout, which returns the table's raw row as logits)."""

    def __init__(self, n: int, count: int, width: int, out: int, gens: list[torch.Generator]):
        super().__init__()
        s = len(gens)
        self.first = nn.Parameter(torch.zeros(s, count, n))
        self.second = nn.Parameter(torch.zeros(s, count, n))
        self.table = nn.Parameter(
            torch.stack([torch.randn(count, width, width, out, generator=g) for g in gens])
        )

    def draw(self, tau: float, hard: bool, gen) -> torch.Tensor:
        """Read weights [S, 2M, N]: the first inputs, then the second (drawn in that order)."""
        return torch.cat(
            [choose(self.first, tau, hard, gen), choose(self.second, tau, hard, gen)], 1
        )

    def lookup(self, r, tau: float, hard: bool, logits: bool = False) -> torch.Tensor:
        """r [S, 2M, B, T, C] (what :meth:`draw`'s weights read: first inputs, then second)
        -> [S, M, B, T, out]: the table row of each pair, weighted by how much each pair
        (a, b) is read."""
        s, m, c = self.table.shape[0], self.table.shape[1], self.table.shape[2]
        if logits:
            table = self.table
        elif hard:
            table = nn.functional.one_hot(self.table.argmax(-1), self.table.shape[-1])
            table = table.to(r.dtype)
        else:
            table = torch.softmax(self.table / tau, -1)
        first, second = r.view(s, 2 * m, -1, c).split(m, 1)  # [S, M, B*T, C] each
        pairs = first[..., :, None] * second[..., None, :]  # [S, M, B*T, C, C]
        out = torch.matmul(pairs.flatten(3), table.flatten(2, 3))
        return out.view(s, m, *r.shape[2:4], -1)


def read(blocks: list[torch.Tensor], weights: torch.Tensor) -> torch.Tensor:
    """Weighted sums of variables: ``blocks`` [S, n_i, B, T, C] hold the stream's variables
    in order (the first block may have a seed dimension of 1), ``weights`` [S, R, N] ->
    [S, R, B, T, C]. One matrix product per block; the stream is never copied."""
    s = weights.shape[0]
    out, lo = None, 0
    for block in blocks:
        n = block.shape[1]
        w = weights[:, :, lo : lo + n]  # [S, R, n]
        flat = block.expand(s, *block.shape[1:]).flatten(2)  # [S, n, B*T*C]
        out = torch.bmm(w, flat) if out is None else torch.baddbmm(out, w, flat)
        lo += n
    return out.view(s, -1, *blocks[0].shape[2:])


class DiscreteTransformer(nn.Module):
    """S models (one per seed); ``forward(ids, mask, tau, hard)`` gives logits [S, B, T, K].

    Internally the stream is a list of blocks [S, n, B, T, C] (variables first, so reading
    variables is one matrix product per block, with no copy), one per layer's heads and MLPs;
    every Gumbel draw happens in the order of :class:`~rasplab.learned.reference.
    ReferenceTransformer`, the einsum formulation this forward is tested against."""

    def __init__(self, shape: Shape, seeds: tuple[int, ...] = (0,)):
        super().__init__()
        if not seeds:
            raise RasplabError("a DiscreteTransformer needs at least one seed")
        self.shape, self.seeds = shape, tuple(seeds)
        gen = [torch.Generator().manual_seed(s) for s in self.seeds]
        c = shape.width
        self.cat, self.count, self.mlp = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        for layer in range(shape.layers):
            n = shape.variables_before(layer)
            self.cat.append(Heads("cat", n, shape.cat_heads, c, gen))
            self.count.append(Heads("count", n, shape.count_heads, c, gen))
            self.mlp.append(Lookups(shape.variables_before(layer, mlp=True), shape.mlps, c, c, gen))
        self.readout = Lookups(shape.num_variables, 1, c, len(shape.classes), gen)

    @property
    def num_variables(self) -> int:
        """Variables in the finished stream."""
        return self.shape.num_variables

    def select(self, index: int) -> DiscreteTransformer:
        """The model of seed number ``index`` on its own (S = 1)."""
        one = DiscreteTransformer(self.shape, (self.seeds[index],))
        one.load_state_dict({k: v[index : index + 1].clone() for k, v in self.state_dict().items()})
        return one

    def blocks(self, ids, mask, tau: float = 1.0, hard: bool = True, gen=None) -> list:
        """The residual stream as blocks [S, n, B, T, C] (the first, tokens and positions,
        with S = 1; then per layer its heads and its MLPs): see :meth:`stream`."""
        c = self.shape.width
        t = ids.shape[1]
        pos = torch.arange(t).clamp(max=c - 1).expand_as(ids)
        onehot = lambda z: nn.functional.one_hot(z, c).float()  # noqa: E731
        blocks = [torch.stack([onehot(ids), onehot(pos)])[None]]  # [1, 2, B, T, C]
        on = ((0, self.shape.cat_heads), (1, self.shape.count_heads))
        for cat, count, mlp in zip(self.cat, self.count, self.mlp):
            kinds = [(cat, count)[i] for i, h in on if h]
            drawn = [m.draw(tau, hard, gen) for m in kinds]
            r = read(blocks, torch.cat([d[0] for d in drawn], 1))
            parts = r.split([d[0].shape[1] for d in drawn], 1)
            new = [m.attend(p, mask, tau, hard, *d[1:]) for m, p, d in zip(kinds, parts, drawn)]
            blocks.append(torch.cat(new, 1) if len(new) > 1 else new[0])
            if self.shape.mlps:
                blocks.append(mlp.lookup(read(blocks, mlp.draw(tau, hard, gen)), tau, hard))
        return blocks

    def stream(self, ids, mask, tau: float = 1.0, hard: bool = True, gen=None) -> torch.Tensor:
        """The residual stream [S, B, T, N, C] for token ids [B, T] and mask [B, T]."""
        blocks = self.blocks(ids, mask, tau, hard, gen)
        blocks[0] = blocks[0].expand(len(self.seeds), *blocks[0].shape[1:])
        return torch.cat(blocks, 1).permute(0, 2, 3, 1, 4)

    def forward(self, ids, mask, tau: float = 1.0, hard: bool = False, gen=None):
        """Class logits [S, B, T, K] (soft, Gumbel-relaxed; or the discretised model)."""
        blocks = self.blocks(ids, mask, tau, hard, gen)
        r = read(blocks, self.readout.draw(tau, hard, gen))
        return self.readout.lookup(r, tau, hard, logits=True)[:, 0]  # [S, B, T, K]
