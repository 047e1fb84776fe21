"""Trace supervision (ALTA Section 3, App. C.1): learn a program's MLP from its traces.

1. run the program with the interpreter on the training inputs and keep, for every layer and
   position, the state before and after the MLP (:func:`mlp_pairs`);
2. map each state to a residual vector with the compiler's layout (:func:`state_vectors`);
3. train an MLP on those pairs with an L2 loss and Gaussian noise on its inputs
   (:func:`train_mlp`);
4. put it in the compiled model in place of the compiled MLP; attention, embeddings, halting
   and the output read-out stay compiled (:func:`run_learned`), with the attention of
   ``config.attention`` (:mod:`rasplab.analysis.trace_attention`: by default the one whose
   heads, like ALTA's, do not move under small errors of the learned MLP);
5. score it on test inputs by length and by number of ones (:func:`trace_supervise`).

What is learned is ``config.mlp``:

* ``"whole"`` (the default, ALTA App. C.1: "train a MLP layer based on these pairs of input
  and output vectors"): :class:`WholeMLP` reads the whole residual vector and produces the
  whole output vector of the sub-layer (``x + net(x)``, every dimension), so position
  one-hots, numerical variables and head outputs are whatever it learned to write.
  Numerical variables enter its input and target vectors multiplied by
  ``config.numeric_scale`` (and its update is divided by it): with noise 0.1 on the inputs,
  a raw ``1/20`` cannot be told from ``1/21``; ALTA's released Sum + Modulo program for trace
  supervision multiplies its numerical variables by 1,000 for this reason;
* ``"written"`` (narrower): :class:`LearnedMLP` reads every slot of the residual and writes
  only the slots of the variables that some rule writes, as the compiled MLP's output rows do
  (a learned write to a query or key variable, even of 0.01, would move the compiled
  attention's exact score ties). Two parts stay compiled, as in ALTA's compiled MLP: a
  numerical variable with bucket centres is read as the one-hot of its nearest centre (ALTA's
  first MLP layers; with noise of 0.1 a raw ``1/(k+1)`` could not be told apart from its
  neighbours), and the head outputs are reset to undefined (zero) after the MLP.

Both are trained alike: the L2 loss between the sub-layer's output on noisy inputs and the
clean output (so the update also removes the noise: the residual connection carries it).
Training pairs are deduplicated: the set ``D`` of Appendix B.

>>> from rasplab.programs import get_program
>>> from rasplab.analysis.trace_config import TraceConfig
>>> cfg = TraceConfig(train_samples=200, test_samples=50, steps=50, mlp="written")
>>> r = trace_supervise(get_program("parity_sequential_relative"), cfg)
>>> r.pairs, sorted(r.record())
(13, ['length_gt_20', 'length_le_20', 'mlp_train_loss', 'ones_gt_20', 'seconds'])
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from rasplab.analysis.trace_attention import check_tolerant, tolerant_attention
from rasplab.analysis.trace_config import TraceConfig
from rasplab.bins import Bin
from rasplab.compiler import compile_program
from rasplab.compiler.layout import Layout, encode_value
from rasplab.compiler.model import CompiledTransformer, valid_mask
from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.program import Program
from rasplab.programs.base import LibraryProgram
from rasplab.seeding import torch_generator

_CHUNK = 500


def state_vectors(layout: Layout, values: dict[str, list]) -> np.ndarray:
    """``[T, D]`` residual vectors of one traced state (variable -> value per position).

    Ordinary variables as the embedding writes them; a head output that selected one
    position as the compiled attention writes it (categorical: ``value/2`` one-hot and mass
    ``1/2``; numerical: the mean and defined flag 1); an undefined head output as zeros.
    """
    t = len(next(iter(values.values())))
    out = np.zeros((t, layout.width))
    out[:, 0] = 1.0
    for slot in layout.slots:
        for p, v in enumerate(values[slot.name]):
            if v is None:
                continue
            if not slot.head:
                out[p, slot.start : slot.stop] = encode_value(slot, v)
            elif slot.kind == "numerical":
                out[p, slot.start], out[p, slot.flag] = float(v), 1.0
            else:
                out[p, slot.start + int(v)], out[p, slot.flag] = 0.5, 0.5
    return out


def mlp_pairs(
    program: Program, layout: Layout, batch: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(input [N, D], output [N, D])`` residual pairs of every MLP sub-layer, at
    every layer and position, when the interpreter runs ``program`` on ``batch``."""
    rows = []
    for start in range(0, len(batch), _CHUNK):
        run = interpret(program, batch[start : start + _CHUNK], trace=True)
        for tr in run.traces:
            for lt in tr.layers:
                if tr.tokens:
                    a = state_vectors(layout, lt.after_attention)
                    m = state_vectors(layout, lt.after_mlp)
                    rows.append(np.concatenate([a, m], axis=1))
    pairs = np.unique(np.concatenate(rows), axis=0)
    return pairs[:, : layout.width], pairs[:, layout.width :]


class LearnedMLP(nn.Module):
    """The trained MLP sub-layer: compiled read-out of numerical buckets, a ReLU/GELU MLP
    writing the slots of the variables the rules write, compiled reset of the head outputs."""

    def __init__(self, program: Program, layout: Layout, config: TraceConfig):
        super().__init__()
        self.width = layout.width
        copy: list[int] = []
        self.buckets: list[tuple[int, torch.Tensor, int | None]] = []  # (dim, centres, flag)
        written: list[int] = []
        targets = {rule.var for rule in program.rules}
        for slot in layout.slots:
            spec = program.all_variables[slot.name]
            if slot.kind == "numerical" and spec.values is not None:
                centres = torch.tensor(spec.possible_values(), dtype=torch.float32)
                self.buckets.append((slot.start, centres, slot.flag if slot.head else None))
                copy += [slot.flag] if slot.head else []
            else:
                copy += list(range(slot.start, slot.stop))
            if slot.name in targets:
                written += list(range(slot.start, slot.stop))
        self.register_buffer("copy", torch.tensor(copy, dtype=torch.long))
        self.register_buffer("written", torch.tensor(written, dtype=torch.long))
        self.register_buffer("scale", torch.ones(len(written)))  # written dims, unscaled
        self.heads = [i for s in layout.slots if s.head for i in range(s.start, s.stop)]
        n_in = len(copy) + sum(len(c) for _, c, _ in self.buckets)
        act = {"relu": nn.ReLU, "gelu": nn.GELU}[config.activation]
        layers: list[nn.Module] = []
        for k in range(config.hidden_layers):
            layers += [nn.Linear(n_in if k == 0 else config.hidden_size, config.hidden_size), act()]
        layers.append(nn.Linear(config.hidden_size, len(written)))
        self.net = nn.Sequential(*layers)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, F]``: the copied dims, then one-hot nearest bucket per numerical slot."""
        parts = [x[:, self.copy]]
        for dim, centres, flag in self.buckets:
            near = (x[:, dim : dim + 1] - centres[None]).abs().argmin(dim=1)
            hot = nn.functional.one_hot(near, len(centres)).to(x.dtype)
            parts.append(hot if flag is None else hot * (x[:, flag : flag + 1] > 0.5))
        return torch.cat(parts, dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The residual after the MLP sub-layer, for residual rows ``x`` ``[N, D]``."""
        out = x.clone()
        out[:, self.written] += self.net(self.features(x))
        out[:, self.heads] = 0.0
        return out


class WholeMLP(nn.Module):
    """The whole MLP sub-layer learned: ``x + net(S x) / S`` over every residual dimension,
    where ``S`` is ``config.numeric_scale`` on the value dim of each numerical variable (and
    of each numerical head output) and 1 elsewhere.

    >>> from rasplab.programs import get_program
    >>> from rasplab.compiler import compile_program
    >>> layout = compile_program(get_program("parity_sequential_relative").program()).layout
    >>> m = WholeMLP(layout, TraceConfig(hidden_layers=1, hidden_size=8))
    >>> m(torch.zeros(3, layout.width)).shape == (3, layout.width)
    True
    """

    def __init__(self, layout: Layout, config: TraceConfig):
        super().__init__()
        self.width = layout.width
        every = torch.arange(layout.width, dtype=torch.long)
        self.register_buffer("copy", every)
        self.register_buffer("written", every.clone())
        scale = torch.ones(layout.width)
        for slot in layout.slots:
            if slot.kind == "numerical":
                scale[slot.start] = config.numeric_scale
        self.register_buffer("scale", scale)
        act = {"relu": nn.ReLU, "gelu": nn.GELU}[config.activation]
        layers: list[nn.Module] = []
        for k in range(config.hidden_layers):
            n_in = layout.width if k == 0 else config.hidden_size
            layers += [nn.Linear(n_in, config.hidden_size), act()]
        layers.append(nn.Linear(config.hidden_size, layout.width))
        self.net = nn.Sequential(*layers)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, D]``: the residual itself, numerical dims scaled (nothing is read out by
        compiled parts)."""
        return x * self.scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The residual after the MLP sub-layer, for residual rows ``x`` ``[N, D]``."""
        return x + self.net(self.features(x)) / self.scale


def train_mlp(
    mlp: LearnedMLP | WholeMLP, inputs: np.ndarray, outputs: np.ndarray, config: TraceConfig
) -> float:
    """Fit ``mlp`` to the pairs: L2 between the sub-layer's output on noisy inputs and the
    clean output, on the written dims (numerical dims scaled as ``mlp`` reads them); returns
    the final mean squared error without noise, in those scaled units."""
    x = torch.tensor(inputs, dtype=torch.float32)
    target = torch.tensor(outputs - inputs, dtype=torch.float32)[:, mlp.written] * mlp.scale
    feats = mlp.features(x)
    # the noise on a written dim's input is also on the residual the MLP's update is added to:
    # the target is the clean output, so the MLP learns to remove it (robust to drift)
    copied = {int(d): i for i, d in enumerate(mlp.copy)}
    carry = torch.tensor([copied.get(int(d), -1) for d in mlp.written])
    gen = torch_generator(config.seed, "trace-supervision")
    if config.optimizer == "adafactor":
        if not hasattr(torch.optim, "Adafactor"):
            raise RasplabError("trace.optimizer adafactor needs torch >= 2.5; use adam")
        opt = torch.optim.Adafactor(mlp.parameters(), lr=config.learning_rate)
    else:
        opt = torch.optim.Adam(mlp.parameters(), lr=config.learning_rate)
    for _ in range(config.steps):
        idx = torch.randint(0, len(x), (config.batch_size,), generator=gen)
        noise = torch.randn(config.batch_size, feats.shape[1], generator=gen) * config.noise_std
        on_written = torch.where(carry >= 0, noise[:, carry.clamp(min=0)], 0.0)
        pred = mlp.net(feats[idx] + noise)
        loss = ((pred - (target[idx] - on_written)) ** 2).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return float(((mlp.net(feats) - target) ** 2).sum(dim=1).mean())


@torch.no_grad()
def run_learned(
    model: CompiledTransformer, mlp: nn.Module, batch: Sequence[Sequence[int]], max_layers: int
) -> list[list[int]]:
    """Outputs per sequence of the compiled model with ``mlp`` as its MLP sub-layer: the
    output at the first layer where the sequence halts, else after ``max_layers`` layers."""
    lengths = torch.tensor([len(s) for s in batch], dtype=torch.long)
    t = max(1, int(lengths.max()))
    tokens = torch.zeros((len(batch), t), dtype=torch.long)
    for r, s in enumerate(batch):
        tokens[r, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    x = model.embed(tokens, lengths).float()
    mask = valid_mask(lengths, t)
    final = torch.zeros_like(tokens)
    done = torch.zeros(len(batch), dtype=torch.bool)
    for _ in range(max_layers):
        x = model.attend_(x.clone())
        x = mlp(x.reshape(-1, x.shape[-1])).reshape(x.shape) * mask
        pred = model.output(x)
        if model.spec["halt"] is None:
            continue
        new = model.halted(x, lengths) & ~done
        final[new], done = pred[new], done | new
        if done.all():
            break
    final[~done] = pred[~done]
    return [final[r, : len(s)].tolist() for r, s in enumerate(batch)]


@dataclass
class TraceResult:
    """Per test example: length, number of ones, correct; the fit and its cost."""

    lengths: list[int]
    ones: list[int]
    correct: list[bool]
    split: int
    mlp_train_loss: float
    pairs: int
    seconds: float
    config: dict = field(default_factory=dict)

    def accuracy(self, which: str) -> float:
        """Accuracy on one slice: ``length_le``, ``length_gt`` or ``ones_gt`` the split."""
        key, op = which.split("_")
        values = np.array(self.lengths if key == "length" else self.ones)
        keep = values <= self.split if op == "le" else values > self.split
        return float(np.mean(np.array(self.correct)[keep])) if keep.any() else float("nan")

    def record(self) -> dict:
        """The CLI's JSON record (the keys say 20, the longest training length of ALTA)."""
        out = {f"{k}_20": self.accuracy(k) for k in ("length_le", "length_gt", "ones_gt")}
        return {**out, "mlp_train_loss": self.mlp_train_loss, "seconds": self.seconds}


def _counts(text: str) -> tuple[int, int]:
    """Length and number of ``1`` symbols of a natural input (``"1 0 1"`` or ``"101"``)."""
    bits = text.split() if " " in text else list(text)
    return len(bits), sum(b == "1" for b in bits)


def _tolerant(
    model: CompiledTransformer, entry: LibraryProgram, ids: list, max_layers: int
) -> CompiledTransformer:
    """The tolerant attention of ``model``, checked on the training inputs ``ids`` to read
    what the exact attention reads (:func:`check_tolerant`)."""
    tolerant = tolerant_attention(model)
    lengths = torch.tensor([len(s) for s in ids], dtype=torch.long)
    tokens = torch.zeros((len(ids), max(1, int(lengths.max()))), dtype=torch.long)
    for r, s in enumerate(ids):
        tokens[r, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    layers = min(max_layers, tokens.shape[1] + 2)
    check_tolerant(model, tolerant, tokens, lengths, layers, entry.name)
    return tolerant


def trace_supervise(entry: LibraryProgram, config: TraceConfig) -> TraceResult:
    """Train ``entry``'s MLP from traces and score the assembled model (module docstring)."""
    start = time.perf_counter()
    program = entry.program()
    if not program.rules:
        raise RasplabError(f"program {entry.name!r} has no MLP rules: there is no MLP to learn")
    test_bin = entry.check_lengths(config.test_lengths)
    entry.check_lengths(config.train_lengths)
    model = compile_program(program)
    train, _ = entry.inputs(config.train_lengths, config.train_samples, config.seed, "train")
    if config.attention == "tolerant":
        model = _tolerant(model, entry, [entry.encode(x) for x in train], program.max_layers)
    test, _ = entry.inputs(config.test_lengths, config.test_samples, config.seed, "test")
    inputs, outputs = mlp_pairs(program, model.layout, [entry.encode(x) for x in train])
    torch.manual_seed(int(torch_generator(config.seed, "mlp-init").initial_seed()))
    if config.mlp == "whole":
        mlp: LearnedMLP | WholeMLP = WholeMLP(model.layout, config)
    else:
        mlp = LearnedMLP(program, model.layout, config)
    loss = train_mlp(mlp, inputs, outputs, config)
    mlp.eval()
    ids = [entry.encode(x) for x in test]
    layers = min(program.max_layers, max(len(s) for s in ids) + 2)
    outs = []
    for k in range(0, len(ids), _CHUNK):
        outs += run_learned(model, mlp, ids[k : k + _CHUNK], layers)
    correct = [entry.decode(i, o) == entry.reference(x) for i, o, x in zip(ids, outs, test)]
    counts = [_counts(x) for x in test]
    return TraceResult(
        [c[0] for c in counts],
        [c[1] for c in counts],
        correct,
        Bin.parse(config.train_lengths).hi,
        loss,
        len(inputs),
        time.perf_counter() - start,
        {"program": entry.name, "test_lengths": str(test_bin), **config.to_dict()},
    )
